"""The ``sandbox`` effect: run a call unasked, but confined — or ask where it cannot be.

A verdict whose strictest answer is ``sandbox`` (some segment said so, none asks
or denies) runs on the bwrap executor in :data:`CONFINED_MODE` (or the narrower
mode the deployment configures) with the network off, whatever ``[executor]
kind`` says (docs/sandbox.md, "Sandbox decisions"). This module holds what every
door needs to honour that, in one place:

* :func:`confined_config` — the configuration a sandboxed call runs under;
* :func:`unconfined` — the same verdict as an ``ask`` naming why it cannot be
  confined where it is decided: bwrap missing or its probe failing (the gate and
  ``shellgate check`` find out by probing), or a host that runs the command
  itself (``shellgate hook``, ``gate.decide(..., host_runs=True)``). A ``sandbox``
  decision never runs unconfined: where nothing confines it, a person decides.

It never spawns anything (the probe is the executor's, in ``executors/``).
"""

from __future__ import annotations

from shellgate.config import Config
from shellgate.models import (
    MODE_ORDER,
    CallInfo,
    Decision,
    SandboxMode,
    SegmentVerdict,
    Verdict,
)

#: The mode a sandbox decision runs in: the workspace writable, the rest read-only.
CONFINED_MODE: SandboxMode = "workspace-write"
LAYER = "sandbox"


def confined_mode(configured: SandboxMode) -> SandboxMode:
    """The narrower of the deployment's mode and :data:`CONFINED_MODE`: a ``sandbox``
    decision is never looser than what an ``allow`` gets on a bwrap deployment."""
    return min(configured, CONFINED_MODE, key=MODE_ORDER.index)


def confined_config(config: Config) -> Config:
    """``config`` as a sandboxed call runs under it: bwrap, confined mode, no network."""
    sandbox = config.sandbox.model_copy(
        update={"network": False, "mode": confined_mode(config.sandbox.mode)}
    )
    executor = config.executor.model_copy(update={"kind": "bwrap"})
    return config.model_copy(update={"sandbox": sandbox, "executor": executor})


def host_runs(title: str) -> str:
    """Why a host that runs the command itself cannot confine it."""
    return (f"{title} runs the command itself, outside shellgate's sandbox (shellgate "
            "executes nothing here)")


def outside_workspace(call: CallInfo) -> str | None:
    """Why ``call`` cannot be confined in its working directory, or ``None``: the
    sandbox runs commands only inside the workspace (docs/sandbox.md)."""
    workdir, workspace = call.workdir.rstrip("/"), call.workspace.rstrip("/")
    if workdir == workspace or workdir.startswith(workspace + "/"):
        return None
    return (f"its working directory {call.workdir} is outside the workspace, where the "
            "sandbox runs nothing")


async def sandbox_problem(config: Config, call: CallInfo) -> str | None:
    """Why ``call`` could not run confined under ``config`` here, or ``None``: its
    working directory, then bwrap's own probe (run once, as the gate's first
    sandboxed call would). For ``shellgate check``; a gate keeps its probed executor."""
    why = outside_workspace(call)
    if why is not None:
        return why
    from shellgate.executors import probe_sandbox  # spawns: only when it matters

    reason = await probe_sandbox(confined_config(config))
    return None if reason is None else f"the sandbox is unavailable here ({reason})"


def unconfined(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` with every ``sandbox`` answer turned into an ``ask`` saying ``why``
    the call cannot be confined here; any other verdict unchanged.

    Each segment that would have run confined asks (so the approval question names
    it), with the rule that sandboxed it; the reason says both what the policy
    decided and why it is asked instead.
    """
    if verdict.effect != "sandbox":
        return verdict

    def ask(decision: Decision) -> Decision:
        if decision.effect != "sandbox":
            return decision
        return decision.model_copy(
            update={
                "effect": "ask",
                "layer": LAYER,
                "reason": f"{decision.reason}; it would run confined in shellgate's sandbox, "
                f"but {why}, so a person must approve it",
            }
        )

    segments = tuple(
        SegmentVerdict.model_construct(
            segment=sv.segment, decision=ask(sv.decision), decisions=sv.decisions
        )
        for sv in verdict.segments
    )
    return verdict.model_copy(update={"decision": ask(verdict.decision), "segments": segments})
