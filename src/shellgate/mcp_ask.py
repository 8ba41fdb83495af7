"""Deprecated path of :mod:`shellgate.mcp.ask`: importing it warns, and gives that module."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.mcp.ask")

if TYPE_CHECKING:
    from shellgate.mcp.ask import *  # noqa: F403
