"""The public decide/approve/resume API: one decision per call, approvals sealed and bound.

Real gates, real processes, real casbin files, the real audit log.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import Approval, DenyApprover
from shellgate.audit.reader import verify
from shellgate.errors import ShellgateError
from shellgate.gate import Gate
from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision
from tests.conftest import ROOT, bwrap_works, make_config

POLICY = """\
p, agent, *, echo *, allow
p, agent, *, touch *, ask, touching files needs a person
p, agent, *, rm *, deny, no deleting
p, agent, *, write:**, allow
"""


def records(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture
async def gate(tmp_path: Path) -> Any:
    pol = tmp_path / "pol"
    pol.mkdir()
    (pol / "policy.csv").write_text(POLICY)
    shutil.copy(ROOT / "policies" / "default" / "model.conf", pol / "model.conf")
    g = Gate(
        make_config(tmp_path, policy={"paths": [str(pol)], "default": "deny"}),
        approver=DenyApprover(),  # nobody is asked inside a call: approvals come out of band
    )
    await g.open()
    yield g
    await g.aclose()


def touch_args(name: str = "made") -> dict[str, Any]:
    return {"command": f"touch {name}", "description": "make a file"}


async def test_decide_runs_nothing_and_is_audited(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    assert decision.effect == "ask"
    assert decision.needs_approval
    assert decision.rule is not None
    assert decision.rule.endswith("policy.csv:2")
    assert decision.question
    assert "touch made" in decision.question
    assert not (tmp_path / "ws" / "made").exists()
    [record] = records(tmp_path)
    assert record["type"] == "decision"
    assert record["via"] == "decide"
    assert record["call_id"] == decision.id
    assert record["decision"] == "ask"


async def test_approved_call_runs_once_and_names_the_person(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    approval = gate.approve(decision, "alice@example.com")
    result = await gate.call("bash", touch_args(), approval=approval)
    assert (result.outcome, result.is_error) == ("ok", False)
    assert (tmp_path / "ws" / "made").exists()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert {r["call_id"] for r in recs} == {decision.id}  # one call, one decision
    assert recs[1]["approver"] == "alice@example.com"
    assert recs[1]["answer"] == "allow_once"
    assert verify(tmp_path / "audit.jsonl").ok

    (tmp_path / "ws" / "made").unlink()
    again = await gate.call("bash", touch_args(), approval=approval)  # reused
    assert again.outcome == "not approved"
    assert "already used" in again.text
    assert not (tmp_path / "ws" / "made").exists()


async def test_token_form_round_trips(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    token = gate.approve(decision, "bob").token
    assert isinstance(token, str)
    assert token.startswith("sga1.")
    result = await gate.call("bash", touch_args(), approval=token)
    assert result.outcome == "ok"
    assert (tmp_path / "ws" / "made").exists()


async def test_a_person_saying_no_is_a_deny_with_their_words(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    approval = gate.approve(decision, "carol", answer="deny", message="not on a Friday")
    result = await gate.call("bash", touch_args(), approval=approval)
    assert result.outcome == "not approved"
    assert "carol: not on a Friday" in result.text
    assert not (tmp_path / "ws" / "made").exists()
    assert records(tmp_path)[-2]["approver"] == "carol"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"approver": "mallory"}, "forged or altered"),
        ({"answer": "allow_once", "message": "x"}, "forged or altered"),
        ({"expires_at": 4e9}, "forged or altered"),
        ({"mac": "0" * 64}, "forged or altered"),
    ],
)
async def test_altered_approvals_are_refused(
    gate: Gate, tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    decision = await gate.decide("bash", touch_args())
    approval = gate.approve(decision, "alice", answer="deny")
    forged = dataclasses.replace(approval, **change)
    result = await gate.call("bash", touch_args(), approval=forged)
    assert result.outcome == "not approved"
    assert why in result.text
    assert not (tmp_path / "ws" / "made").exists()


async def test_approval_from_another_gate_is_refused(
    gate: Gate, tmp_path: Path
) -> None:
    (tmp_path / "o").mkdir()
    other = Gate(make_config(tmp_path / "o", policy={"default": "ask"}))
    await other.open()
    try:
        theirs = await other.decide("bash", touch_args())
        approval = other.approve(theirs, "alice")
    finally:
        await other.aclose()
    result = await gate.call("bash", touch_args(), approval=approval)
    assert result.outcome == "not approved"
    assert "forged or altered" in result.text


@pytest.mark.parametrize(
    ("args", "owner", "why"),
    [
        (touch_args("other"), {}, "arguments differ"),
        ({**touch_args(), "timeoutMs": 5000}, {}, "arguments differ"),
        (touch_args(), {"subject": "intruder"}, "subject differs"),
        (touch_args(), {"tenant": "elsewhere"}, "tenant differs"),
        (touch_args(), {"session": "s2"}, "session differs"),
    ],
)
async def test_approval_is_bound_to_the_exact_call(
    gate: Gate, tmp_path: Path, args: dict[str, Any], owner: dict[str, str], why: str
) -> None:
    decision = await gate.decide("bash", touch_args(), session="s1")
    approval = gate.approve(decision, "alice")
    who = {"session": "s1", **owner}
    result = await gate.call(
        "bash",
        args,
        approval=approval,
        subject=who.get("subject"),
        tenant=who.get("tenant"),
        session=who["session"],
    )
    assert result.outcome == "not approved"
    assert why in result.text
    # A probe with the wrong call spends the approval: the right call cannot use it now.
    retry = await gate.call("bash", touch_args(), approval=approval, session="s1")
    assert retry.outcome == "not approved"
    assert "already used" in retry.text
    assert not list((tmp_path / "ws").iterdir())


async def test_expired_approval_is_refused(tmp_path: Path) -> None:
    g = Gate(make_config(tmp_path, policy={"default": "ask"}, approval={"resume_ttl_ms": 50}))
    async with g:
        decision = await g.decide("bash", touch_args())
        approval = g.approve(decision, "alice")
        deadline = time.monotonic() + 5
        while time.time() <= approval.expires_at and time.monotonic() < deadline:
            time.sleep(0.01)
        result = await g.call("bash", touch_args(), approval=approval)
    assert result.outcome == "not approved"
    assert "expired" in result.text


@pytest.mark.parametrize(
    "token", ["", "sga1", "sga1.!!!.x", "sga1.e30.x", "nope.e30.x", "sga1.WzFd.x"]
)
async def test_malformed_tokens_are_refused(gate: Gate, tmp_path: Path, token: str) -> None:
    result = await gate.call("bash", touch_args(), approval=token)
    assert result.outcome == "not approved"
    assert result.is_error
    assert not (tmp_path / "ws" / "made").exists()


async def test_allow_decision_runs_without_deciding_again(gate: Gate, tmp_path: Path) -> None:
    args = {"command": "echo hi", "description": "say hi"}
    decision = await gate.decide("bash", args)
    assert decision.effect == "allow"
    assert not decision.needs_approval
    result = await gate.call("bash", args, decision=decision)
    assert result.outcome == "ok"
    assert "hi" in result.text
    assert [r["type"] for r in records(tmp_path)] == ["decision", "result"]
    again = await gate.call("bash", args, decision=decision.id)
    assert again.outcome == "not approved"
    assert "already used" in again.text


async def test_ask_decision_without_approval_does_not_run(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    result = await gate.call("bash", touch_args(), decision=decision)
    assert result.outcome == "not approved"
    assert "needs a person's approval" in result.text
    assert not (tmp_path / "ws" / "made").exists()


async def test_deny_decision_carries_the_calls_text(gate: Gate) -> None:
    args = {"command": "rm -rf x", "description": "delete"}
    decision = await gate.decide("bash", args)
    called = await gate.call("bash", args)
    assert decision.effect == "deny"
    assert decision.text == called.text
    assert "no deleting" in decision.reason
    with pytest.raises(ShellgateError, match="needs no approval"):
        gate.approve(decision, "alice")


async def test_invalid_arguments_give_the_calls_error(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", {"command": "echo"})
    called = await gate.call("bash", {"command": "echo"})
    assert decision.invalid
    assert decision.effect == "deny"
    assert decision.text == called.text
    assert [r["type"] for r in records(tmp_path)] == ["invalid", "invalid"]


async def test_task_tools_need_nothing_and_take_no_approval(gate: Gate) -> None:
    decision = await gate.decide("bash_output", {"task_id": "bash-1"})
    assert decision.effect == "allow"
    assert decision.arguments == {"task_id": "bash-1"}
    result = await gate.call("bash_output", {"task_id": "bash-1"}, approval="x")
    assert result.is_error
    assert "takes no approval" in result.text


async def test_approve_needs_a_name(gate: Gate) -> None:
    decision = await gate.decide("bash", touch_args())
    with pytest.raises(ShellgateError, match="identity"):
        gate.approve(decision, "  ")
    with pytest.raises(ShellgateError, match="allow_once or deny"):
        gate.approve(decision, "alice", answer="allow_session")  # type: ignore[arg-type]


async def test_approval_parse_rejects_non_tokens() -> None:
    with pytest.raises(ShellgateError):
        Approval.parse(123)  # type: ignore[arg-type]


def test_sync_gate_decides_and_resumes(tmp_path: Path) -> None:
    from shellgate.gate import SyncGate

    with SyncGate(make_config(tmp_path, policy={"default": "ask"})) as sync:
        decision = sync.decide("bash", touch_args())
        assert decision.needs_approval
        result = sync.call("bash", touch_args(), approval=sync.approve(decision, "dana"))
    assert result.outcome == "ok"
    assert (tmp_path / "ws" / "made").exists()
    assert records(tmp_path)[1]["approver"] == "dana"


async def test_handoff_spends_the_approval_for_a_host_that_runs_it(
    gate: Gate, tmp_path: Path
) -> None:
    decision = await gate.decide("bash", touch_args())
    token = gate.approve(decision, "erin").token
    assert gate.handoff("bash", touch_args(), approval=token) is None  # the host may run it
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "handoff"]
    assert {r["call_id"] for r in recs} == {decision.id}
    refused = gate.handoff("bash", touch_args(), approval=token)
    assert refused is not None
    assert refused.outcome == "not approved"
    assert "already used" in refused.text
    assert not (tmp_path / "ws" / "made").exists()  # handoff itself runs nothing


async def test_handoff_refuses_what_the_call_would_refuse(gate: Gate) -> None:
    decision = await gate.decide("bash", touch_args())
    no = gate.approve(decision, "erin", answer="deny", message="no")
    refused = gate.handoff("bash", touch_args(), approval=no)
    assert refused is not None
    assert "erin: no" in refused.text
    unapproved = await gate.decide("bash", touch_args())
    refused = gate.handoff("bash", touch_args(), decision=unapproved)
    assert refused is not None
    assert "needs a person's approval" in refused.text
    bad = gate.handoff("bash", {"command": 1, "description": ""}, decision=unapproved)
    assert bad is not None
    assert "invalid command" in bad.text
    with pytest.raises(ShellgateError, match="decision or approval"):
        gate.handoff("bash", touch_args())


class _RequiresSandbox:
    """A layer that requires shellgate's sandbox for every call."""

    name = "needs-sandbox"

    @hookimpl
    def shellgate_check(self, call: CallInfo) -> Decision | None:
        del call
        return Decision(effect="allow", reason="sandboxed", layer=self.name, require_sandbox=True)


