"""What crosses the executor seam: requests, resolved specs, spawn plans, task handles.

Plain data (and the background handle), split from ``base`` so the seam's
invariants there read on one screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from shellgate.config import Limits
from shellgate.executors._output import complete_prefix, decode_tail
from shellgate.executors._process import Proc
from shellgate.models import RunResult, SandboxMode


@dataclass(frozen=True)
class ExecRequest:
    """What the tools ask an executor to run (already approved by the gate)."""

    command: str
    workdir: str | None = None
    timeout_ms: int | None = None  # None: the configured default
    env: Mapping[str, str] = field(default_factory=dict)  # trusted caller entries
    managed_env: Mapping[str, str] = field(default_factory=dict)  # SHELLGATE_* facts
    sandbox_mode: SandboxMode | None = None  # None: the configured mode


@dataclass(frozen=True)
class ExecSpec:
    """A resolved request: every default applied, every path canonical."""

    command: str
    cwd: Path
    workspace: Path
    env: dict[str, str]
    timeout_ms: int | None  # None for background tasks
    grace_ms: int
    max_output_bytes: int
    max_spill_bytes: int
    sandbox_mode: SandboxMode
    limits: Limits
    shell: str
    call_id: str


@dataclass
class SpawnPlan:
    """An implementation's answer: the argv, fds to pass, and cleanup after exit.

    ``term_depth`` says where SIGTERM goes: 0 is the whole process group (the
    command is the leader); N > 0 is every descendant N or more levels below the
    leader — a sandbox runner that does not forward signals stays out of it, and
    SIGKILL after the grace still goes to the whole group. ``status_fd`` is the
    read end of a pipe on which a supervisor inside reports how the command
    really ended (``exit N`` / ``signal N``); the executor closes it in
    ``cleanup``. ``close_after_spawn`` are the gate's copies of fds passed down.
    ``info_fd`` is the read end of bwrap's ``--info-fd``, which names the
    sandbox's first process; bwrap exits before it, so it is reparented to the
    gate, and the executor stops and reaps it with the call. ``pid_namespace``:
    that first process is the init of a PID namespace holding every process of
    the call but the leader, so once the leader is reaped and the init exits the
    call is over without a look at /proc (see ``Proc.namespace_ended``).
    ``enters_workdir``: the argv itself enters the working directory and closes
    every inherited descriptor (``sg-exec --chdir --close-fds``), so the executor
    may spawn with ``posix_spawn``, which has neither a cwd nor close_fds.
    ``supervised``: the argv's helper stays as the call's supervisor
    (``sg-exec --subreaper``) and reports on a status pipe the executor puts at
    ``_process.SUPERVISOR_FD`` (needs ``enters_workdir``). ``spare``: the argv
    of a supervisor started ahead of its call (``sg-exec --request``, see
    ``_spare``) that may run this call instead of ``argv``: the same helper and
    hardening, given the workdir, ``command`` and environment on a socket.
    """

    argv: list[str]
    enters_workdir: bool = False
    pass_fds: tuple[int, ...] = ()
    cleanup: Callable[[], None] | None = None
    term_depth: int = 0
    status_fd: int | None = None
    info_fd: int | None = None
    close_after_spawn: tuple[int, ...] = ()
    supervised: bool = False
    pid_namespace: bool = False
    spare: tuple[str, ...] | None = None
    command: tuple[str, ...] = ()


TaskStatus = Literal["running", "completed", "killed"]


@dataclass(frozen=True)
class OutputDelta:
    stdout: str
    stderr: str
    lost: bool
    spill_paths: tuple[str, ...]


class TaskProcess:
    """A background command: status, incremental output, kill, completion."""

    def __init__(
        self,
        proc: Proc,
        spec: ExecSpec,
        done: asyncio.Task[RunResult],
        kill: asyncio.Future[None],
    ) -> None:
        self._proc = proc
        self.spec = spec
        self.done = done
        self.kill_requested = False
        self._kill = kill
        self._offsets = [0, 0]

    @property
    def result(self) -> RunResult | None:
        if not self.done.done() or self.done.cancelled() or self.done.exception() is not None:
            return None
        return self.done.result()

    @property
    def status(self) -> TaskStatus:
        result = self.result
        if result is None:
            return "running"
        return "killed" if result.signal is not None else "completed"

    def read_output(self) -> OutputDelta:
        """Output since the previous call (non-destructive for the collector)."""
        final = self.result is not None
        texts: list[str] = []
        lost = False
        spills: list[str] = []
        for index, buf in enumerate((self._proc.stdout, self._proc.stderr)):
            chunk = buf.read_from(self._offsets[index])
            data = chunk.data
            if not final:
                data = data[: complete_prefix(data)]
            self._offsets[index] = chunk.start + len(data)
            texts.append(decode_tail(data, cut=chunk.lost, final=True))
            if chunk.lost:
                lost = True
                if buf.spill_path is not None:
                    spills.append(str(buf.spill_path))
        return OutputDelta(stdout=texts[0], stderr=texts[1], lost=lost, spill_paths=tuple(spills))

    def kill(self) -> bool:
        """Request SIGTERM → grace → SIGKILL. False if it had already finished."""
        if self.done.done():
            return False
        self.kill_requested = True
        if not self._kill.done():
            self._kill.set_result(None)
        return True
