"""Deprecated path of :mod:`shellgate.mcp.server`: importing it warns, and gives that module."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.mcp.server")

if TYPE_CHECKING:
    from shellgate.mcp.server import *  # noqa: F403
