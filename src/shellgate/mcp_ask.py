"""How a ``tools/call`` reaches the person: the approval channel the client negotiated.

* **Legacy protocol** (``initialize``, 2025-11-25 and earlier) with the
  ``elicitation`` capability: the gate's approver sends a server-initiated
  elicitation and waits inside the call (:class:`shellgate.mcp_server.ElicitationApprover`).
* **Modern protocol** (2026-07-28, a per-request envelope, no back-channel) with
  the ``elicitation`` capability: a ``bash`` call whose decision needs a person
  is answered with an ``InputRequiredResult`` — one form-mode elicitation (the
  question, no fields) and a sealed request state; the client asks its user and
  retries the same call with the answer and the state echoed (:class:`ModernAsk`).
* **Neither**: the headless default (``deny``, the NO_ELICITATION text).

Invariants of the modern path:

* **One decision per call.** The first round is ``gate.decide`` (audited,
  nothing runs); the retry runs on that decision through ``gate.approve`` and
  ``gate.call(approval=…)`` and is never decided again. An ``allow`` runs at once
  on its decision; a ``deny`` answers at once.
* **Sealed.** The request state is sealed with the MCP SDK's request-state codec
  (AES-256-GCM, :class:`mcp.server.request_state.AESGCMRequestStateCodec`) under
  a key only this server process holds: a client cannot read it, make one up, or
  change a byte of one. It names the gate's decision (its id and what
  ``gate.approve`` needs), the call it was issued for (tool name and the
  arguments as sent, digested), the principal (subject, tenant, session) and a
  deadline (``[approval] timeout_ms`` from the question).
* **Single use** is the gate's: the first answer spends the decision; a state
  presented again is refused by the gate's seal ("already used").
* **Every refusal is a deny the model reads**, never a JSON-RPC error: it names
  the cause, runs nothing, and is on the record (an ``approval`` record
  ``answer: "deny"``, ``approver: "shellgate"``, and a ``result`` record).
* **The person is on the record** as ``mcp-user:<subject>`` (:func:`approver_identity`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import time
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from shellgate.approval.question import one_line, visible
from shellgate.errors import ShellgateError
from shellgate.gate import Gate, ToolResult
from shellgate.tools import render
from shellgate.tools.resume import GateDecision
from shellgate.tools.tasks import Owner

DECLINED = (
    "the user declined this command in the MCP client; do not retry it unchanged — "
    "choose another way or ask the user what they want"
)
CANCELLED = (
    "the user dismissed the approval prompt without answering; do not retry it "
    "unchanged — ask the user whether to run it"
)
NO_ELICITATION = (
    "approval was needed but this MCP client cannot ask the user (it did not declare "
    "the elicitation capability), so the call was denied; ask the user to run it "
    "themselves or to allow it in the policy"
)

#: The key of the one input request an approval question travels under.
APPROVAL_INPUT = "shellgate/approval"
#: A form with no fields: accepting *is* the answer (allow once).
EMPTY_FORM: dict[str, Any] = {"type": "object", "properties": {}}
STATE_VERSION = 1
_STATE_PURPOSE = "shellgate/mcp-approval"

_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def approver_identity(owner: Owner) -> str:
    """Who answered an approval asked through the MCP client: ``mcp-user:<subject>``.

    The person at the client is the one the server serves: the config's
    ``[policy] subject`` on stdio (one principal per process), the bearer token's
    subject over HTTP. What the client says about itself (``clientInfo``) is
    unauthenticated and is not used.
    """
    return f"mcp-user:{owner.subject}"


def question_text(
    question: str,
    command: str,
    description: str | None,
    workdir: str,
    escalation: str | None,
    justification: str | None,
) -> str:
    """What the person reads, on either protocol.

    Every line is shellgate's: what the agent wrote is escaped as the terminal
    prompt escapes it (:func:`~shellgate.approval.question.visible`), its free
    text (description, justification) kept on its own line, and each further
    line of a multi-line command behind a gutter, so nothing in it can repaint
    the question or add a line that reads as shellgate's.
    """
    first, *more = visible(command).split("\n")
    lines = [visible(question), f"Command: {first}", *(f"  | {line}" for line in more)]
    if description:
        lines.append(f"Purpose (as the agent states it): {one_line(description)}")
    lines.append(f"Working directory: {one_line(workdir)}")
    if escalation is not None:
        lines.append(f"Wider sandbox mode requested: {escalation}")
        if justification:
            lines.append(f"Justification: {one_line(justification)}")
    lines.append("Accept to run it once; decline to refuse.")
    return "\n".join(lines)


def uses_input_required(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request's client asks through ``input_required``.

    Only on the modern protocol (the legacy one has no such result), and only
    when the request's client declared elicitation (else it cannot answer one).
    """
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and ctx.session.check_client_capability(
        _ELICITATION
    )


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def call_digest(tool: str, arguments: object) -> str:
    """The call a request state was issued for: the tool and its arguments as sent."""
    return hashlib.sha256(_canonical([tool, arguments]).encode()).hexdigest()


