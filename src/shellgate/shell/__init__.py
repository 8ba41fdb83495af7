"""Command analysis: every simple command a shell string will run.

``analyse`` is the one entry point; see :mod:`shellgate.shell.analyse`.
"""

from shellgate.shell.analyse import analyse

__all__ = ["analyse"]
