"""How a call ends: the one deadline and what tells how the command ended.

:func:`first_of` says which comes first, the leader's exit, a stop request or the
timer; :class:`Budget` is what is left of the deadline for the drain and the stop
after it; :func:`read_status` and :func:`sandbox_child` read the supervisor's status
pipe and bwrap's info pipe once every writer is gone; :func:`ending` turns the
return code and the supervisor's report into (exit code, signal name).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Literal

from shellgate.executors._process import signal_name
from shellgate.executors._spawn import Watch


async def first_of(
    watch: Watch, kill: asyncio.Future[None] | None, timeout_s: float | None
) -> Literal["exit", "kill", "timeout"]:
    """Which comes first: the command's end (``watch.exited``), a kill request, or the timer.

    One future completed by callbacks: no task per source, no extra loop turns
    on the hot path (a trivial command is a few milliseconds in all). The end
    of the command completes it from the watch's own callback (its listener),
    not from a done-callback of ``exited``, which would run a loop turn later.
    """
    if watch.exited.done():
        return "exit"
    loop = asyncio.get_running_loop()
    first: asyncio.Future[Literal["exit", "kill", "timeout"]] = loop.create_future()

    def fire(reason: Literal["exit", "kill", "timeout"]) -> None:
        if not first.done():
            first.set_result(reason)

    def on_exit() -> None:
        fire("exit")

    def on_kill(_: object) -> None:
        fire("kill")

    watch.listener = on_exit
    if kill is not None:
        if kill.done():
            fire("kill")
        kill.add_done_callback(on_kill)
    timer = loop.call_later(timeout_s, fire, "timeout") if timeout_s is not None else None
    try:
        return await first
    finally:
        watch.listener = None
        if kill is not None:
            kill.remove_done_callback(on_kill)
        if timer is not None:
            timer.cancel()


#: What a phase after the deadline still gets: time to read what dead writers
#: left in the pipes, or between a late SIGTERM and its SIGKILL.
_SETTLE_S = 0.25


class Budget:
    """The time left before a call's deadline (none: no deadline, a background task)."""

    def __init__(self, seconds: float | None, *, since: float | None = None) -> None:
        start = time.monotonic() if since is None else since
        self._end = None if seconds is None else start + seconds

    def within(self, seconds: float) -> float:
        """``seconds``, cut to what is left, but never below a short settle."""
        if self._end is None:
            return seconds
        left = self._end - time.monotonic()
        return max(min(seconds, left), min(seconds, _SETTLE_S))


def read_status(fd: int | None) -> str | None:
    """The last line a supervisor wrote on the status pipe (every writer is gone)."""
    if fd is None:
        return None
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 256)
    except OSError:
        return None
    lines = data.decode("ascii", "replace").split()
    return " ".join(lines[-2:]) if len(lines) >= 2 else None


def sandbox_child(fd: int | None) -> int | None:
    """The ``child-pid`` bwrap wrote on its info pipe (its writers are gone by now).

    bwrap closes the pipe before the command runs, so nothing in the sandbox can
    write here; the pid is still checked by :meth:`Proc.adopt`.
    """
    if fd is None:
        return None
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 4096)
        info = json.loads(data)
    except (OSError, ValueError):
        return None  # bwrap failed before it got that far: nothing was started
    pid = info.get("child-pid") if isinstance(info, dict) else None
    return pid if type(pid) is int and pid > 1 else None


def proc_grace(grace_ms: int) -> float:
    return grace_ms / 1000


def ending(returncode: int | None, reported: str | None) -> tuple[int | None, str | None]:
    """(exit code, signal name) of a command, preferring a supervisor's report
    (``exit N`` or ``signal N`` on its status pipe) to the leader's return code."""
    if reported is not None:
        kind, _, value = reported.partition(" ")
        if value.isdigit():
            number = int(value)
            if kind == "exit":
                return number, None
            if kind == "signal":
                return None, signal_name(-number)
    if returncode is None or returncode >= 0:
        return returncode, None
    return None, signal_name(returncode)
