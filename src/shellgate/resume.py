"""Deprecated path of :mod:`shellgate.tools.resume` (the decide-now, run-later steps
live with the other steps of a call): importing it warns, and gives that module.
``from shellgate import GateDecision`` is the public way."""

from typing import TYPE_CHECKING

from shellgate._moved import moved

moved(__name__, "shellgate.tools.resume")

if TYPE_CHECKING:
    from shellgate.tools.resume import *  # noqa: F403
