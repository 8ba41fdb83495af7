"""One ``bash`` call through the gate: decide, approve, execute, render, audit.

Invariants:

* Nothing runs before the decision record is on disk (the audit log flushes
  before ``append`` returns).
* ``deny`` never reaches the approver; ``ask`` runs only on an explicit yes (or an
  allow-for-session grant covering every asked segment exactly).
* A sandbox escalation always asks a person, even when the policy allowed the
  command, and applies to this one call only.
* Around-execute wrappers may only make the plan stricter (``local`` → ``bwrap``,
  a narrower mode); anything else fails the call closed.
* Every call with a ``decision`` record gets its ``result`` record, whatever a
  plugin does: a wrapper failing after the run still leaves the run's result on
  the record (and a tool error naming the wrapper for the model).
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from shellgate.approval import approver_name, ask_with_timeout, session_scope
from shellgate.approval.question import approval_question
from shellgate.approval.sealed import Approval, ApprovalRefused, arguments_digest
from shellgate.errors import ExecutionError, TaskError, ToolInputError
from shellgate.executors import ExecRequest, Executor
from shellgate.models import (
    MODE_ORDER,
    ApprovalAnswer,
    ApprovalRequest,
    CallInfo,
    RunResult,
    SandboxMode,
    Verdict,
)
from shellgate.ops import context as ops
from shellgate.policy.confine import confined_mode, outside_workspace, unconfined
from shellgate.tools import render
from shellgate.tools.result import ToolResult
from shellgate.tools.schemas import SandboxedBashArgs, validate_bash
from shellgate.tools.tasks import Owner, Task
from shellgate.tools.wrappers import WrapperFailed, Wrappers, check_plan

if TYPE_CHECKING:
    from shellgate.tools.host import GateHost

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Decided:
    """A ``bash`` call's decision, on the record, and what running it needs."""

    args: SandboxedBashArgs
    call: CallInfo
    verdict: Verdict
    escalation: SandboxMode | None
    current: SandboxMode
    kind: str
    #: Run on the confined executor (a ``sandbox`` decision: no network, whatever
    #: the deployment's own sandbox allows).
    confined: bool = False


def bash_digest(args: SandboxedBashArgs) -> str:
    """What an approval is bound to: the validated arguments, defaults filled in."""
    return arguments_digest("bash", args.model_dump(mode="json"))


def _approval_decision_id(approval: Approval | str) -> str:
    """The decision an approval claims to answer, for the record (unchecked)."""
    if isinstance(approval, Approval):
        return approval.decision_id[:64]
    try:
        return Approval.parse(approval).decision_id[:64]
    except ApprovalRefused:
        return ""


