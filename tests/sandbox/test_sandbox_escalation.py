"""Denial markers and the escalation round trip, through the public gate on real bwrap.

Escalation is a one-shot rerun under a strictly wider mode that a person approves;
these tests drive it with a CallbackApprover that records what it was asked.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import CallbackApprover
from shellgate.gate import Gate
from shellgate.hookspecs import hookimpl
from shellgate.models import ApprovalAnswer, ApprovalRequest, CallInfo, Decision, Segment
from shellgate.tools.render import ESCALATION_HINT
from tests.conftest import make_config

pytestmark = pytest.mark.bwrap


class Recorder:
    """Answers escalation questions with ``answer`` and keeps them in ``asked``.

    Policy questions (no ``escalation``: the command analysis asks about any write
    operand, whatever the rules say) are approved and kept apart in ``policy``, so
    these tests see only the escalation round trip they are about.
    """

    def __init__(self, answer: str = "allow_once", message: str | None = None) -> None:
        self.answer = answer
        self.message = message
        self.asked: list[ApprovalRequest] = []
        self.policy: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if request.escalation is None:
            self.policy.append(request)
            return ApprovalAnswer(answer="allow_once", approver="recorder")
        self.asked.append(request)
        return ApprovalAnswer(answer=self.answer, message=self.message, approver="recorder")


class AllowAll:
    """A policy layer for these tests: every segment is allowed, so only escalation asks."""

    name = "allow-all"

    @hookimpl
    def shellgate_check(self, segment: Segment) -> Decision:
        return Decision(effect="allow", reason="test allows everything", layer=self.name)


def gate_for(tmp_path: Path, recorder: Recorder, **sandbox: Any) -> Gate:
    cfg = make_config(
        tmp_path, executor={"kind": "bwrap"}, sandbox={"mode": "read-only", **sandbox}
    )
    gate = Gate(cfg, approver=CallbackApprover(recorder))
    gate.decider.register(AllowAll(), name=AllowAll.name)
    return gate


def touch(target: Path, **extra: Any) -> dict[str, Any]:
    return {"command": f"touch {target}", "description": "create a marker file", **extra}


async def test_denial_shows_the_marker_and_the_hint(tmp_path: Path) -> None:
    recorder = Recorder()
    async with gate_for(tmp_path, recorder) as gate:
        target = gate.executor.workspace / "made"
        result = await gate.call("bash", touch(target))
    assert not result.is_error
    assert "Read-only file system" in result.text
    lines = result.text.split("\n")
    assert lines[-3:] == [
        "[sandbox: file access denied under read-only mode]",
        ESCALATION_HINT,
        "[exit code: 1]",
    ]
    assert recorder.asked == []  # no escalation was asked for: nobody was asked to widen
    assert not target.exists()


async def test_escalation_approved_runs_once_under_the_wider_mode(tmp_path: Path) -> None:
    recorder = Recorder("allow_once")
    async with gate_for(tmp_path, recorder) as gate:
        target = gate.executor.workspace / "made"
        first = await gate.call(
            "bash",
            touch(
                target, sandbox_permissions="workspace-write", justification="the build writes here"
            ),
        )
        assert (first.text, first.is_error) == ("(no output)", False)
        assert target.exists()
        asked = recorder.asked[0]
        assert (asked.escalation, asked.justification) == (
            "workspace-write",
            "the build writes here",
        )
        assert asked.session_scope == ()  # an escalation is never granted for a session
        target.unlink()
        again = await gate.call("bash", touch(target))  # the approval covered one call only
        assert "[sandbox: file access denied under read-only mode]" in again.text
        assert not target.exists()
    records = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    approvals = [r for r in records if r["type"] == "approval"]
    assert approvals[0]["escalation"] == "workspace-write"
    assert approvals[0]["answer"] == "allow_once"
    assert approvals[0]["justification"] == "the build writes here"
    results = [r for r in records if r["type"] == "result"]
    assert results[0]["sandbox_mode"] == "workspace-write"


async def test_escalation_rejected_runs_nothing(tmp_path: Path) -> None:
    recorder = Recorder("deny", message="not in this repo")
    async with gate_for(tmp_path, recorder) as gate:
        target = gate.executor.workspace / "made"
        result = await gate.call(
            "bash", touch(target, sandbox_permissions="full-access", justification="need it")
        )
    assert result.is_error
    # The cause after "; " names the escalation, or a policy ask merged into the same
    # question (the analysis asks about write operands); either way it was one refusal.
    assert result.text.startswith("Error: not approved (recorder: not in this repo); ")
    assert [r.escalation for r in recorder.asked] == ["full-access"]
    assert not target.exists()


@pytest.mark.parametrize("mode", ["read-only"])
async def test_escalation_must_be_strictly_wider(tmp_path: Path, mode: str) -> None:
    recorder = Recorder()
    async with gate_for(tmp_path, recorder) as gate:
        target = gate.executor.workspace / "made"
        result = await gate.call("bash", touch(target, sandbox_permissions=mode, justification="x"))
    assert result.text == (
        "Error: invalid sandbox_permissions: 'read-only' is not wider than the current 'read-only' mode"
    )
    assert recorder.asked == []
    assert not target.exists()


async def test_escalation_needs_a_justification(tmp_path: Path) -> None:
    async with gate_for(tmp_path, Recorder()) as gate:
        result = await gate.call("bash", touch(tmp_path / "x", sandbox_permissions="full-access"))
    assert (
        result.text
        == "Error: invalid justification: sandbox_permissions needs a one-sentence justification"
    )


async def test_escalation_switched_off_makes_the_denial_final(tmp_path: Path) -> None:
    recorder = Recorder()
    async with gate_for(tmp_path, recorder, escalation=False) as gate:
        target = gate.executor.workspace / "made"
        denied = await gate.call("bash", touch(target))
        retry = await gate.call(
            "bash", touch(target, sandbox_permissions="workspace-write", justification="x")
        )
    assert denied.text.endswith(
        "[sandbox: file access denied under read-only mode]\n[exit code: 1]"
    )
    assert ESCALATION_HINT not in denied.text
    assert retry.text == (
        "Error: sandbox escalation is switched off in this deployment; the sandbox denial is final"
    )
    assert recorder.asked == []
    assert not target.exists()


async def test_schema_offers_escalation_only_on_the_sandbox(tmp_path: Path) -> None:
    async with gate_for(tmp_path, Recorder()) as gate:
        props = gate.schemas("mcp")[0]["inputSchema"]["properties"]
    assert "sandbox_permissions" in props
    assert "justification" in props


class SandboxTenant:
    """A layer that requires the sandbox for one tenant (the per-call choice)."""

    name = "sandbox-tenant"

    @hookimpl
    def shellgate_check(self, call: CallInfo) -> Decision | None:
        if call.tenant != "untrusted":
            return None
        return Decision(
            effect="allow",
            reason="untrusted tenant: sandboxed",
            layer=self.name,
            require_sandbox=True,
        )


async def test_a_layer_can_require_the_sandbox_for_a_call(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, executor={"kind": "local"})
    from shellgate.approval import AllowApprover

    async with Gate(cfg, approver=AllowApprover()) as gate:
        gate.decider.register(SandboxTenant(), name=SandboxTenant.name)
        # In bwrap's PID namespace the shell's own pid is tiny; on the host it is not.
        probe = {"command": "echo $$", "description": "print the shell pid"}
        sandboxed = await gate.call("bash", probe, tenant="untrusted")
        local = await gate.call("bash", probe, tenant="default")
    assert int(sandboxed.text) < 10
    assert int(local.text) > 10


class ForceSandbox:
    """An around-execute wrapper that sandboxes everything (a deployment's override)."""

    @hookimpl(wrapper=True)
    def shellgate_execute(self, plan: dict[str, Any]) -> Generator[None, Any, Any]:
        plan["executor"] = "bwrap"
        return (yield)


async def test_an_execute_wrapper_can_force_the_sandbox(tmp_path: Path) -> None:
    from shellgate.approval import AllowApprover

    cfg = make_config(tmp_path, executor={"kind": "local"})
    async with Gate(cfg, approver=AllowApprover()) as gate:
        gate.decider.register(ForceSandbox(), name="force")
        result = await gate.call(
            "bash", {"command": "echo $$", "description": "print the shell pid"}
        )
    assert int(result.text) < 10