async def test_handoff_refuses_a_call_the_policy_sandboxes(gate: Gate, tmp_path: Path) -> None:
    gate.decider.register(_RequiresSandbox(), name=_RequiresSandbox.name)
    args = {"command": "echo hi", "description": "say hi"}
    decision = await gate.decide("bash", args)
    assert decision.effect == "allow"
    refused = gate.handoff("bash", args, decision=decision)
    assert refused is not None
    assert refused.outcome == "denied"
    assert "requires this command to run in shellgate's sandbox" in refused.text
    assert records(tmp_path)[-1]["outcome"] == "denied"


# -- red team (issue 12): what a person approves is what the gate decided --------------


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"arguments": {"command": "echo hi", "description": "harmless"}},
                     id="arguments"),
        pytest.param({"subject": "someone-else"}, id="subject"),
        pytest.param({"session": "another-session"}, id="session"),
        pytest.param({"tool": "bash_output"}, id="tool"),
        pytest.param({"expires_at": 4e9}, id="expiry"),
    ],
)
async def test_approve_refuses_a_decision_the_gate_did_not_make(
    gate: Gate, tmp_path: Path, change: dict[str, Any]
) -> None:
    """A GateDecision altered on its way to the person (it is a plain value a host may
    keep in run state) must not get a seal for the gate's real decision under that id:
    the person would approve one call and the audit log would show it, while another ran."""
    decision = await gate.decide("bash", touch_args("evil"))
    altered = dataclasses.replace(decision, **change)
    with pytest.raises(ShellgateError, match="not the decision"):
        gate.approve(altered, "alice")
    assert [r["type"] for r in records(tmp_path)] == ["decision"]  # no approval on record
    result = await gate.call("bash", touch_args("evil"), decision=decision)
    assert result.outcome == "not approved"
    assert not (tmp_path / "ws" / "evil").exists()


