"""The executor seam: one ABC, invariants in ``@final`` methods.

An implementation writes only :meth:`Executor._spawn_plan` (argv and confinement)
and optionally :meth:`Executor._probe` and :meth:`Executor._denied`. Everything a
command's life needs to be right — request resolution (defaults, clamps, workdir),
the one deadline that tells a timeout from a caller cancellation from a
self-signal, the post-exit drain bounded by the grace, SIGTERM → grace → SIGKILL on
the group and its escapees together (a foreground call ends by timeout + grace,
whatever its processes do), output caps — lives here once, for every executor.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, final

from shellgate.command_env import build_env
from shellgate.config import Config
from shellgate.errors import ExecutionError, SandboxUnavailable, ToolInputError
from shellgate.executors._ending import (
    Budget,
    ending,
    first_of,
    proc_grace,
    read_status,
    sandbox_child,
)
from shellgate.executors._hardening import Hardening, ensure_subreaper
from shellgate.executors._output import SpillStore, StreamBuffer
from shellgate.executors._process import Proc
from shellgate.executors._reaper import Reaper, reap_orphan
from shellgate.executors._spare import Spares, encode_request
from shellgate.executors._which import find_program, writable_roots
from shellgate.executors.requests import (
    ExecRequest,
    ExecSpec,
    OutputDelta,
    SpawnPlan,
    TaskProcess,
)
from shellgate.models import OutputView, RunResult, SandboxMode


class Executor(ABC):
    """Runs approved commands. Subclasses fill in :meth:`_spawn_plan` only.

    (The data crossing this seam — ``ExecRequest``, ``ExecSpec``, ``SpawnPlan``,
    ``TaskProcess`` — lives in :mod:`shellgate.executors.requests`.)
    """

    kind: ClassVar[Literal["local", "bwrap"]]
    sandboxes: ClassVar[bool] = False

    def __init__(self, config: Config, *, spill: SpillStore | None = None) -> None:
        self.config = config
        ex = config.executor
        self.workspace = Path(os.path.realpath(ex.workspace))
        if not self.workspace.is_dir():
            raise ExecutionError(f"workspace does not exist: {ex.workspace}")
        self.spill = spill or SpillStore(ex.spill_budget_bytes)
        self._owns_spill = spill is None
        #: Where a sandboxed call can write, so no program the gate runs comes from there.
        self.untrusted = writable_roots(str(self.workspace), config.sandbox.writable_roots)
        self.hardening = Hardening.detect(self.untrusted)
        self.shell = _resolve_shell(ex.shell, self.untrusted)
        self._unavailable: str | None = None
        self._opened = False
        # Each running command (its supervisor task, or the future a foreground
        # run settles when it concludes the call itself) and the future that asks
        # it to stop.
        self._live: dict[asyncio.Future[Any], asyncio.Future[None]] = {}
        self._reaper = Reaper()  # exiting sandbox inits of ended calls
        self._spares = Spares()  # a supervisor started ahead of the next call

    # -- lifecycle ---------------------------------------------------------

    @final
    async def open(self) -> None:
        """Become a subreaper and probe the backend once; fail closed on errors."""
        if self._opened:
            return
        ensure_subreaper()
        try:
            await self._probe()
        except SandboxUnavailable as exc:
            self._unavailable = exc.reason
        self._opened = True

    @property
    def unavailable_reason(self) -> str | None:
        return self._unavailable

    async def aclose(self) -> None:
        """Stop every running command and wait for it; remove spill files.

        A stop request, not a task cancellation: a supervisor cancelled before
        its first step would never run its cleanup, leaving the command running.
        """
        self._spares.close()
        live = dict(self._live)
        for kill in live.values():
            if not kill.done():
                kill.set_result(None)
        if live:
            await asyncio.gather(*live, return_exceptions=True)
        await self._reaper.aclose(proc_grace(self.config.executor.grace_ms))
        if self._owns_spill:
            self.spill.close()

    # -- resolution ----------------------------------------------------------

    @final
    def resolve(self, request: ExecRequest, *, background: bool = False) -> ExecSpec:
        ex = self.config.executor
        if background:
            timeout: int | None = None
        else:
            timeout = ex.timeout_ms if request.timeout_ms is None else request.timeout_ms
            if timeout <= 0:
                raise ToolInputError(
                    f"invalid timeoutMs: expected a positive number, got {timeout}"
                )
            timeout = min(timeout, ex.max_timeout_ms)
        cwd = self.resolve_workdir(request.workdir)
        mode = request.sandbox_mode or self.config.sandbox.mode
        call_id = secrets.token_hex(12)
        managed = {**request.managed_env, "SHELLGATE_CALL_ID": call_id}
        env = build_env(os.environ, request.env, managed, extra_scrub=ex.scrub_env)
        return ExecSpec(
            command=request.command,
            cwd=cwd,
            workspace=self.workspace,
            env=env,
            timeout_ms=timeout,
            grace_ms=ex.grace_ms,
            max_output_bytes=ex.max_output_bytes,
            max_spill_bytes=ex.max_spill_bytes,
            sandbox_mode=mode,
            limits=ex.limits,
            shell=self.shell,
            call_id=call_id,
        )

    def resolve_workdir(self, workdir: str | None) -> Path:
        """Canonical workdir; relative paths resolve against the workspace root.

        The workspace itself (no workdir, or the canonical path the gate resolved
        it to before deciding) is taken as it was resolved when the executor
        started: the same for both, and no ``realpath`` walk on every call.
        """
        if workdir is None or workdir == "" or workdir == str(self.workspace):
            return self.workspace
        raw = Path(workdir)
        joined = raw if raw.is_absolute() else self.workspace / raw
        try:
            real = Path(os.path.realpath(joined))
            is_dir = real.is_dir()
        except (ValueError, OSError) as exc:  # a NUL byte, a name too long, a loop
            raise ExecutionError(f"invalid working directory: {exc}") from None
        if not is_dir:
            raise ExecutionError(f"working directory does not exist: {workdir}")
        return real

    # -- running -------------------------------------------------------------

    @final
    async def run(self, request: ExecRequest) -> RunResult:
        """Run in the foreground until exit or timeout; never leaves processes behind.

        The wait for the command's end happens right here. A command that ends
        with nothing of its call left and its pipes at EOF (nearly every one) is
        concluded without another await: no supervisor task, no extra loop turn
        between its exit and our caller. Anything else (a timeout, a stop
        request, a cancellation, processes or pipes outliving the command) is
        handed to a supervisor task, which a cancellation of ours cannot
        interrupt: it finishes the stop, and the gate's close waits for it.
        """
        spec = self.resolve(request)
        proc, plan = await self._launch(spec)
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        kill: asyncio.Future[None] = loop.create_future()
        # In the registry while we wait here (aclose stops us through ``kill``);
        # done when nothing of the call is left to supervise.
        over: asyncio.Future[None] = loop.create_future()
        self._live[over] = kill
        handed = False
        try:
            try:
                ended_by = await first_of(proc.watch, kill, _timeout_s(spec))
            except asyncio.CancelledError:
                # A caller cancellation is an abort, not a timeout: stop it all,
                # then re-raise. If we are cancelled again meanwhile, the
                # supervisor still finishes the stop (and the gate's close waits
                # for it). wait(), not gather(): cancelled again, gather would
                # cancel the supervisor too.
                if not kill.done():
                    kill.set_result(None)
                task = self._supervised(proc, spec, plan, kill, started, "kill", over)
                handed = True
                await asyncio.wait({task})
                raise
            if ended_by == "exit" and self._over(proc, plan):
                return self._conclude(proc, spec, plan, started, timed_out=False)
            # The supervisor hands its result over itself: shield(task) would take
            # a loop turn more. Cancelling ``result`` leaves the supervisor running.
            result: asyncio.Future[RunResult] = loop.create_future()
            task = self._supervised(proc, spec, plan, kill, started, ended_by, over, result)
            handed = True
            try:
                return await result
            except asyncio.CancelledError:
                if not kill.done():
                    kill.set_result(None)
                await asyncio.wait({task})
                raise
        finally:
            if not handed:
                self._settled(over)
            if plan.spare is not None:  # the next call's, once this one has returned
                self._spares.refill_soon(plan.spare)

    @final
    async def start(self, request: ExecRequest) -> TaskProcess:
        """Start in the background: no timeout; returns a handle at once."""
        spec = self.resolve(request, background=True)
        proc, plan = await self._launch(spec)
        if plan.spare is not None:
            self._spares.refill_soon(plan.spare)
        kill: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = self._supervised(proc, spec, plan, kill, time.monotonic())
        return TaskProcess(proc, spec, task, kill)

    def _supervised(
        self,
        proc: Proc,
        spec: ExecSpec,
        plan: SpawnPlan,
        kill: asyncio.Future[None],
        started: float,
        ended_by: Ending | None = None,
        over: asyncio.Future[None] | None = None,
        result: asyncio.Future[RunResult] | None = None,
    ) -> asyncio.Task[RunResult]:
        """Start the supervisor of a spawned command; its stop request is ``kill``.

        ``ended_by``: how the wait for the command already ended (run() waited);
        ``over`` is settled once the supervisor is done; ``result``, if given,
        gets the supervisor's outcome as soon as it has one.
        """
        work = self._supervise(proc, spec, plan, kill, started, ended_by)
        task = asyncio.ensure_future(work if result is None else _handing(work, result))
        if result is not None:  # its failure went to ``result``: seen there, not lost
            task.add_done_callback(_retrieve)
        self._live[task] = kill
        task.add_done_callback(self._forget)
        if over is not None:
            task.add_done_callback(lambda _: self._settled(over))
        return task

    def _forget(self, task: asyncio.Task[RunResult]) -> None:
        self._live.pop(task, None)

    def _settled(self, over: asyncio.Future[None]) -> None:
        self._live.pop(over, None)
        if not over.done():
            over.set_result(None)

    async def _launch(self, spec: ExecSpec) -> tuple[Proc, SpawnPlan]:
        if not self._opened:
            await self.open()
        if self._unavailable is not None:
            raise SandboxUnavailable(self._unavailable)
        plan = self._spawn_plan(spec)
        stdout = StreamBuffer("stdout", spec.max_output_bytes, spec.max_spill_bytes, self.spill)
        stderr = StreamBuffer("stderr", spec.max_output_bytes, spec.max_spill_bytes, self.spill)
        started = None
        launched = False
        try:
            if plan.spare is not None:
                request = encode_request(str(spec.cwd), plan.command, spec.env)
                if request is not None:
                    started = self._spares.take(plan.spare, request)
            proc = await Proc.spawn(
                plan.argv,
                cwd=None if plan.enters_workdir else str(spec.cwd),
                env=spec.env,
                pass_fds=plan.pass_fds,
                stdout=stdout,
                stderr=stderr,
                call_id=spec.call_id,
                term_depth=plan.term_depth,
                supervised=plan.supervised,
                started=started,
            )
            launched = True
        except (OSError, ValueError) as exc:  # ValueError: an environment name with '='
            if plan.cleanup is not None:
                plan.cleanup()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ExecutionError(f"cannot start the command: {reason}") from exc
        finally:
            for fd in plan.close_after_spawn:
                os.close(fd)
            if plan.spare is not None and not launched:
                # Nothing started, nothing to wait for: the next call's spare now
                # (else once the call has ended, see run and start).
                self._spares.refill_soon(plan.spare)
        return proc, plan

    @staticmethod
    def _over(proc: Proc, plan: SpawnPlan) -> bool:
        """Whether the call is over now that its command ended: both pipes at EOF
        and nothing of it left (what ``_supervise`` would find after its track and
        drain, without waiting). Runners with a sandbox's info or status pipe, or
        a PID namespace to see end, always take the supervisor's way."""
        if plan.info_fd is not None or plan.status_fd is not None or plan.pid_namespace:
            return False
        if not all(done.done() for done in proc.watch.eof.values()):
            return False
        return not proc.leftovers()

    def _conclude(
        self, proc: Proc, spec: ExecSpec, plan: SpawnPlan, started: float, *, timed_out: bool
    ) -> RunResult:
        """Close what the call held and say how it ended (nothing of it is left)."""
        try:
            proc.close_pumps()
            reported = read_status(plan.status_fd)
        finally:
            if plan.cleanup is not None:
                plan.cleanup()
        return self._result(proc, spec, started, timed_out, reported)

    async def _supervise(
        self,
        proc: Proc,
        spec: ExecSpec,
        plan: SpawnPlan,
        kill: asyncio.Future[None] | None,
        started: float,
        ended_by: Ending | None = None,
    ) -> RunResult:
        grace_s = spec.grace_ms / 1000
        timed_out = False
        ended = False  # a PID namespace's init exiting: nothing of the call is left
        try:
            timeout_s = _timeout_s(spec)
            # One deadline: a foreground call ends by timeout + grace, a stopped
            # call by its stop + grace (plus the kill and a short settle), whatever
            # its processes do after the leader.
            budget = Budget(None if timeout_s is None else timeout_s + grace_s, since=started)
            if ended_by is None:
                ended_by = await first_of(proc.watch, kill, timeout_s)
            if ended_by != "exit":
                # Only the executor's own timer sets "timed out"; a kill request doesn't.
                timed_out = ended_by == "timeout"
                budget = Budget(grace_s)
                await proc.stop(grace_s)
                await proc.wait_leader()
            proc.adopt(sandbox_child(plan.info_fd))
            ended = plan.pid_namespace and proc.namespace_ended()
            if not ended:
                await proc.track()
            await proc.drain(budget.within(grace_s))
            if not ended and proc.leftovers():
                await proc.stop(budget.within(grace_s))
                await proc.drain(budget.within(grace_s))
        except asyncio.CancelledError:  # the loop itself is going away
            proc.adopt(sandbox_child(plan.info_fd))
            await asyncio.shield(self._abort(proc))
            raise
        finally:
            proc.close_pumps()
            if proc.adopted is None:  # ended before bwrap's pid was read
                proc.adopt(sandbox_child(plan.info_fd))
            if ended and proc.adopted is not None:
                self._reaper.add(proc.adopted, grace_s)
            elif proc.adopted in proc.escapees:  # not reaped yet (else its pid may be reused)
                await reap_orphan(proc.adopted, grace_s)
            reported = read_status(plan.status_fd)
            if plan.cleanup is not None:
                plan.cleanup()
        return self._result(proc, spec, started, timed_out, reported)

    def _result(
        self, proc: Proc, spec: ExecSpec, started: float, timed_out: bool, reported: str | None
    ) -> RunResult:
        exit_code, signal = self._ending(proc.returncode, reported)
        stdout, stderr = proc.stdout.view(), proc.stderr.view()
        denied = self._denied(spec, exit_code, stderr)
        return RunResult.model_construct(  # values built here, types checked by mypy
            stdout=stdout,
            stderr=stderr,
            exit_code=exit_code,
            signal=signal,
            timed_out=timed_out,
            timeout_ms=spec.timeout_ms if timed_out else None,
            duration_ms=(time.monotonic() - started) * 1000,
            executor=self.kind,
            sandbox_mode=spec.sandbox_mode if self.sandboxes else None,
            sandbox_denied=denied,
            escalation_available=denied and self._can_escalate(spec.sandbox_mode),
        )

    def _ending(
        self, returncode: int | None, reported: str | None
    ) -> tuple[int | None, str | None]:
        """(exit code, signal name) of the command, preferring a supervisor's report."""
        return ending(returncode, reported)

    async def _abort(self, proc: Proc) -> None:
        await proc.stop(proc_grace(self.config.executor.grace_ms))
        if proc.returncode is None:  # pragma: no cover - SIGKILL'd group
            await proc.wait_leader()

    def _can_escalate(self, mode: SandboxMode) -> bool:
        return False

    # -- what implementations write -------------------------------------------

    @abstractmethod
    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        """The argv (with confinement) for ``spec``; must run ``spec.shell -c command``."""

    async def _probe(self) -> None:  # noqa: B027 - optional hook, default: nothing to probe
        """Raise :class:`SandboxUnavailable` if the backend cannot be used here."""

    def _denied(self, spec: ExecSpec, exit_code: int | None, stderr: OutputView) -> bool:
        """Whether a failed command shows the backend's denial signature."""
        return False


