"""The executor's reaper of exiting sandbox inits, on real child processes.

A sandboxed call returns as soon as its PID namespace's init is exiting; the
init is reaped later, when its pidfd says it is a zombie, and the executor's
close reaps whatever is still pending (SIGKILL after the grace).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from shellgate.executors._procfs import ending
from shellgate.executors._reaper import Reaper
from tests.conftest import wait_until


def _child(*argv: str) -> int:
    # Popen, then let it go: the reaper (not Popen) must collect the status.
    proc = subprocess.Popen([*argv], stdin=subprocess.DEVNULL)
    proc.returncode = 0  # Popen's own finaliser leaves the pid alone now
    return proc.pid


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] == b"Z"


def _gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}")


def test_ending_tells_a_running_child_from_a_zombie_and_a_stranger() -> None:
    pid = _child("sleep", "30")
    try:
        assert not ending(pid, os.getpid())  # running: its own code still runs
        assert not ending(1, os.getpid())  # not our child
        os.kill(pid, 9)
        assert wait_until(lambda: _is_zombie(pid), timeout_s=5)
        assert ending(pid, os.getpid())
        assert not ending(pid, os.getpid() + 1)  # somebody else's zombie: never ours to reap
    finally:
        os.waitpid(pid, 0)
    assert not ending(pid, os.getpid())  # gone


async def test_a_child_is_reaped_when_it_exits_off_the_callers_path() -> None:
    reaper = Reaper()
    pid = _child("sleep", "0.2")
    reaper.add(pid, 5.0)  # returns at once: the child still runs
    assert not _gone(pid)
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # the loop runs the pidfd callback
    assert _gone(pid), "the exited child was not reaped"
    await reaper.aclose(1.0)


async def test_a_zombie_is_reaped_at_once() -> None:
    reaper = Reaper()
    pid = _child("true")
    assert wait_until(lambda: _is_zombie(pid), timeout_s=5)
    reaper.add(pid, 5.0)
    assert _gone(pid)
    await reaper.aclose(1.0)


async def test_close_kills_and_reaps_what_never_exits_within_the_grace() -> None:
    reaper = Reaper()
    pid = _child("sleep", "300")
    reaper.add(pid, 0.2)
    started = time.monotonic()
    await reaper.aclose(0.2)
    assert _gone(pid)
    assert time.monotonic() - started < 2.0  # the grace (0.2 s), with a 10x margin