async def test_an_allow_relabelled_ask_gets_no_approval(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", {"command": "echo hi", "description": "greet"})
    assert decision.effect == "allow"
    with pytest.raises(ShellgateError, match="needs no approval"):
        gate.approve(dataclasses.replace(decision, effect="ask"), "alice")
    assert [r["type"] for r in records(tmp_path)] == ["decision"]


async def test_the_approval_record_shows_the_gates_question(gate: Gate, tmp_path: Path) -> None:
    decision = await gate.decide("bash", touch_args())
    gate.approve(dataclasses.replace(decision, question="Run `echo hi`?"), "alice")
    [_, approval] = records(tmp_path)
    assert approval["question"] == decision.question
    assert "touch made" in approval["question"]


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda a: dataclasses.replace(a, mac="\u00e9" * 64), id="non-ascii-mac"),
        pytest.param(lambda a: dataclasses.replace(a, mac=None), id="mac-not-a-string"),
        pytest.param(lambda a: a.token.rsplit(".", 1)[0] + ".\u00e9", id="token-non-ascii-mac"),
        pytest.param(lambda a: "sga1." + "W1tb" * 50_000 + ".ab", id="deeply-nested-json"),
        pytest.param(lambda a: "sga1." + "A" * 2_000_000 + ".ab", id="huge-token"),
    ],
)
async def test_mangled_approvals_are_a_refusal_on_the_record_not_an_exception(
    gate: Gate, tmp_path: Path, mangle: Any
) -> None:
    decision = await gate.decide("bash", touch_args())
    approval = gate.approve(decision, "alice")
    result = await gate.call("bash", touch_args(), approval=mangle(approval))
    assert (result.outcome, result.is_error) == ("not approved", True)
    assert records(tmp_path)[-1]["type"] == "result"
    assert gate.handoff("bash", touch_args(), approval=mangle(approval)) is not None
    assert not (tmp_path / "ws" / "made").exists()


