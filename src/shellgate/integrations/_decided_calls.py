"""Tool calls decided once and kept by their id until they run: framework-neutral, public API only.

Agent frameworks look at a tool call several times before it runs (is
approval needed? may it run? run it) and may pause between the looks for a
person. :class:`DecisionBook` decides a call on the first look
(:meth:`Gate.decide`, one ``decision`` record), hands the same decision to the
later looks, keeps the person's sealed answer as its string token, and runs
the call on that decision (:meth:`Gate.call` with ``decision=`` or
``approval=``): one decision per call, whatever the framework's order.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from shellgate.approval.sealed import Approval
from shellgate.errors import ShellgateError
from shellgate.gate import Gate, ToolResult
from shellgate.tools import render
from shellgate.tools.resume import GateDecision

#: Calls whose decision waits for its next look or for a person, per book.
MAX_PENDING_CALLS = 4096


def cleaned(arguments: object) -> object:
    """The model's arguments as the gate takes them: a strict schema's nulls mean "not given"."""
    if isinstance(arguments, Mapping):
        return {k: v for k, v in arguments.items() if v is not None}
    return arguments


def parsed(raw: object) -> object:
    """A call's JSON arguments; anything unreadable goes to the gate as it came (and is refused)."""
    if not isinstance(raw, str):
        return raw
    try:
        return cleaned(json.loads(raw))
    except ValueError:
        return raw


def refusal_text(decision: GateDecision) -> str:
    """What the model reads for a deny (the gate sets ``text`` on every deny it decides)."""
    return decision.text or render.error(decision.reason)


@dataclass
class DecidedCall:
    """One tool call's decisions, from the first look at it until it runs or is refused.

    A call is one or more ``bash`` commands (a function tool call is one; a
    shell tool call may carry several), or one ``bash_output``/``bash_kill``.
    ``key`` is the tool and its arguments as canonical JSON: a call reusing an
    id with other arguments is decided afresh, never matched to this one.
    """

    key: str
    tool: str
    arguments: list[object]  # what each decision was made for, as the gate takes them
    decisions: list[GateDecision]
    approvals: list[str | None] = field(default_factory=list)  # sealed tokens, by command

    @property
    def refusal(self) -> GateDecision | None:
        """The first denied decision: then nothing in this call runs."""
        return next((d for d in self.decisions if d.effect == "deny"), None)

    @property
    def needs_approval(self) -> bool:
        """A person must answer first: some command asks and none is denied."""
        return self.refusal is None and any(d.needs_approval for d in self.decisions)


class DecisionBook:
    """One principal's decided calls, by tool call id, bounded (the oldest is decided again)."""

    def __init__(
        self,
        gate: Gate,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
    ) -> None:
        self.gate = gate
        self.subject, self.tenant, self.session = subject, tenant, session
        self._calls: OrderedDict[str, DecidedCall] = OrderedDict()

    async def decided(self, call_id: str, tool: str, arguments: list[object]) -> DecidedCall:
        """This call's decisions: made on the first look at it, the same on every later one.

        ``tool`` names the call for the book (a shell tool's calls are ``bash``
        commands to the gate); each of ``arguments`` is one gate call.
        """
        key = json.dumps([tool, arguments], sort_keys=True, default=repr)
        known = self._calls.get(call_id)
        if known is not None and known.key == key:
            return known
        gate_tool = tool if tool in ("bash_output", "bash_kill") else "bash"
        decisions = [
            await self.gate.decide(
                gate_tool, args, subject=self.subject, tenant=self.tenant, session=self.session
            )
            for args in arguments
        ]
        call = DecidedCall(key, tool, arguments, decisions, [None] * len(decisions))
        self._calls[call_id] = call
        self._calls.move_to_end(call_id)
        while len(self._calls) > MAX_PENDING_CALLS:
            self._calls.popitem(last=False)
        return call

    def forget(self, call_id: str) -> None:
        """The call ran or was refused: its decisions are spent."""
        self._calls.pop(call_id, None)

    async def call(
        self,
        tool: str,
        arguments: object,
        *,
        decision: str | None = None,
        approval: Approval | str | None = None,
    ) -> ToolResult:
        return await self.gate.call(
            tool,
            arguments,
            subject=self.subject,
            tenant=self.tenant,
            session=self.session,
            decision=decision,
            approval=approval,
        )

    async def run(self, call: DecidedCall, index: int) -> ToolResult:
        """Run one command of ``call`` on its decision, or on the person's approval of it."""
        decision, token = call.decisions[index], call.approvals[index]
        if decision.effect == "deny":  # a deny is final where it is decided: never presented
            return ToolResult(refusal_text(decision), True, "denied")
        if token is not None:
            return await self.call("bash", call.arguments[index], approval=token)
        return await self.call("bash", call.arguments[index], decision=decision.id)

    def approve(self, call: DecidedCall, approver: str) -> None:
        """``approver`` says yes to every command of ``call`` that asks (one record each)."""
        call.approvals = [
            self.gate.approve(d, approver).token if d.needs_approval else None
            for d in call.decisions
        ]

    async def reject(self, call: DecidedCall, approver: str, message: str | None) -> str:
        """``approver`` says no: nothing runs; the model-facing text of each refusal, joined.

        Each command that asked gets the person's ``deny`` on the record and is
        presented with it, so its ``result`` record closes it and the model
        reads the person's words as the gate renders them.
        """
        texts: list[str] = []
        for index, decision in enumerate(call.decisions):
            if decision.effect == "deny":
                texts.append(refusal_text(decision))
            elif decision.needs_approval:
                try:
                    no = self.gate.approve(decision, approver, answer="deny", message=message)
                except ShellgateError:  # expired or evicted: still the person's no
                    who = f"{approver}: {message}" if message else approver
                    texts.append(render.approval_refused(who))
                    continue
                texts.append((await self.call("bash", call.arguments[index], approval=no)).text)
        return "\n".join(texts)