async def _handing(
    work: Coroutine[Any, Any, RunResult], out: asyncio.Future[RunResult]
) -> RunResult:
    """``await work``, handing its outcome to ``out`` from inside this step (unless
    ``out`` was cancelled: its waiter is gone). Whoever awaits ``out`` wakes one
    loop turn after ``work`` ends, not two as through ``shield``."""
    try:
        value = await work
    except asyncio.CancelledError:
        if not out.done():
            out.cancel()
        raise
    except BaseException as exc:
        if not out.done():
            out.set_exception(exc)
        raise
    if not out.done():
        out.set_result(value)
    return value


Ending = Literal["exit", "kill", "timeout"]


def _timeout_s(spec: ExecSpec) -> float | None:
    return spec.timeout_ms / 1000 if spec.timeout_ms is not None else None


def _retrieve(task: asyncio.Task[RunResult]) -> None:
    if not task.cancelled():
        task.exception()


def _resolve_shell(shell: str, untrusted: Sequence[str]) -> str:
    path = find_program(shell, untrusted)
    if path is None or not os.access(path, os.X_OK):
        raise ExecutionError(f"shell not found: {shell}")
    return os.path.realpath(path)


def shell_argv(spec: ExecSpec) -> list[str]:
    return [spec.shell, "-c", spec.command]


__all__: Sequence[str] = [
    "ExecRequest",
    "ExecSpec",
    "Executor",
    "OutputDelta",
    "SpawnPlan",
    "TaskProcess",
    "shell_argv",
]
