"""The waterfall's built-in layers and the engine that reduces their answers."""