@pytest.mark.parametrize(
    "present",
    [
        pytest.param(lambda d, a: {"approval": dataclasses.replace(a, mac="0" * 64)},
                     id="forged-approval"),
        pytest.param(lambda d, a: {"approval": a.token.rsplit(".", 1)[0] + "." + "0" * 64},
                     id="forged-token"),
        pytest.param(lambda d, a: {"decision": d.id + "x"}, id="unknown-decision"),
    ],
)
async def test_a_forged_claim_is_not_written_under_the_real_decisions_call_id(
    gate: Gate, tmp_path: Path, present: Any
) -> None:
    """Records under a call_id belong to one call. A made-up approval naming a real
    decision id (read off a token, a log) must not put a refusal into that call's story,
    which the real, approved call then continues."""
    decision = await gate.decide("bash", touch_args())
    approval = gate.approve(decision, "alice")
    refused = await gate.call("bash", touch_args(), **present(decision, approval))
    assert refused.outcome == "not approved"
    ran = await gate.call("bash", touch_args(), approval=approval)
    assert ran.outcome == "ok"
    recs = records(tmp_path)
    mine = [r["type"] for r in recs if r["call_id"] == decision.id]
    assert mine == ["decision", "approval", "result"]
    [claim, end] = [r for r in recs if r["call_id"] != decision.id]
    assert (claim["type"], end["type"]) == ("approval", "result")
    assert claim["claimed_decision"].startswith(decision.id)


@pytest.mark.skipif(not bwrap_works(), reason="bwrap is not installed")
async def test_handoff_refuses_in_a_deployment_that_sandboxes_every_call(tmp_path: Path) -> None:
    g = Gate(make_config(tmp_path, policy={"default": "ask"}, executor={"kind": "bwrap"}))
    async with g:
        decision = await g.decide("bash", touch_args())
        assert decision.sandboxed
        refused = g.handoff("bash", touch_args(), approval=g.approve(decision, "alice"))
    assert refused is not None
    assert refused.outcome == "denied"
    assert 'kind = "local"' in refused.text
