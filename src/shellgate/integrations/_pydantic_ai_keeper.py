"""What shellgate's pydantic-ai toolsets share: one owner at the gate, paused calls, answers.

Imported by :mod:`shellgate.integrations.pydantic_ai` once pydantic-ai is known to
be installed; see that module for the behaviour.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from shellgate.approval import Approval
from shellgate.errors import ShellgateError
from shellgate.integrations._paused import Paused, PausedCalls, canonical
from shellgate.tools import render
from shellgate.tools.resume import GateDecision

if TYPE_CHECKING:
    from shellgate.gate import Gate, ToolResult

logger = logging.getLogger("shellgate.integrations.pydantic_ai")

#: ``DeferredToolResults.metadata[tool_call_id][APPROVAL_METADATA_KEY]``: the sealed approval.
APPROVAL_METADATA_KEY = "shellgate_approval"
#: Who approved a call resumed with a bare ``True`` / ``ToolApproved()``: somebody
#: using the application that runs as ``subject``, whom pydantic-ai does not name
#: (as ``mcp-user:<subject>`` is the person at an MCP client).
UNNAMED_APPROVER = "pydantic-ai-user:{subject}"
UNNAMED_MESSAGE = (
    "approved with pydantic-ai's DeferredToolResults, which names nobody "
    "(toolset.approve(requests, tool_call_id, approver) names the person)"
)


class Keeper:
    """What both toolsets share: one owner at the gate, the paused calls, the person's answer."""

    def __init__(
        self,
        gate: Gate,
        paused: PausedCalls,
        subject: str | None,
        tenant: str | None,
        session: str | None,
    ) -> None:
        self.gate = gate
        self.paused = paused
        self.subject, self.tenant, self.session = subject, tenant, session

    # -- the model-facing side ----------------------------------------------------------

    def text(self, text: str) -> str:
        """Completion notices of background tasks go at the top of the next result, as over MCP."""
        owner = self.gate.owner(self.subject, self.tenant, self.session)
        return render.with_notices(self.gate.pop_notices(owner), text)

    def refuse(self, text: str) -> NoReturn:
        """A refusal is a failed tool call: the model reads the text, and it is not a retry."""
        raise ToolFailed(self.text(text))

    def answer(self, result: ToolResult) -> str:
        if result.is_error:
            self.refuse(result.text)
        return self.text(result.text)

    async def call(self, tool: str, arguments: object, **more: Any) -> ToolResult:
        """``gate.call`` as this owner (a cancelled run kills the command: the gate's own doing)."""
        return await self.gate.call(
            tool, arguments, subject=self.subject, tenant=self.tenant, session=self.session, **more
        )

    async def decide(
        self, gate_arguments: Mapping[str, object], *, host_runs: bool = False
    ) -> GateDecision:
        """``host_runs``: a wrapped tool runs the command (a sandbox verdict asks)."""
        return await self.gate.decide(
            "bash",
            dict(gate_arguments),
            subject=self.subject,
            tenant=self.tenant,
            session=self.session,
            host_runs=host_runs,
        )

    def pause(
        self,
        decision: GateDecision,
        ctx: RunContext[Any],
        tool: str,
        arguments: Mapping[str, object],
        gate_arguments: Mapping[str, object],
    ) -> NoReturn:
        """Keep the decision for the person's answer and end the run with a deferred call."""
        self.paused.add(
            Paused(
                decision, ctx.tool_call_id or "", tool, canonical(arguments), dict(gate_arguments)
            )
        )
        raise ApprovalRequired(
            {
                "decision_id": decision.id,
                "question": decision.question,
                "command": gate_arguments.get("command"),
                "reason": decision.reason,
                "layer": decision.layer,
                "rule": decision.rule,
                "escalation": decision.escalation,
                "expires_at": decision.expires_at,
            }
        )

    def resumed_without_approval(
        self, ctx: RunContext[Any], tool: str, arguments: Mapping[str, object]
    ) -> tuple[Paused, Approval | None] | None:
        """A paused call approved the pydantic-ai way (``{id: True}``), which names nobody.

        ``None`` when this toolset paused no such call (then it is decided afresh).
        Otherwise the paused call and, unless ``[approval] require_named``, the
        gate's approval for it from an unnamed person of the application
        (:data:`UNNAMED_APPROVER`, on the record now); with ``require_named`` the
        approval is ``None`` and the gate refuses the call, on the record.
        """
        paused = self.paused.take_call(ctx.tool_call_id or "", tool, canonical(arguments))
        if paused is None:
            return None
        if self.gate.config.approval.require_named:
            logger.warning(
                "tool call %s was approved without naming anybody, and [approval] "
                "require_named is set; resume it with toolset.approve(requests, "
                "tool_call_id, approver) to name the person",
                ctx.tool_call_id,
            )
            return paused, None
        decision = paused.decision
        approval = self.gate.approve(
            decision, UNNAMED_APPROVER.format(subject=decision.subject), message=UNNAMED_MESSAGE
        )
        return paused, approval

    def handoff(
        self,
        tool: str,
        arguments: Mapping[str, object],
        gate_arguments: Mapping[str, object],
        ctx: RunContext[Any],
        *,
        approval: str | None = None,
        decision: GateDecision | None = None,
    ) -> None:
        """For a call the wrapped tool, not the gate, will run: spend its decision or approval.

        The gate checks it (``gate.handoff``: sealed, for this command, workdir
        and owner, once, unexpired) and puts the outcome on the record; this
        returns when the wrapped tool may run the call now, else refuses
        (``ToolFailed``). Before that the toolset checks what the gate does not
        see: an approval for a call this toolset paused must come back for that
        tool call id with all the same arguments (a wrapped tool may take more
        than the command); a mismatch is refused here and spends the paused call.
        """
        did = decision_id(approval) if approval is not None else ""
        paused = self.paused.get(did) if did else None
        call = (ctx.tool_call_id or "", tool, canonical(arguments))
        if paused is not None and (paused.call_id, paused.tool, paused.arguments) != call:
            self.paused.take(did)
            why = f"decision {did} was made for another call (its arguments differ)"
            self.refuse(render.approval_refused(why))
        refused = self.gate.handoff(
            "bash",
            dict(gate_arguments),
            approval=approval,
            decision=decision,
            subject=self.subject,
            tenant=self.tenant,
            session=self.session,
        )
        if refused is not None:
            self.refuse(refused.text)
        if did:
            self.paused.take(did)

    # -- the host's side: a person's answer ---------------------------------------------------

    def find(self, requests: DeferredToolRequests, tool_call_id: str) -> Paused:
        meta = requests.metadata.get(tool_call_id)
        did = meta.get("decision_id") if isinstance(meta, dict) else None
        if not any(c.tool_call_id == tool_call_id for c in requests.approvals) or not did:
            raise ShellgateError(f"tool call {tool_call_id} is not a call shellgate paused")
        paused = self.paused.get(str(did))
        if paused is None or paused.call_id != tool_call_id:
            raise ShellgateError(
                f"tool call {tool_call_id} is not waiting on this toolset: already answered, "
                "expired, or paused by another toolset or process (run it again to ask again)"
            )
        return paused

    def approve(
        self, requests: DeferredToolRequests, tool_call_id: str, approver: str
    ) -> DeferredToolResults:
        paused = self.find(requests, tool_call_id)
        approval = self.gate.approve(paused.decision, approver)
        return DeferredToolResults(
            approvals={tool_call_id: ToolApproved()},
            metadata={tool_call_id: {APPROVAL_METADATA_KEY: approval.token}},
            answered_by={tool_call_id: approval.approver},
        )

    def deny(
        self,
        requests: DeferredToolRequests,
        tool_call_id: str,
        approver: str,
        message: str | None,
    ) -> DeferredToolResults:
        paused = self.find(requests, tool_call_id)
        approval = self.gate.approve(paused.decision, approver, answer="deny", message=message)
        self.paused.take(paused.decision.id)
        # The gate spends the decision and answers with the person's words; nothing runs.
        refused = self.gate.handoff(
            "bash",
            paused.gate_arguments,
            approval=approval,
            subject=self.subject,
            tenant=self.tenant,
            session=self.session,
        )
        text = refused.text if refused is not None else render.error("not approved")
        return DeferredToolResults(
            approvals={tool_call_id: ToolDenied(text)},
            answered_by={tool_call_id: approval.approver},
        )


def token_of(metadata: object) -> str | None:
    token = metadata.get(APPROVAL_METADATA_KEY) if isinstance(metadata, dict) else None
    return token if isinstance(token, str) else None


def decision_id(approval: str) -> str:
    """The decision an approval token claims to answer; ``""`` if it is malformed."""
    try:
        return Approval.parse(approval).decision_id
    except ShellgateError:
        return ""


def forget(paused: PausedCalls, token: str) -> None:
    """The gate runs (or refuses) the call this approval answers: forget it was paused."""
    if did := decision_id(token):
        paused.take(did)
