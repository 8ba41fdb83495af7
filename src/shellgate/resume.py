"""Deprecated: :mod:`shellgate.tools.resume` (the decide-now, run-later steps live with
the other steps of a call). ``from shellgate import GateDecision`` is the public way."""

from __future__ import annotations

import warnings

from shellgate.tools.resume import GateDecision, approve, decide, handoff, sandbox_refusal

__all__ = ["GateDecision", "approve", "decide", "handoff", "sandbox_refusal"]

warnings.warn(
    "shellgate.resume is deprecated: import from shellgate.tools.resume "
    "(or GateDecision from shellgate)",
    DeprecationWarning,
    stacklevel=2,
)
