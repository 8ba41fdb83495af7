"""The gate: one object owns a deployment, and every tool call passes through it.

Pipeline of a ``bash`` call (each step fails closed)::

    validate ─▶ resolve workdir ─▶ decide (waterfall) ─▶ audit decision (flushed)
       ─▶ approve (ask / escalation) ─▶ plan executor (+ around-execute wrappers)
       ─▶ run or start ─▶ render ─▶ audit result

``bash_output`` and ``bash_kill`` run no command: they are validated and fenced to
the task's owner, and audited. Model-facing text comes only from
:mod:`shellgate.tools.render`; host-facing failures are :mod:`shellgate.errors`.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal

from shellgate.approval import Approver, SessionGrants, make_approver
from shellgate.approval.sealed import Approval, ApprovalSeal
from shellgate.audit import AuditSink, open_audit
from shellgate.config import Config, load_config
from shellgate.decider import Decider
from shellgate.errors import ShellgateError, TaskError, ToolInputError
from shellgate.executors import Executor, SpillStore, make_executor
from shellgate.models import CallInfo, ExecutorKind
from shellgate.ops.context import call_scope, finish, make_tracer
from shellgate.policy.confine import confined_config
from shellgate.tools import render
from shellgate.tools.bash import BashCall
from shellgate.tools.result import ToolResult
from shellgate.tools.resume import TOOL_NAMES, GateDecision, approve, decide, handoff
from shellgate.tools.schemas import schemas as _schemas
from shellgate.tools.schemas import validate_task
from shellgate.tools.tasks import NoticeSink, Owner, QueueNotices, TaskRegistry

__all__ = ["CONFINED", "Gate", "SyncGate", "ToolResult"]  # ToolResult: its public home


#: The key of the executor for calls the policy sandboxes, when it is not the
#: deployment's own bwrap executor (that one has the network on, or a wider mode).
CONFINED = "bwrap-confined"


class Gate:
    """Config, policy, executors, tasks, approvals, audit log: one deployment.

    Use as an async context manager; closing stops every task, waits for it and
    removes spill files. Spawns happen on the loop that opened the gate (the
    parent-death signal follows the spawning *thread*), so keep one loop per gate.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        approver: Approver | None = None,
        notices: NoticeSink | None = None,
        audit: AuditSink | None = None,
        env: Mapping[str, str] | None = None,
        session: str | None = None,
        keep_spill: bool = False,
        approval_key: bytes | None = None,
    ) -> None:
        self.config = config if config is not None else load_config()
        self.tracer = make_tracer(self.config)  # [observability] otel: fails here, at start
        self.env = dict(env or {})
        self.decider = Decider(self.config, env=self.env)
        self.gate_id = secrets.token_hex(8)  # this gate's row in a policy store's sg_hosts
        self.decider.watch(self.gate_id)  # live reload (docs/fleet.md); stopped by aclose
        self.approver: Approver = approver or make_approver(self.config.approval)
        self._queue = QueueNotices() if notices is None else None
        self.tasks = TaskRegistry(self.config.executor.max_tasks, notices or self._queue)  # type: ignore[arg-type]
        self.audit = audit if audit is not None else open_audit(self.config.audit)
        self.grants = SessionGrants()
        self.seal = ApprovalSeal(approval_key)
        self.session = session or secrets.token_hex(8)
        self.spill = SpillStore(self.config.executor.spill_budget_bytes)
        self.keep_spill = keep_spill
        self._executors: dict[str, Executor] = {}
        self.executor = self._executor(self.config.executor.kind)
        self._opened = False
        self._closing = False

    # -- lifecycle -----------------------------------------------------------------

    async def __aenter__(self) -> Gate:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def open(self) -> None:
        if not self._opened:
            await self.executor.open()
            self._opened = True

    async def aclose(self) -> None:
        self._closing = True
        await self.tasks.aclose()
        for executor in self._executors.values():
            await executor.aclose()
        self.spill.close(keep_files=self.keep_spill)
        self.decider.close()
        self.audit.close()

    @property
    def opened(self) -> bool:
        """Whether the gate has been opened (the first call opens it)."""
        return self._opened

    @property
    def closing(self) -> bool:
        """Whether :meth:`aclose` has begun (new calls are refused from then on)."""
        return self._closing

    def reload(self) -> None:
        """Reopen the audit log and rebuild the decision step from the policy files
        and the policy store's head (live reload does the latter on its own:
        docs/fleet.md).

        For log rotation and policy edits (``shellgate mcp`` runs it on SIGHUP).
        The config itself is not re-read. Layers registered in code
        (``gate.decider.register``) carry over. Fail closed: a policy set or
        plugin that no longer loads, or a store that cannot give a good policy
        (unreachable, empty, broken), leaves the last good decision step in force,
        and this raises :class:`~shellgate.errors.ShellgateError` saying so, after
        the audit log was reopened. Calls already past their decision keep it.
        """
        problems: list[str] = []
        try:
            self.audit.reopen()
        except Exception as exc:  # reported; the policy half still runs
            problems.append(f"audit log not reopened: {_describe(exc)}")
        try:
            decider = Decider(self.config, env=self.env)
            if decider.policy_problem is not None:  # a store that cannot give a good policy
                decider.close()
                raise ShellgateError(decider.policy_problem)
            for name, plugin in self.decider.pm.list_name_plugin():
                if decider.pm.get_plugin(name) is None:
                    decider.register(plugin, name=name)
        except Exception as exc:  # whatever a policy file or plugin raises: keep the old one
            problems.append(f"policy not reloaded, the last good one stays: {_describe(exc)}")
        else:
            old, self.decider = self.decider, decider
            old.stop_watching()  # its reload thread; calls already holding it still decide
            decider.watch(self.gate_id)
        if problems:
            raise ShellgateError("; ".join(problems))

    def _executor(self, kind: str) -> Executor:
        if kind not in self._executors:
            self._executors[kind] = make_executor(self.config, kind, spill=self.spill)
        return self._executors[kind]

    async def executor_for(self, kind: ExecutorKind) -> Executor:
        executor = self._executor(kind)
        await executor.open()
        return executor

    async def confined_executor(self) -> Executor:
        """The executor of calls the policy sandboxes (``policy/confine.py``): bwrap,
        workspace-write (or narrower), no network. The deployment's own bwrap
        executor when that is already all of it, else one of its own."""
        confined = confined_config(self.config)
        if confined.sandbox == self.config.sandbox:
            return await self.executor_for("bwrap")
        if CONFINED not in self._executors:
            self._executors[CONFINED] = make_executor(confined, "bwrap", spill=self.spill)
        executor = self._executors[CONFINED]
        await executor.open()
        return executor

    async def sandbox_unavailable(self) -> str | None:
        """Why this gate cannot confine a call (bwrap missing, its probe failed), or
        ``None``. Probes once, when the first sandboxed call comes."""
        reason = (await self.confined_executor()).unavailable_reason
        return None if reason is None else f"the sandbox is unavailable here ({reason})"

    # -- the model-facing surface -----------------------------------------------------

    @property
    def sandboxed(self) -> bool:
        """Whether calls may run sandboxed, so the bash schema offers escalation: the
        default executor sandboxes, or the policy sandboxes some calls (its closing
        default or a rule is ``sandbox``). Asked on every ``bash`` call: the closing
        default is the one the decider resolved (it stats and resolves paths)."""
        if self.executor.sandboxes or self.decider.closing_default == "sandbox":
            return True
        engine = self.decider.rules.state.engine if self.decider.rules is not None else None
        return engine is not None and engine.sandboxes

    def schemas(self, fmt: Literal["openai", "anthropic", "mcp"]) -> list[dict[str, Any]]:
        return _schemas(fmt, sandboxed=self.sandboxed)

    def owner(self, subject: str | None, tenant: str | None, session: str | None) -> Owner:
        pol = self.config.policy
        return Owner(subject or pol.subject, tenant or pol.tenant, session or self.session)

    def pop_notices(self, owner: Owner) -> list[str]:
        """Pending completion notices (only with the built-in queue sink)."""
        return self._queue.pop(owner) if self._queue is not None else []

    async def call(
        self,
        tool: str,
        arguments: object,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
        abort: asyncio.Event | None = None,
        approval: Approval | str | None = None,
        decision: GateDecision | str | None = None,
    ) -> ToolResult:
        """Run one tool call through the gate; never raises for model-facing outcomes.

        ``decision`` (from :meth:`decide`) runs this call on that decision instead
        of deciding again; ``approval`` (from :meth:`approve`) is a person's answer
        to such a decision and implies it. Either covers one call only: the same
        tool, arguments, subject, tenant and session, not used before, not
        expired; a decision that needs approval runs only with one. Anything else
        is a deny (``outcome`` ``"not approved"``), audited.
        """
        owner = self.owner(subject, tenant, session)
        # ops: logs carry this call's call_id, and [observability] otel gives it a span
        with call_scope(tool, *owner, self.tracer) as scope:
            result = await self._call(tool, arguments, owner, abort, approval, decision)
            finish(scope, result.outcome)
            return result

    async def _call(
        self,
        tool: str,
        arguments: object,
        owner: Owner,
        abort: asyncio.Event | None,
        approval: Approval | str | None,
        decision: GateDecision | str | None,
    ) -> ToolResult:
        if self._closing:
            return ToolResult(
                render.error("the gate is shutting down; no new calls"), True, "error"
            )
        if not self._opened:
            await self.open()
        try:
            if tool == "bash":
                did = decision.id if isinstance(decision, GateDecision) else decision
                return await BashCall(self, owner, arguments, abort, approval, did).run()
            if approval is not None or decision is not None:
                raise ToolInputError(f"{tool} runs no command and takes no approval or decision")
            if tool in ("bash_output", "bash_kill"):
                return self._task_call(tool, owner, arguments)
        except (ToolInputError, TaskError) as exc:
            return self._refused(tool, owner, arguments, str(exc))
        except ShellgateError as exc:
            return ToolResult(render.error(str(exc)), True, "error")
        return self._refused(
            tool,
            owner,
            arguments,
            f"unknown tool {render.shorten(repr(tool))}; the tools are {', '.join(TOOL_NAMES)}",
        )

    async def decide(
        self,
        tool: str,
        arguments: object,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
        host_runs: bool = False,
    ) -> GateDecision:
        """Decide one tool call without running it; the decision is audited.

        For frameworks that approve by pausing a run: on ``needs_approval``, show
        ``question`` to a person, then pass :meth:`approve`'s answer to
        :meth:`call`. ``bash_output``/``bash_kill`` run no command: always
        ``allow`` (calling them is audited as usual). Arguments the call would
        refuse give ``deny`` with ``invalid`` set and the call's error text.
        ``host_runs``: the caller's host runs the command itself (then
        :meth:`handoff`), outside shellgate's sandbox, so a ``sandbox`` verdict is
        decided ``ask`` instead, with that reason.
        """
        owner = self.owner(subject, tenant, session)
        with call_scope(tool, *owner, self.tracer, via="decide") as scope:
            decided = await decide(self, tool, arguments, owner, host_runs=host_runs)
            outcome = "error" if decided.invalid else "denied" if decided.effect == "deny" else ""
            finish(scope, outcome or "decided")
            return decided

    def approve(
        self,
        decision: GateDecision,
        approver: str,
        *,
        answer: Literal["allow_once", "deny"] = "allow_once",
        message: str | None = None,
    ) -> Approval:
        """A person's answer to ``decision``, sealed for :meth:`call`.

        ``approver`` is that person's identity: the audit log records it as the
        approver. Raises :class:`~shellgate.errors.ShellgateError` for a decision
        that needs no approval, or was not made by this gate.
        """
        return approve(self, decision, approver, answer, message)

    def handoff(
        self,
        tool: str,
        arguments: object,
        *,
        approval: Approval | str | None = None,
        decision: GateDecision | str | None = None,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
    ) -> ToolResult | None:
        """For a host that runs the command itself: spend a decision or approval.

        A wrapped third-party shell tool, or Claude Code's own Bash tool, runs the
        command outside the gate. This checks that ``decision`` (or ``approval``,
        which implies its decision) covers this exact call, exactly as
        :meth:`call` would, spends it, and writes a ``handoff`` record. ``None``
        means the host may run it now; otherwise the returned result is the
        refusal (forged, reused, expired, for another call, the person said no,
        or a policy that requires shellgate's sandbox for it) for the model,
        already on the record, and nothing may run.
        """
        return handoff(
            self, tool, arguments, self.owner(subject, tenant, session), approval, decision
        )

    def _refused(self, tool: str, owner: Owner, arguments: object, error: str) -> ToolResult:
        """A call refused before anything was decided: answered, and still on the record."""
        try:
            if tool in ("bash_output", "bash_kill"):
                self._audit_task(tool, owner, arguments, error=error)
            else:  # bad bash arguments, an unknown tool: what the model sent, and why not
                sent = arguments if isinstance(arguments, dict) else {}
                self.audit.append(
                    {
                        "type": "invalid",
                        "tool": tool,
                        "subject": owner.subject,
                        "tenant": owner.tenant,
                        "session": owner.session,
                        "error": error,
                        **{
                            k: v
                            for k in ("command", "description", "workdir")
                            if isinstance(v := sent.get(k), str)
                        },
                    }
                )
        except ShellgateError as exc:  # the audit log failed: the model reads that
            return ToolResult(render.error(str(exc)), True, "error")
        return ToolResult(render.error(error), True, "error")

    def _task_call(self, tool: str, owner: Owner, arguments: object) -> ToolResult:
        task = self.tasks.get(owner, validate_task(arguments))
        text = self.tasks.read(task) if tool == "bash_output" else self.tasks.kill(task)
        self._audit_task(tool, owner, arguments, task_id=task.id, status=render.status(task.result))
        return ToolResult(text)

    def _audit_task(self, tool: str, owner: Owner, arguments: object, **fields: object) -> None:
        """bash_output / bash_kill run nothing, but every tool call is on the record."""
        if tool not in ("bash_output", "bash_kill"):
            return
        if "task_id" not in fields and isinstance(arguments, dict):
            fields["task_id"] = str(arguments.get("task_id", ""))[:100]
        self.audit.append(
            {
                "type": "task",
                "tool": tool,
                "subject": owner.subject,
                "tenant": owner.tenant,
                "session": owner.session,
                **fields,
            }
        )

    async def wait_task(
        self,
        task_id: str,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
    ) -> None:
        """Wait until a background task has ended (raises TaskError for unknown ids)."""
        task = self.tasks.get(self.owner(subject, tenant, session), task_id)
        await asyncio.shield(task.process.done)

    def call_info(self, owner: Owner, command: str, description: str, workdir: str) -> CallInfo:
        return CallInfo(
            tool="bash",
            command=command,
            description=description,
            subject=owner.subject,
            tenant=owner.tenant,
            session=owner.session,
            workdir=workdir,
            workspace=str(self.executor.workspace),
        )


