"""Processes as resources: spawn in a new session, pump output, stop by escalation.

OS realities this module is written around:

* Every command is the leader of a new session and process group
  (``start_new_session``), so ``killpg`` reaches everything that did not leave.
* A reused pgid must never be signalled. A pgid can only be reused once the group
  is empty, so before every signal we ask the kernel (``killpg(pgid, 0)``) whether
  the group still has members, and the stop loop polls that until it is empty.
  Zombies still count as members: orphaned members reparented to the gate (a
  child subreaper) are reaped here so the group can empty.
* Descendants that leave the group (``setsid``, double fork) are found below
  the leader while it lives. Under the local executor the leader is the call's
  supervisor (``sg-exec --subreaper``), a child subreaper itself, so every
  process of the call stays below it — and dies with it if the gate dies. They
  also carry the call's ``SHELLGATE_CALL_ID`` in their environment: orphans that
  reach the gate (subreaper) after the leader is gone are found among its
  children by that marker.
* One grace for everything: SIGTERM goes to the group and every escapee found
  at once, SIGKILL to all that is left after the grace, so a call ends within
  its deadline plus one grace whatever its processes do.
* The child-side settings (parent-death signal, no_new_privs, rlimits, bounding
  set) are applied by a tiny static helper in the argv, not by ``preexec_fn``,
  which would cost CPython its vfork fast path.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field

from shellgate.executors._output import StreamBuffer
from shellgate.executors._procfs import (
    carries,
    children,
    descendants,
    ending,
    group_alive,
    has_children,
    signal_pid,
    stat_fields,
)
from shellgate.executors._reaper import reap_orphan
from shellgate.executors._spawn import IDLE_SPARES, Child, Watch, spawn_child

_POLL_S = 0.01  # tree-exit watcher interval, at most

__all__ = ["Proc", "reap_orphan", "signal_name"]  # reap_orphan: re-exported


@dataclass
class Proc:
    """One spawned command: its leader, its group, its pipes and its escapees."""

    child: Child
    watch: Watch
    stdout: StreamBuffer
    stderr: StreamBuffer
    call_id: str
    term_depth: int = 0
    escapees: set[int] = field(default_factory=set)
    signalled: bool = False
    unsure: bool = False  # a gate child whose environment could not be read yet
    adopted: int | None = None  # a process the runner started for us (see adopt)
    gone: bool = False  # nothing of the call is left, for good (see leftovers)
    _termed: set[int] = field(default_factory=set)

    @property
    def pid(self) -> int:
        return self.child.pid

    @property
    def returncode(self) -> int | None:
        """How the command ended: a supervisor's report, else the leader's status."""
        if self.watch.reported is not None:
            return self.watch.reported
        return self.child.returncode

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: dict[str, str],
        pass_fds: Sequence[int],
        stdout: StreamBuffer,
        stderr: StreamBuffer,
        call_id: str,
        term_depth: int = 0,
        supervised: bool = False,
        started: Child | None = None,
    ) -> Proc:
        """Start ``argv``; ``cwd=None``: the argv enters the workdir itself (fast path).

        ``supervised``: the argv is ``sg-exec --subreaper`` (see ``spawn_child``).
        ``started``: a spare supervisor already given this call (``_spare``),
        watched instead of spawning ``argv``.
        """
        # Spawned on the loop's thread: the parent-death signal follows this thread.
        child = started or spawn_child(
            argv, cwd=cwd, env=env, pass_fds=pass_fds, supervised=supervised
        )
        try:
            watch = Watch(child, stdout, stderr)
        except BaseException:
            child.kill()
            child.close_fds()
            raise
        return cls(
            child=child,
            watch=watch,
            stdout=stdout,
            stderr=stderr,
            call_id=call_id,
            term_depth=term_depth,
        )

    async def wait_leader(self) -> int:
        await asyncio.shield(self.watch.exited)
        code = self.returncode
        assert code is not None
        return code

    async def drain(self, timeout_s: float) -> bool:
        """Wait for both pipes to reach EOF, at most ``timeout_s``."""
        pending = [f for f in self.watch.eof.values() if not f.done()]
        if not pending:
            return True
        _, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still

    def adopt(self, pid: int | None) -> None:
        """Treat ``pid`` (a process the runner started, e.g. bwrap's sandbox) as ours.

        Only a child of the gate or of this call's leader is taken, so a wrong
        pid can never make the gate signal or reap somebody else's process. It is
        then stopped with the call and reaped once it is a zombie: orphans whose
        environment can no longer be read are otherwise left to pile up.
        """
        if pid is None or pid == self.adopted:
            return
        fields = stat_fields(pid)
        if fields is not None and fields[1] in (os.getpid(), self.pid):
            self.escapees.add(pid)
            self.adopted = pid

    def namespace_ended(self) -> bool:
        """For a runner that keeps every other process of the call in a PID
        namespace (``SpawnPlan.pid_namespace``): whether the leader is reaped and
        that namespace's init (adopted) is a zombie or exiting.

        Then nothing of the call runs or can start any more: the init's exit
        SIGKILLs every process left in its namespace (and becomes a zombie only
        once they are gone), and no process leaves a PID namespace. So no /proc
        scan is needed; the init is reaped by the executor's :class:`Reaper`.
        """
        if self.adopted is None or self.child.returncode is None:
            return False
        return ending(self.adopted, os.getpid())

    def _find_escapees(self, gate_children: list[int]) -> set[int]:
        """Live processes of this call outside its group.

        Found below the leader while it lives (where the local executor's
        supervisor, a subreaper, keeps every one of them), and among the gate's
        children by the call's environment marker (orphans of a leader that is
        gone, or that was never a subreaper). Sets ``self.unsure`` when a child
        of the gate could not be read yet.
        """
        marker = f"SHELLGATE_CALL_ID={self.call_id}".encode()
        found: set[int] = set()
        frontier: list[int] = []
        self.unsure = False
        if self.term_depth == 0:
            # A runner's tree (term_depth > 0: bwrap) is its own session by design.
            for pid in descendants(self.pid):
                fields = stat_fields(pid)
                if fields is not None and fields[2] != self.pid and fields[0] not in ("Z", "X"):
                    frontier.append(pid)
        for pid in gate_children:
            if pid == self.pid:
                continue
            ours = carries(pid, marker)
            if ours is None:
                self.unsure = True
            elif ours:
                frontier.append(pid)
        frontier += [p for p in self.escapees if stat_fields(p) is not None]
        while frontier:
            pid = frontier.pop()
            if pid in found:
                continue
            found.add(pid)
            frontier.extend(children(pid))
        return found

    def _reap_orphans(self, gate_children: list[int]) -> None:
        """Reap zombies of this call that were reparented to the gate."""
        for pid in gate_children:
            if pid == self.pid:
                continue
            fields = stat_fields(pid)
            if fields is None or fields[0] != "Z":
                continue
            if fields[2] == self.pid or pid in self.escapees:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                self.escapees.discard(pid)

    def leftovers(self) -> bool:
        """Whether anything of this call is still alive (group members or escapees)."""
        if self.gone:
            return False
        gate_children = children(os.getpid()) if has_children() else []
        if IDLE_SPARES:
            gate_children = [pid for pid in gate_children if pid not in IDLE_SPARES]
        if not gate_children:
            # Every process of a call descends from the gate (orphans are
            # reparented to it, the subreaper): no children (or idle spares
            # alone), nothing left — and nothing can start again, so later
            # looks need no system call.
            self.escapees.clear()
            self.unsure = False
            self.gone = True
            return False
        others = any(pid != self.pid for pid in gate_children)
        if others:
            self._reap_orphans(gate_children)
        below = self.term_depth == 0 and self.pid in gate_children
        if others or below or self.escapees:
            self.escapees = self._find_escapees(gate_children if others else [])
        else:
            self.unsure = False
        return group_alive(self.pid) or bool(self.escapees) or self.unsure

    async def track(self) -> None:
        """Attribute this call's orphans now, while they are alive.

        Called when the leader has exited, before the drain: an orphan that holds
        the pipes and dies during the drain has no environment left to carry the
        call's marker, so unless it was seen alive it could not be reaped and
        would stay a zombie of the gate. A process caught mid-``exec`` (unreadable
        environment) is looked at again a few times, briefly.
        """
        pause = 0.0005
        for _ in range(6):
            self.leftovers()
            if not self.unsure:
                return
            await asyncio.sleep(pause)
            pause *= 2

    def _below(self, depth: int) -> list[int]:
        """Descendants of the leader at least ``depth`` levels down (from /proc)."""
        found: list[int] = []
        level = [self.pid]
        for current in range(1, 64):
            level = [kid for pid in level for kid in children(pid)]
            if not level:
                break
            if current >= depth:
                found.extend(level)
        return found

    def _signal_all(self, sig: int) -> None:
        """TERM: the group once, and every target found so far once; KILL: all of it."""
        targets = list(self.escapees)
        if self.term_depth > 0 and sig == signal.SIGTERM:
            # The runner (bwrap) does not forward signals, and killing it kills the
            # sandbox with SIGKILL: TERM goes to what runs inside it instead.
            targets += self._below(self.term_depth)
        elif group_alive(self.pid) and (sig != signal.SIGTERM or self.pid not in self._termed):
            self._termed.add(self.pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
        for pid in targets:
            if sig == signal.SIGTERM:
                if pid in self._termed:
                    continue
                self._termed.add(pid)
            signal_pid(pid, sig)

    async def stop(self, grace_s: float) -> None:
        """SIGTERM the group and escapees, SIGKILL what is left after ``grace_s``.

        Returns once the group is empty and every escapee is gone (SIGKILL cannot
        be ignored, so the second wait is short). Targets found during either
        wait get the same signal as the rest: one grace for everything, however
        late it shows up.
        """
        if not self.leftovers():
            return
        self.signalled = True
        self._signal_all(signal.SIGTERM)
        if await self._wait_gone(grace_s, signal.SIGTERM):
            return
        self._signal_all(signal.SIGKILL)
        await self._wait_gone(max(grace_s, 1.0), signal.SIGKILL)

    async def _wait_gone(self, timeout_s: float, sig: int) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        pause = 0.001  # most groups empty within a millisecond of the leader: back off
        while True:
            if not self.leftovers():
                return True
            if loop.time() >= deadline:
                return False
            # Targets found late (escapees read mid-exec, orphans of a killed
            # process, processes of a sandbox that was still starting) get the
            # signal too: SIGTERM once each, SIGKILL again every round.
            self._signal_all(sig)
            await asyncio.sleep(pause)
            pause = min(pause * 2, _POLL_S)

    def close_pumps(self) -> None:
        """Close our ends of the pipes (the group is already stopped)."""
        self.watch.close()
        self.stdout.close()
        self.stderr.close()


def signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
