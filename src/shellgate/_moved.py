"""Old module paths that still import: a module that moved leaves a shim behind.

The shim calls :func:`moved`, which imports the new module, warns
(:class:`DeprecationWarning`, naming the new path, attributed to the line that
imported the old one) and puts the new module in the old one's place in
:data:`sys.modules`: the old path then gives the very same objects, and
patching an attribute through it patches the module that uses it.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType


def moved(old: str, new: str) -> ModuleType:
    """Import ``new`` as ``old`` too, warning that ``old`` is deprecated."""
    module = importlib.import_module(new)
    warnings.warn(
        f"{old} is deprecated: import from {new}",
        DeprecationWarning,
        stacklevel=3,  # the importer's line: warnings skips the import system's frames
    )
    sys.modules[old] = module
    return module

