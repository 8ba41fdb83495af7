"""Deprecated path of :mod:`shellgate.mcp.tokens`: importing it warns, and gives that module."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.mcp.tokens")

if TYPE_CHECKING:
    from shellgate.mcp.tokens import *  # noqa: F403