class _Refused(Exception):
    """A request state that does not cover the retry presenting it; the message says why.

    ``decision_id`` is the decision the state names; ``owned`` says the retry is
    that decision's own call (this principal, these arguments), so the refusal
    belongs to its records. Otherwise it gets a call_id of its own.
    """

    def __init__(self, cause: str, decision_id: str = "", *, owned: bool = False) -> None:
        super().__init__(cause)
        self.decision_id = decision_id
        self.owned = owned


class ModernAsk:
    """Routes a ``tools/call`` to its approval channel; serves the modern round trip.

    Holds the request-state key (one per server process: a state from another
    process, or from before a restart, is refused — decide again).
    """

    def __init__(
        self, timeout_ms: int, *, key: bytes | None = None, client_asks: bool = True
    ) -> None:
        self.timeout_s = timeout_ms / 1000
        #: False with ``[approval] mode = "queue"``: the queue answers, not the client.
        self.client_asks = client_asks
        self._codec = AESGCMRequestStateCodec([key if key is not None else os.urandom(32)])

    async def call(
        self,
        gate: Gate,
        owner: Owner,
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        abort: asyncio.Event,
    ) -> ToolResult | types.InputRequiredResult:
        """One ``tools/call``: a retry with a request state, a first round, or a plain call."""
        arguments: object = params.arguments if params.arguments is not None else {}
        try:
            if params.request_state is not None:
                return await self._resume(
                    gate,
                    owner,
                    params.name,
                    arguments,
                    params.request_state,
                    params.input_responses,
                    abort,
                )
            if params.name == "bash" and self.client_asks and uses_input_required(ctx):
                return await self._first_round(gate, owner, arguments, abort)
        except ShellgateError as exc:  # the audit log failed: nothing ran, the model reads it
            return ToolResult(render.error(str(exc)), True, "error")
        return await gate.call(
            params.name,
            arguments,
            subject=owner.subject,
            tenant=owner.tenant,
            session=owner.session,
            abort=abort,
        )

    # -- the first round: decide, then answer, run, or ask --------------------------------

    async def _first_round(
        self, gate: Gate, owner: Owner, arguments: object, abort: asyncio.Event
    ) -> ToolResult | types.InputRequiredResult:
        decision = await gate.decide(
            "bash", arguments, subject=owner.subject, tenant=owner.tenant, session=owner.session
        )
        if decision.effect == "deny":
            text = decision.text or render.error(decision.reason)
            if decision.invalid or not decision.id:  # refused before a decision was made
                return ToolResult(text, True, "error")
            gate.audit.append(
                {"type": "result", "call_id": decision.id, "is_error": True, "outcome": "denied"}
            )
            return ToolResult(text, True, "denied")
        if not decision.needs_approval:
            return await gate.call(
                "bash",
                arguments,
                subject=owner.subject,
                tenant=owner.tenant,
                session=owner.session,
                abort=abort,
                decision=decision,
            )
        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=self._question(gate, decision), requested_schema=EMPTY_FORM
            )
        )
        state = self._seal(decision, owner, call_digest("bash", arguments))
        return types.InputRequiredResult(input_requests={APPROVAL_INPUT: ask}, request_state=state)

    @staticmethod
    def _question(gate: Gate, decision: GateDecision) -> str:
        args = decision.arguments
        given = args.get("workdir")
        try:
            workdir = str(gate.executor.resolve_workdir(given if isinstance(given, str) else None))
        except ShellgateError:  # decide already resolved it; a directory gone since: as given
            workdir = str(given)
        justification = args.get("justification")
        return question_text(
            decision.question or "",
            str(args.get("command", "")),
            str(args.get("description") or "") or None,
            workdir,
            decision.escalation,
            justification if isinstance(justification, str) else None,
        )

    # -- the request state ---------------------------------------------------------------

    def _seal(self, decision: GateDecision, owner: Owner, call: str) -> str:
        deadline = min(decision.expires_at, time.time() + self.timeout_s)
        claims = {
            "v": STATE_VERSION,
            "purpose": _STATE_PURPOSE,
            "call": call,
            "owner": [owner.subject, owner.tenant, owner.session],
            "exp": deadline,
            "decision": {
                "id": decision.id,
                "tool": decision.tool,
                "arguments": dict(decision.arguments),
                "effect": decision.effect,
                "reason": decision.reason,
                "layer": decision.layer,
                "rule": decision.rule,
                "question": decision.question,
                "escalation": decision.escalation,
                "expires_at": decision.expires_at,
            },
        }
        return self._codec.seal(_canonical(claims).encode())

    def _open(self, state: str) -> tuple[dict[str, Any], GateDecision]:
        """The claims of a state this process sealed; :class:`_Refused` for anything else."""
        try:
            claims = json.loads(self._codec.unseal(state))
            if claims["v"] != STATE_VERSION or claims["purpose"] != _STATE_PURPOSE:
                raise ValueError("another format")
            d = claims["decision"]
            decision = GateDecision(
                id=d["id"],
                tool=d["tool"],
                arguments=d["arguments"],
                subject=claims["owner"][0],
                tenant=claims["owner"][1],
                session=claims["owner"][2],
                effect=d["effect"],
                reason=d["reason"],
                layer=d["layer"],
                rule=d["rule"],
                question=d["question"],
                escalation=d["escalation"],
                expires_at=float(d["expires_at"]),
            )
        except (InvalidRequestState, ValueError, KeyError, TypeError, IndexError):
            raise _Refused(
                "the approval request state was not issued by this server or was altered "
                "(it does not verify)"
            ) from None
        return claims, decision

    # -- the retry: check the state, then the gate approves and runs, or refuses -----------

    async def _resume(
        self,
        gate: Gate,
        owner: Owner,
        tool: str,
        arguments: object,
        state: str,
        responses: Mapping[str, types.InputResponse] | None,
        abort: asyncio.Event,
    ) -> ToolResult:
        try:
            decision, answer = self._check(owner, tool, arguments, state, responses)
        except _Refused as exc:
            return self._refuse(gate, owner, exc.decision_id, str(exc), owned=exc.owned)
        approver = approver_identity(owner)
        try:
            if answer.action == "accept":
                approval = gate.approve(decision, approver)
            else:
                message = DECLINED if answer.action == "decline" else CANCELLED
                approval = gate.approve(decision, approver, answer="deny", message=message)
        except ShellgateError as exc:  # the gate's seal refuses: already used, expired, not ours
            return self._refuse(gate, owner, decision.id, str(exc), owned=True)
        return await gate.call(
            tool,
            arguments,
            subject=owner.subject,
            tenant=owner.tenant,
            session=owner.session,
            abort=abort,
            approval=approval,
        )

    def _check(
        self,
        owner: Owner,
        tool: str,
        arguments: object,
        state: str,
        responses: Mapping[str, types.InputResponse] | None,
    ) -> tuple[GateDecision, types.ElicitResult]:
        claims, decision = self._open(state)
        did = decision.id
        if list(claims["owner"]) != [owner.subject, owner.tenant, owner.session]:
            raise _Refused(
                f"the approval request state for decision {did} was issued to another "
                "principal or session",
                did,
            )
        if claims["call"] != call_digest(tool, arguments):
            raise _Refused(
                f"the approval request state for decision {did} was issued for another call "
                "(the tool or its arguments differ)",
                did,
            )
        if not time.time() < float(claims["exp"]):
            raise _Refused(
                f"the answer to decision {did} came after the approval deadline "
                f"([approval] timeout_ms, {round(self.timeout_s * 1000)} ms from the question)",
                did,
                owned=True,
            )
        answer = (responses or {}).get(APPROVAL_INPUT)
        if not isinstance(answer, types.ElicitResult):
            raise _Refused(f"the retry carried no answer to the approval question of {did}", did,
                           owned=True)
        return decision, answer

    @staticmethod
    def _refuse(
        gate: Gate, owner: Owner, decision_id: str, cause: str, *, owned: bool = False
    ) -> ToolResult:
        """A retry that does not get to run: on the record as the gate records its refusals.

        Under the decision's id only when the retry is that decision's own call;
        a state that does not verify, or presented by another principal or for
        other arguments, gets a call_id of its own and names the id it claimed.
        """
        common: dict[str, object] = {"call_id": decision_id if owned and decision_id
                                     else secrets.token_hex(8)}
        claimed = {"claimed_decision": decision_id} if decision_id and not owned else {}
        gate.audit.append(
            {
                "type": "approval",
                **common,
                **claimed,
                "via": "approval",
                "subject": owner.subject,
                "tenant": owner.tenant,
                "session": owner.session,
                "answer": "deny",
                "message": cause,
                "approver": "shellgate",
            }
        )
        gate.audit.append({"type": "result", **common, "is_error": True, "outcome": "not approved"})
        return ToolResult(render.approval_refused(cause), True, "not approved")
