"""Deprecated path of :mod:`shellgate.mcp.wire`: importing it warns, and gives that module."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.mcp.wire")

if TYPE_CHECKING:
    from shellgate.mcp.wire import *  # noqa: F403