def _describe(exc: Exception) -> str:
    """Our own errors speak for themselves; anything else is named."""
    return str(exc) if isinstance(exc, ShellgateError) else f"{type(exc).__name__}: {exc}"


class SyncGate:
    """A blocking facade for scripts: one private event loop, kept for the gate's life.

    The loop lives as long as the facade, so background tasks (whose parent-death
    signal follows the spawning thread) survive between calls.
    """

    def __init__(self, config: Config | None = None, **kwargs: Any) -> None:
        self._runner = asyncio.Runner()
        self.gate = Gate(config, **kwargs)
        self._runner.run(self.gate.open())

    def call(self, tool: str, arguments: object, **kwargs: Any) -> ToolResult:
        return self._runner.run(self.gate.call(tool, arguments, **kwargs))

    def decide(self, tool: str, arguments: object, **kwargs: Any) -> GateDecision:
        return self._runner.run(self.gate.decide(tool, arguments, **kwargs))

    def approve(self, decision: GateDecision, approver: str, **kwargs: Any) -> Approval:
        return self.gate.approve(decision, approver, **kwargs)

    def wait_task(self, task_id: str, **kwargs: Any) -> None:
        self._runner.run(self.gate.wait_task(task_id, **kwargs))

    def close(self) -> None:
        try:
            self._runner.run(self.gate.aclose())
        finally:
            self._runner.close()

    def __enter__(self) -> SyncGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
