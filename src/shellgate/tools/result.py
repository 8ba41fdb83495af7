"""What a tool call returns (re-exported by :mod:`shellgate.gate`, its public home)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shellgate.models import RunResult


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns: exactly the model-facing text, and whether it is an error."""

    text: str
    is_error: bool = False
    outcome: Literal["ok", "denied", "not approved", "error", "aborted"] = "ok"
    run: RunResult | None = None  # a foreground bash call's result, for hosts (not the model)