class BashCall:
    def __init__(
        self,
        gate: GateHost,
        owner: Owner,
        arguments: object,
        abort: asyncio.Event | None,
        approval: Approval | str | None = None,
        decision: str | None = None,
    ) -> None:
        self.gate = gate
        self.owner = owner
        self.arguments = arguments
        self.abort = abort
        self.approval = approval
        self.decision = decision
        self.call_id = secrets.token_hex(8)
        ops.bind(self)  # the call in progress: its logs carry this call_id (ops/context.py)

    def _audit(self, kind: str, **fields: object) -> None:
        record = {"type": kind, "call_id": self.call_id, **fields}
        self.gate.audit.append(record)
        ops.observe(self, record)  # the call's span takes its attributes from its records

    def _result(
        self, text: str, is_error: bool, outcome: str = "ok", run: RunResult | None = None
    ) -> ToolResult:

        return ToolResult(text, is_error, outcome, run)  # type: ignore[arg-type]

    async def decide(self, via: str | None = None, *, host_runs: str | None = None) -> Decided:
        """Validate, resolve the workdir, decide and put the decision on the record.

        A ``sandbox`` verdict runs confined (``policy/confine.py``); where it cannot
        be — ``host_runs`` names a host that runs the command itself, the sandbox is
        unavailable, the workdir lies outside the workspace — it is decided ``ask``,
        with the reason. Raises :class:`ToolInputError` for arguments refused before
        any decision.
        """
        gate = self.gate
        args = validate_bash(self.arguments, sandboxed=gate.sandboxed)
        try:
            workdir = gate.executor.resolve_workdir(args.workdir)
        except ExecutionError as exc:  # the model's argument: refused before any decision
            raise ToolInputError(str(exc)) from exc
        call = gate.call_info(self.owner, args.command, args.description, str(workdir))
        if args.sandbox_permissions is not None:
            call = call.model_copy(update={"sandbox_permissions": args.sandbox_permissions})
        verdict = await gate.decider.decide_async(call)
        if verdict.effect == "sandbox":
            why = host_runs or outside_workspace(call) or await gate.sandbox_unavailable()
            if why is not None:
                verdict = unconfined(verdict, why)
        confined = verdict.effect == "sandbox"
        configured = gate.config.sandbox.mode
        current = confined_mode(configured) if confined else configured
        escalation = self._escalation(args, current)
        kind = "bwrap" if verdict.require_sandbox or confined else gate.config.executor.kind
        if confined and escalation == "full-access":
            # Approved, the escalation runs it unconfined: as the deployment runs an
            # allowed call (docs/sandbox.md, "Sandbox decisions").
            confined = False
            kind = "bwrap" if verdict.require_sandbox else gate.config.executor.kind
        extra: dict[str, object] = {}
        if via is not None:
            extra["via"] = via
        if verdict.policy_version is not None:  # a policy store decided (docs/fleet.md)
            extra["policy_version"] = verdict.policy_version
        self._audit(
            "decision",
            subject=call.subject,
            tenant=call.tenant,
            session=call.session,
            tool="bash",
            command=call.command,
            description=call.description,
            workdir=call.workdir,
            decision=verdict.effect,
            reason=verdict.decision.reason,
            layer=verdict.decision.layer,
            rule=verdict.decision.rule,
            segments=verdict.segment_records(),
            executor=kind,
            sandbox_mode=escalation or current,
            background=args.run_in_background,
            **extra,
        )
        return Decided(args, call, verdict, escalation, current, kind, confined)

    async def run(self) -> ToolResult:
        gate = self.gate
        if self.decision is not None or self.approval is not None:
            resumed = self.resume()
            if not isinstance(resumed, Decided):
                return resumed
            return await self._execute(
                resumed.call, resumed.args, resumed.kind, resumed.escalation or resumed.current,
                confined=resumed.confined,
            )
        d = await self.decide()
        call, verdict, escalation = d.call, d.verdict, d.escalation
        if verdict.effect == "deny":
            self._audit("result", is_error=True, outcome="denied")
            return self._result(render.policy_denied(verdict.decision), True, "denied")
        covered = verdict.effect == "ask" and gate.grants.covers(call, verdict)
        if (verdict.effect == "ask" and not covered) or escalation is not None:
            refusal = await self._approve(
                call, verdict, escalation, d.args.justification, d.current
            )
            if refusal is not None:
                return refusal
        elif covered:
            self._audit("approval", answer="allow_session", approver="session-grant", question="")
        return await self._execute(
            call, d.args, d.kind, escalation or d.current, confined=d.confined
        )

    def resume(self) -> Decided | ToolResult:
        """Run on a decision made earlier (``gate.decide``): once, for this exact call.

        A decision that needs approval needs a sealed approval for it
        (``gate.approve``). The records join the decision's (its id is their
        ``call_id``); nothing is decided again.
        """
        args = validate_bash(self.arguments, sandboxed=self.gate.sandboxed)
        claimed = self.decision if self.decision is not None else None
        if claimed is None and self.approval is not None:
            claimed = _approval_decision_id(self.approval)
        owner = (self.owner.subject, self.owner.tenant, self.owner.session)
        try:
            pending, approval = self.gate.seal.redeem(
                claimed or "", self.approval, digest=bash_digest(args), owner=owner
            )
            if claimed:  # a decision this gate made: the records join it
                self.call_id = claimed[:64]
            d = pending.decided
            assert isinstance(d, Decided)
            needs = d.verdict.effect == "ask" or d.escalation is not None
            if needs and approval is None:
                raise ApprovalRefused(
                    f"decision {claimed} needs a person's approval, and none was given",
                    known=True,
                )
        except ApprovalRefused as exc:
            extra: dict[str, object] = {}
            if exc.known and claimed:
                self.call_id = claimed[:64]
            elif claimed:  # forged or unknown: its own call_id, the claim beside it
                extra["claimed_decision"] = claimed[:64]
            self._audit(
                "approval", via="approval", answer="deny", message=str(exc), approver="shellgate",
                **extra,
            )
            self._audit("result", is_error=True, outcome="not approved")
            return self._result(render.approval_refused(str(exc)), True, "not approved")
        if approval is None:  # the approval's own record was written by gate.approve()
            return d
        if approval.answer == "deny":
            self._audit("result", is_error=True, outcome="not approved")
            text = render.approval_denied(
                d.verdict.decision, approval.approver, approval.message, escalation=d.escalation
            )
            return self._result(text, True, "not approved")
        return d

    def _escalation(self, args: SandboxedBashArgs, current: SandboxMode) -> SandboxMode | None:
        wanted = args.sandbox_permissions
        if wanted is None:
            return None
        cfg = self.gate.config.sandbox
        if not cfg.escalation:
            raise ToolInputError(
                "sandbox escalation is switched off in this deployment; the sandbox denial is final"
            )
        if MODE_ORDER.index(wanted) <= MODE_ORDER.index(current):
            raise ToolInputError(
                f"invalid sandbox_permissions: '{wanted}' is not wider than the current "
                f"'{current}' mode"
            )
        return wanted

    async def _approve(
        self,
        call: CallInfo,
        verdict: Verdict,
        escalation: SandboxMode | None,
        justification: str | None,
        current: SandboxMode,
    ) -> ToolResult | None:
        gate = self.gate
        permitted = gate.config.approval.allow_session and escalation is None
        request = ApprovalRequest(
            call=call,
            verdict=verdict,
            question=approval_question(call.command, verdict, escalation, current),
            escalation=escalation,
            justification=justification,
            session_scope=session_scope(verdict, permitted=permitted),
            call_id=self.call_id,
        )
        answer = await self._ask(request)
        if answer is None:  # aborted while a person was being asked: nothing runs
            self._audit(
                "approval",
                question=request.question,
                escalation=escalation,
                justification=justification,
                answer="deny",
                message="tool call aborted while waiting for approval",
                approver=approver_name(gate.approver),
            )
            self._audit("result", is_error=True, outcome="aborted")
            return self._result(render.error("tool call aborted"), True, "aborted")
        self._audit(
            "approval",
            question=request.question,
            escalation=escalation,
            justification=justification,
            answer=answer.answer,
            message=answer.message,
            approver=answer.approver,
        )
        if answer.answer == "deny":
            self._audit("result", is_error=True, outcome="not approved")
            text = render.approval_denied(
                verdict.decision,
                answer.approver or "approver",
                answer.message,
                escalation=escalation,
            )
            return self._result(text, True, "not approved")
        if answer.answer == "allow_session":
            gate.grants.grant(call, request.session_scope)
        return None

    async def _ask(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        """Ask the approver (fail closed); None when the call is aborted meanwhile (the
        question is cancelled, so a queued one is withdrawn, not left to be answered)."""
        timeout_ms = self.gate.config.approval.timeout_ms
        try:
            return await _unless_aborted(
                self.abort, ask_with_timeout(self.gate.approver, request, timeout_ms)
            )
        except _Aborted:
            return None

    async def _execute(
        self, call: CallInfo, args: SandboxedBashArgs, kind: str, mode: SandboxMode,
        *, confined: bool = False,
    ) -> ToolResult:
        """Run the approved call inside the execute wrappers; every path ends in a record.

        A ``confined`` call (a ``sandbox`` decision) runs on the gate's confined
        executor: wrappers may narrow its mode, never move it off bwrap.
        """
        gate = self.gate
        plan: dict[str, Any] = {"executor": kind, "sandbox_mode": mode}
        wrappers = Wrappers(gate.decider.pm, call, plan)
        try:
            wrappers.enter()
            check_plan(plan, kind, mode)
            # A confined call whose sandbox became unusable fails (SandboxUnavailable),
            # never runs elsewhere.
            if confined:
                executor = await gate.confined_executor()
            else:
                executor = await gate.executor_for(plan["executor"])
            timeout = None if args.timeoutMs is None else max(1, int(-(-args.timeoutMs // 1)))
            managed = {"SHELLGATE_SESSION_ID": call.session}
            request = ExecRequest(
                command=call.command,
                workdir=call.workdir,
                timeout_ms=timeout,
                env=gate.env,
                managed_env=managed,
                sandbox_mode=plan["sandbox_mode"],
            )
            if args.run_in_background:
                return await self._start(executor, request, wrappers)
            result = await self._run_foreground(executor, request)
        except (ExecutionError, TaskError) as exc:
            wrappers.fail(exc)
            self._audit("result", is_error=True, outcome="execution error", error=str(exc))
            return self._result(render.error(str(exc)), True, "error")
        except _Aborted:
            wrappers.fail(ExecutionError("tool call aborted"))
            self._audit("result", is_error=True, outcome="aborted")
            return self._result(render.error("tool call aborted"), True, "aborted")
        except BaseException as exc:
            # Cancelled by our caller, or a bug: still on the record, then passed on.
            wrappers.fail(exc)
            cancelled = isinstance(exc, asyncio.CancelledError)
            self._audit("result", is_error=True, outcome="aborted" if cancelled else "error",
                        error="" if cancelled else f"{type(exc).__name__}: {exc}")
            raise
        try:
            result = wrappers.exit(result)
        except WrapperFailed as exc:
            # The command ran and cannot be un-run: the model learns that and how it
            # ended (so it does not blindly retry), not its output, which the failed
            # wrapper did not finish handling (it may have been redacting it).
            self._audit_result(exc.result, is_error=True, outcome="wrapper error", error=str(exc))
            text = render.error(
                f"the command ran and ended {render.status(exc.result)}, but {exc}; "
                "its output is withheld"
            )
            return self._result(text, True, "error")
        self._audit_result(result)
        return self._result(render.run_result(result), False, "ok", result)

    async def _run_foreground(self, executor: Executor, request: ExecRequest) -> RunResult:
        return await _unless_aborted(self.abort, executor.run(request))

    async def _start(
        self, executor: Executor, request: ExecRequest, wrappers: Wrappers
    ) -> ToolResult:
        gate = self.gate
        gate.tasks.check_capacity(self.owner)
        task_id = gate.tasks.reserve_id()
        managed = {**request.managed_env, "SHELLGATE_TASK_ID": task_id}
        request = dataclasses.replace(request, managed_env=managed)
        process = await executor.start(request)
        task = gate.tasks.add(self.owner, request.command, process, task_id=task_id)

        def ended(t: Task) -> None:
            # A done-callback: nothing may escape it (the registry still has the
            # completion notice to send), and every ending is on the record.
            if t.result is None:
                wrappers.fail(ExecutionError(f"background task {t.id} failed"))
                self._audit("result", task_id=t.id, is_error=True, outcome="task failed")
                return
            try:
                final = wrappers.exit(t.result)
            except WrapperFailed as exc:
                self._audit_result(exc.result, task_id=t.id, is_error=True,
                                   outcome="wrapper error", error=str(exc))
                return
            self._audit_result(final, task_id=t.id)

        task.on_end.append(ended)
        self._audit("started", task_id=task.id)
        return self._result(render.started(task.id), False)

    def _audit_result(self, result: RunResult, *, is_error: bool = False, **extra: object) -> None:
        self._audit(
            "result",
            exit_code=result.exit_code,
            signal=result.signal,
            timed_out=result.timed_out,
            duration_ms=round(result.duration_ms, 3),
            stdout_bytes=result.stdout.total_bytes,
            stderr_bytes=result.stderr.total_bytes,
            truncated=result.stdout.truncated or result.stderr.truncated,
            executor=result.executor,
            sandbox_mode=result.sandbox_mode,
            sandbox_denied=result.sandbox_denied,
            is_error=is_error,
            **extra,
        )


class _Aborted(Exception):
    pass


async def _unless_aborted(abort: asyncio.Event | None, work: Coroutine[Any, Any, T]) -> T:
    """``await work``, unless ``abort`` is set first: then it is cancelled and
    :class:`_Aborted` raised. A cancellation of our caller cancels it too.

    Without an abort event a cancellation of our caller reaches ``work`` directly
    (no task: one loop turn less before a spawn).
    """
    if abort is None:
        return await work
    job = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait([job, stop], return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        # Our caller was cancelled: the work (a command, a question) must not outlive it.
        job.cancel()
        await asyncio.gather(job, return_exceptions=True)
        raise
    finally:
        stop.cancel()
    if not job.done():
        job.cancel()
        await asyncio.gather(job, return_exceptions=True)
        raise _Aborted
    return job.result()
