"""Claude Agent SDK: shellgate's policy on Claude Code's own Bash tool.

Needs the ``claude-agent-sdk`` extra (``pip install 'shellgate[claude-agent-sdk]'``).
Claude Code runs the command itself; shellgate's part is the decision and, for an
``ask``, the person's approval — both on the audit record (the command's output
is not). Two ways in, usable together (docs/integrations.md):

* :meth:`ClaudePermissions.can_use_tool` for ``ClaudeAgentOptions.can_use_tool``:
  ``allow`` → ``PermissionResultAllow``; ``deny`` → ``PermissionResultDeny`` with
  the gate's refusal text; ``ask`` → the host's ``ask`` callable asks a person
  and returns who answered and yes/no, which :meth:`Gate.approve` records, then
  allow or deny. No callable, a failure, or no answer within ``[approval]
  timeout_ms`` is a deny.
* :meth:`ClaudePermissions.hook_matcher` for ``hooks={"PreToolUse": [...]}``:
  matcher ``"Bash"``, answering ``permissionDecision`` ``allow``/``deny``/``ask``
  with the reason, ``on_failure="block"`` so a failing hook blocks. An ``ask``
  goes back to Claude Code, which asks through ``can_use_tool`` when set — the
  same object then reuses the hook's decision (one decision per call).

Only Bash is decided. Other tools get no opinion from the hook (``{}``); the
permission callback must answer, so it passes them to ``fallback`` and, with
none, denies them.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

try:
    from claude_agent_sdk import (
        HookContext,
        HookInput,
        HookJSONOutput,
        HookMatcher,
        PermissionResult,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "shellgate.integrations.claude_agent_sdk needs claude-agent-sdk: "
        "pip install 'shellgate[claude-agent-sdk]'"
    ) from exc

from shellgate.approval.base import call_in_daemon_thread
from shellgate.approval.sealed import Approval
from shellgate.errors import ShellgateError
from shellgate.gate import Gate
from shellgate.hooks_host.hosts import CLAUDE_CODE, answer
from shellgate.integrations._paused import Kept
from shellgate.tools import render
from shellgate.tools.resume import GateDecision, sandbox_refusal

__all__ = ["ClaudePermissions", "PersonAnswer", "can_use_tool", "pre_tool_use_hook"]

BASH = "Bash"
#: Hook decisions of ``ask`` kept for the permission callback that follows them.
MAX_HELD = 1024
SHELLGATE = "shellgate"  # the approver named when nobody could answer


@dataclass(frozen=True)
class PersonAnswer:
    """Who answered an approval question, and whether they said yes."""

    approver: str
    allow: bool
    message: str | None = None  # for the model when they say no


AskPerson = Callable[[GateDecision], PersonAnswer | Awaitable[PersonAnswer]]
CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


def _bash_arguments(tool_input: Mapping[str, Any], cwd: object = None) -> dict[str, object]:
    """What the gate decides for a Claude Code Bash call (the command as Claude sent it).

    ``cwd`` is where Claude Code runs it (the hook input's ``cwd``, else the
    ``cwd`` given to :class:`ClaudePermissions`): relative paths in the command
    are judged there, not in the gate's workspace.
    """
    description = tool_input.get("description")
    if not isinstance(description, str) or not description.strip():
        description = "Claude Code Bash call"
    arguments: dict[str, object] = {"command": tool_input.get("command"),
                                    "description": description}
    if isinstance(cwd, str) and cwd:
        arguments["workdir"] = cwd  # the gate refuses one that is not a directory
    return arguments


def _why(decision: GateDecision) -> str:
    """The reason a person reads in Claude Code: what decided, and why."""
    by = decision.layer or "shellgate"
    if decision.rule:
        by += f" rule {decision.rule}"
    return f"shellgate: {decision.effect} by {by}: {decision.reason}"


class ClaudePermissions:
    """One gate's answers to Claude Code's permission questions for its Bash tool.

    ``ask`` is how a person is asked: ``ask(decision) -> PersonAnswer`` (sync
    runs on a daemon thread, async on the loop), shown ``decision.question``.
    ``fallback`` answers ``can_use_tool`` for every tool but Bash. ``cwd`` is
    Claude Code's working directory (``ClaudeAgentOptions.cwd``) for calls the
    hook has not seen; the hook uses the ``cwd`` of its input.
    """

    def __init__(
        self,
        gate: Gate,
        *,
        ask: AskPerson | None = None,
        fallback: CanUseTool | None = None,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.gate = gate
        self.ask = ask
        self.fallback = fallback
        self.cwd = cwd
        self._owner: dict[str, Any] = {"subject": subject, "tenant": tenant, "session": session}
        # tool_use_id -> the hook's ask decision and the gate arguments it was made for
        self._held: Kept[tuple[GateDecision, dict[str, object]]] = Kept(
            lambda held: held[0].expires_at, MAX_HELD
        )

    async def _decide(self, arguments: dict[str, object]) -> GateDecision:
        # Claude Code runs the Bash call itself: a sandbox verdict is an ask here.
        return await self.gate.decide("bash", arguments, host_runs=True, **self._owner)

    # -- can_use_tool ------------------------------------------------------------------------

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        """``ClaudeAgentOptions.can_use_tool``: Bash decided by the gate, a person asked on ask."""
        if tool_name != BASH:
            if self.fallback is not None:
                return await self.fallback(tool_name, tool_input, context)
            return PermissionResultDeny(
                message=f"shellgate decides only Bash, and no fallback answers for {tool_name}"
            )
        try:
            held = self._held_for(context.tool_use_id, tool_input)
            if held is not None:
                decision, arguments = held
            else:
                arguments = _bash_arguments(tool_input, self.cwd)
                decision = await self._decide(arguments)
            if decision.effect == "deny":
                return PermissionResultDeny(message=decision.text or render.error(decision.reason))
            if not decision.needs_approval:
                return self._hand_off(arguments, decision=decision)
            return await self._ask_person(decision, arguments)
        except Exception as exc:  # whatever failed, Claude Code must not run the command
            return PermissionResultDeny(message=render.error(f"shellgate failed ({exc}); not run"))

    def _held_for(
        self, tool_use_id: str | None, tool_input: Mapping[str, Any]
    ) -> tuple[GateDecision, dict[str, object]] | None:
        """The hook's ``ask`` decision for this very call, if the hook made one."""
        held = self._held.take(tool_use_id) if tool_use_id else None
        if held is None:
            return None
        if held[1].get("command") != tool_input.get("command"):
            return None  # the input changed since the hook saw it: decide again
        return held

    def _hand_off(
        self,
        arguments: dict[str, object],
        *,
        decision: GateDecision | None = None,
        approval: Approval | None = None,
    ) -> PermissionResult:
        """Claude Code runs it: spend the decision (or approval) for this exact call first."""
        refused = self.gate.handoff(
            "bash", arguments, decision=decision, approval=approval, **self._owner
        )
        if refused is not None:
            return PermissionResultDeny(message=refused.text)
        return PermissionResultAllow()

    async def _ask_person(
        self, decision: GateDecision, arguments: dict[str, object]
    ) -> PermissionResult:
        """Ask through ``ask``; record the answer with :meth:`Gate.approve`; fail closed."""
        try:
            answer = await self._answer(decision)
        except Exception as exc:
            why = (
                f"approval timed out: no answer within {self._timeout_ms()} ms"
                if isinstance(exc, TimeoutError)
                else f"asking a person failed ({type(exc).__name__}: {exc})"
            )
            return self._denied(decision, SHELLGATE, f"{why}, so the call was denied")
        if answer.allow:
            approval = self.gate.approve(decision, answer.approver)
            return self._hand_off(arguments, approval=approval)
        return self._denied(decision, answer.approver, answer.message)

    async def _answer(self, decision: GateDecision) -> PersonAnswer:
        if self.ask is None:
            raise ShellgateError("approval was needed but no person can be asked")
        ask = self.ask
        if inspect.iscoroutinefunction(ask):
            pending: Awaitable[object] = ask(decision)
        else:
            pending = call_in_daemon_thread(ask, decision)

        async def answered() -> object:
            result = await pending
            return await result if inspect.isawaitable(result) else result

        answer = await asyncio.wait_for(answered(), self._timeout_ms() / 1000)
        if not isinstance(answer, PersonAnswer):
            raise ShellgateError(f"ask returned a {type(answer).__name__}, not a PersonAnswer")
        if not isinstance(answer.approver, str) or not answer.approver.strip():
            raise ShellgateError("the answer does not say who answered")
        return answer

    def _timeout_ms(self) -> int:
        return int(self.gate.config.approval.timeout_ms)

    def _denied(
        self, decision: GateDecision, approver: str, message: str | None
    ) -> PermissionResult:
        self.gate.approve(decision, approver, answer="deny", message=message)
        assert decision.verdict is not None  # a decision that needs approval has one
        text = render.approval_denied(
            decision.verdict.decision, approver, message, escalation=decision.escalation
        )
        return PermissionResultDeny(message=text)

    # -- PreToolUse hook ---------------------------------------------------------------------

    async def pre_tool_use(
        self, hook_input: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        """A ``PreToolUse`` hook callback: the gate's decision as ``permissionDecision``."""
        if hook_input.get("hook_event_name") != "PreToolUse" or hook_input.get("tool_name") != BASH:
            return {}  # no opinion
        given = hook_input.get("tool_input")
        tool_input: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        arguments = _bash_arguments(tool_input, hook_input.get("cwd") or self.cwd)
        try:
            decision = await self._decide(arguments)
        except Exception as exc:  # fail closed even where on_failure is not "block"
            return _hook_answer("deny", render.error(f"shellgate failed ({exc}); not run"))
        if decision.effect == "deny":
            return _hook_answer("deny", decision.text or render.error(decision.reason))
        if not decision.needs_approval:
            refused = self.gate.handoff("bash", arguments, decision=decision, **self._owner)
            if refused is not None:
                return _hook_answer("deny", refused.text)
            return _hook_answer("allow", _why(decision))
        if decision.sandboxed:
            # Claude Code would run it on the host after its own prompt: refused now,
            # as gate.handoff refuses an allow of that kind.
            why = sandbox_refusal(decision.verdict is not None and decision.verdict.require_sandbox)
            self.gate.audit.append({"type": "result", "call_id": decision.id, "is_error": True,
                                    "outcome": "denied", "error": why})
            return _hook_answer("deny", render.error(f"not run: {why}"))
        use_id = tool_use_id or hook_input.get("tool_use_id")
        if isinstance(use_id, str) and use_id:
            self._held.put(use_id, (decision, arguments))
        return _hook_answer("ask", decision.question or _why(decision))

    def hook_matcher(
        self, *, timeout: float | None = None, on_failure: Literal["block", "continue"] = "block"
    ) -> HookMatcher:
        """The ``PreToolUse`` matcher for Bash (``on_failure="block"``: a crash blocks)."""
        return HookMatcher(
            matcher=BASH, hooks=[self.pre_tool_use], timeout=timeout, on_failure=on_failure
        )


def _hook_answer(decision: Literal["allow", "deny", "ask"], reason: str) -> HookJSONOutput:
    """Claude Code's PreToolUse answer, shaped where ``shellgate hook claude-code`` shapes it."""
    return cast("HookJSONOutput", answer(CLAUDE_CODE, decision, reason))


def can_use_tool(gate: Gate, **options: Any) -> CanUseTool:
    """``ClaudePermissions(gate, **options).can_use_tool``."""
    return ClaudePermissions(gate, **options).can_use_tool


def pre_tool_use_hook(gate: Gate, **options: Any) -> HookMatcher:
    """``ClaudePermissions(gate, **options).hook_matcher()``."""
    return ClaudePermissions(gate, **options).hook_matcher()
