"""Decide now, run later: the public decide/approve steps of :class:`~shellgate.gate.Gate`.

Agent frameworks approve by pausing a run and resuming it with a person's answer.
:func:`decide` runs the waterfall and puts the decision on the record with nothing
run; :func:`approve` seals a person's answer to it (:mod:`shellgate.approval.sealed`).
``Gate.call(..., decision=…)`` or ``approval=…`` then runs that exact call on that
decision — once, before it expires, with no second decision — and its records
carry the decision's id as their ``call_id``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from shellgate.approval import approval_question
from shellgate.approval.sealed import Approval, Pending, arguments_digest
from shellgate.errors import ShellgateError, TaskError, ToolInputError
from shellgate.models import Effect, SandboxMode, Verdict
from shellgate.policy.confine import host_runs as host_runs_reason
from shellgate.tools import render
from shellgate.tools.bash import BashCall, Decided, bash_digest
from shellgate.tools.result import ToolResult
from shellgate.tools.schemas import validate_task
from shellgate.tools.tasks import Owner

if TYPE_CHECKING:
    from shellgate.tools.host import GateHost

TOOL_NAMES = ("bash", "bash_output", "bash_kill")
#: Why a decision for a host that runs the command itself is never ``sandbox``.
HOST_RUNS = host_runs_reason("the host")


@dataclass(frozen=True)
class GateDecision:
    """What :meth:`Gate.decide` found, on the record, with nothing run.

    ``effect`` is the verdict (``allow``/``sandbox``/``ask``/``deny``; ``sandbox``
    runs confined when :meth:`Gate.call` runs it, and is never handed to a host:
    decide with ``host_runs=True`` for a host that runs commands itself, and it is
    an ``ask`` instead). ``needs_approval``
    says a person must approve before :meth:`Gate.call` runs it (an ``ask``, or a
    sandbox escalation); ``question`` is what to show them. For ``deny`` — also
    for arguments refused before any decision (``invalid``) — ``text`` is the
    model-facing refusal, exactly what :meth:`Gate.call` would have answered.
    """

    id: str
    tool: str
    arguments: Mapping[str, object]
    subject: str
    tenant: str
    session: str
    effect: Effect
    reason: str
    layer: str = ""
    rule: str | None = None
    question: str | None = None
    text: str | None = None
    escalation: SandboxMode | None = None
    expires_at: float = 0.0
    invalid: bool = False
    verdict: Verdict | None = None
    #: It would run in shellgate's sandbox: the policy requires it, or the deployment
    #: sandboxes every call. A host that runs commands itself cannot honour that, so
    #: :meth:`Gate.handoff` refuses it.
    sandboxed: bool = False

    @property
    def needs_approval(self) -> bool:
        return self.effect != "deny" and (self.effect == "ask" or self.escalation is not None)



async def decide(
    gate: GateHost, tool: str, arguments: object, owner: Owner, *, host_runs: bool = False
) -> GateDecision:
    """See :meth:`Gate.decide`."""

    def answer(effect: Effect, reason: str, **more: Any) -> GateDecision:
        return GateDecision(
            more.pop("id", ""),
            tool,
            more.pop("arguments", {}),
            owner.subject,
            owner.tenant,
            owner.session,
            effect,
            reason,
            **more,
        )

    if gate.closing:
        text = render.error("the gate is shutting down; no new calls")
        return answer("deny", "the gate is shutting down", text=text)
    if not gate.opened:
        await gate.open()
    bash = BashCall(gate, owner, arguments, None)
    try:
        if tool in ("bash_output", "bash_kill"):
            task_id = validate_task(arguments)
            return answer("allow", f"{tool} runs no command", layer="tools",
                          arguments={"task_id": task_id})
        if tool != "bash":
            raise ToolInputError(
                f"unknown tool {render.shorten(repr(tool))}; the tools are "
                f"{', '.join(TOOL_NAMES)}"
            )
        d = await bash.decide(via="decide", host_runs=HOST_RUNS if host_runs else None)
    except ToolInputError as exc:
        text = gate._refused(tool, owner, arguments, str(exc)).text
        return answer("deny", str(exc), text=text, invalid=True)
    verdict = d.verdict
    expires = time.time() + gate.config.approval.resume_ttl_ms / 1000
    decision = answer(
        verdict.effect,
        verdict.decision.reason,
        id=bash.call_id,
        arguments=d.args.model_dump(mode="json"),
        layer=verdict.decision.layer,
        rule=verdict.decision.rule,
        escalation=d.escalation if verdict.effect != "deny" else None,
        expires_at=expires,
        verdict=verdict,
        sandboxed=d.kind == "bwrap",
    )
    if verdict.effect == "deny":
        return dataclasses.replace(decision, text=render.policy_denied(verdict.decision))
    owner_key = (owner.subject, owner.tenant, owner.session)
    gate.seal.issue(decision.id, Pending(bash_digest(d.args), owner_key, expires, d))
    if decision.needs_approval:
        question = approval_question(d.call.command, verdict, d.escalation, d.current)
        return dataclasses.replace(decision, question=question)
    return decision


def approve(
    gate: GateHost,
    decision: GateDecision,
    approver: str,
    answer: Literal["allow_once", "deny"],
    message: str | None,
) -> Approval:
    """See :meth:`Gate.approve`."""
    if not isinstance(approver, str) or not approver.strip():
        raise ShellgateError("approve() needs the approver's identity (a non-empty name)")
    if answer not in ("allow_once", "deny"):
        raise ShellgateError(f"approve() answers allow_once or deny, not {answer!r}")
    # What the gate kept under this id decides, not the copy: an allow relabelled
    # 'ask' gets no approval record (nobody was asked about it).
    kept = gate.seal.decided(decision.id) if decision.id else None
    needs = decision.needs_approval
    if isinstance(kept, Decided):
        needs = kept.verdict.effect == "ask" or kept.escalation is not None
    if not needs or not decision.id:
        raise ShellgateError(
            f"decision {decision.id or '(none)'} is {decision.effect!r} and needs no approval"
        )
    sealed = gate.seal.seal(
        Approval(
            decision_id=decision.id,
            tool=decision.tool,
            digest=arguments_digest(decision.tool, dict(decision.arguments)),
            subject=decision.subject,
            tenant=decision.tenant,
            session=decision.session,
            approver=approver.strip(),
            answer=answer,
            expires_at=decision.expires_at,
            message=message,
        )
    )
    # The record shows what the gate asked about its own decision, not the copy's text.
    question = decision.question or ""
    escalation = decision.escalation
    if isinstance(kept, Decided):
        escalation = kept.escalation
        question = approval_question(kept.call.command, kept.verdict, escalation, kept.current)
    gate.audit.append(
        {
            "type": "approval",
            "call_id": decision.id,
            "via": "approve",
            "question": question,
            "escalation": escalation,
            "answer": answer,
            "message": message,
            "approver": sealed.approver,
        }
    )
    return sealed


def handoff(
    gate: GateHost,
    tool: str,
    arguments: object,
    owner: Owner,
    approval: Approval | str | None,
    decision: GateDecision | str | None,
) -> ToolResult | None:
    """See :meth:`Gate.handoff`."""

    did = decision.id if isinstance(decision, GateDecision) else decision
    if tool != "bash" or (did is None and approval is None):
        raise ShellgateError("handoff() takes a bash call and its decision or approval")
    try:
        bash = BashCall(gate, owner, arguments, None, approval, did)
        resumed = bash.resume()
    except (ToolInputError, TaskError) as exc:
        return gate._refused(tool, owner, arguments, str(exc))
    if isinstance(resumed, ToolResult):
        return resumed
    if resumed.kind == "bwrap":  # a host-run command cannot honour it: refused
        why = (SANDBOXED_BY_POLICY if resumed.confined
               else sandbox_refusal(resumed.verdict.require_sandbox))
        gate.audit.append({"type": "result", "call_id": bash.call_id, "is_error": True,
                           "outcome": "denied", "error": why})
        return ToolResult(render.error(f"not run: {why}"), True, "denied")
    gate.audit.append({"type": "handoff", "call_id": bash.call_id, "runner": "host"})
    return None


#: Why a ``sandbox`` decision made for shellgate to run is not handed to a host.
SANDBOXED_BY_POLICY = (
    "the policy sandboxes this command: it runs unasked only confined in shellgate's "
    "sandbox, and the host would run it outside; decide it with host_runs=True, and it "
    "is an ask instead"
)


def sandbox_refusal(by_policy: bool) -> str:
    """Why a command that would run in shellgate's sandbox may not be run by the host."""
    if by_policy:
        return "the policy requires this command to run in shellgate's sandbox, not the host's"
    return (
        "this deployment runs every command in shellgate's sandbox ([executor] kind = "
        "\"bwrap\"), and the host would run it outside; use a configuration with kind = "
        "\"local\" for hosts that run commands themselves"
    )
