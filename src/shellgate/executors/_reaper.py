"""Reaping orphans of a call that were reparented to the gate (a child subreaper).

:func:`reap_orphan` waits for one (bounded, SIGKILL after the timeout);
:class:`Reaper` takes the exiting first process of an ended sandbox off the
call's path and reaps it when its pidfd fires.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal

from shellgate.executors._procfs import signal_pid, stat_fields

_POLL_S = 0.01  # poll interval, at most

async def reap_orphan(pid: int | None, timeout_s: float) -> None:
    """Reap ``pid``, an orphan reparented to the gate, killing it after ``timeout_s``.

    Only acts while ``pid`` is a child of this process (so never on a stranger);
    it stays one until reaped, which is what makes the kill safe.
    """
    if pid is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    pause = 0.001
    while True:
        fields = stat_fields(pid)
        if fields is None or fields[1] != os.getpid():
            return
        if fields[0] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            return
        if loop.time() >= deadline:
            # Still our child, so still this process: SIGKILL, then poll until it
            # is collectable (never a blocking wait on the event loop).
            signal_pid(pid, signal.SIGKILL)
            deadline = math.inf
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL_S)


class Reaper:
    """Reaps the exiting first processes of ended sandboxes off the call's path.

    A sandbox's PID-namespace init takes a millisecond or more to tear its
    namespaces down after its command ended; nothing of the call can run any
    more, so the call returns at once and the init is reaped when its pidfd says
    it is a zombie. :meth:`aclose` (the executor's close) waits for the rest.
    """

    def __init__(self) -> None:
        # pid -> its pidfd and the loop watching it
        self._pending: dict[int, tuple[int, asyncio.AbstractEventLoop]] = {}
        self._slow: set[asyncio.Task[None]] = set()

    def add(self, pid: int, timeout_s: float) -> None:
        """Reap ``pid`` (a child of the gate, exiting) now if it is a zombie, else later."""
        if self._reap(pid):
            return
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(pid)
        except OSError:  # gone meanwhile (reaped behind our back): nothing to wait for
            self._reap(pid)
            return
        self._pending[pid] = (fd, loop)
        loop.add_reader(fd, self._exited, pid, timeout_s)

    def _exited(self, pid: int, timeout_s: float) -> None:
        fd, loop = self._pending.pop(pid)
        loop.remove_reader(fd)
        os.close(fd)
        if not self._reap(pid):  # said to have exited, not yet collectable: poll
            task = asyncio.ensure_future(reap_orphan(pid, timeout_s))
            self._slow.add(task)
            task.add_done_callback(self._slow.discard)

    @staticmethod
    def _reap(pid: int) -> bool:
        try:
            got, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        return got != 0

    async def aclose(self, timeout_s: float) -> None:
        """Reap every pending one, SIGKILLing what is still not a zombie after ``timeout_s``."""
        pending, self._pending = self._pending, {}
        for fd, loop in pending.values():
            loop.remove_reader(fd)
            os.close(fd)
        waits = [reap_orphan(pid, timeout_s) for pid in pending]
        await asyncio.gather(*waits, *self._slow)
