"""Deprecated path of :mod:`shellgate.mcp.http`: importing it warns, and gives that module."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.mcp.http")

if TYPE_CHECKING:
    from shellgate.mcp.http import *  # noqa: F403
