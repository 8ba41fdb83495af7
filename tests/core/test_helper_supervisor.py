"""``sg-exec --subreaper``: the local executor's per-call supervisor, on its own.

The helper stays as the session leader, forks the hardened command, exits as the
command did, reports on its status descriptor when processes of the call outlive
the command, and SIGKILLs its whole subtree when its parent (the gate) dies.
Each test runs the installed helper and the same source built over libc.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shellgate.approval import AllowApprover
from shellgate.executors import _hardening
from shellgate.gate import Gate
from tests.conftest import (
    make_config,
    pids_with_arg,
    reap_orphans,
    unique_seconds,
    wait_until,
    zombie_children,
)

pytestmark = pytest.mark.skipif(
    _hardening._trusted_helper() is None, reason="the sg-exec helper was not built here"
)

FD = 3  # where the gate puts the status pipe


def supervised(binary: Path, script: str, *, parent: int | None = None) -> list[str]:
    return [
        str(binary), "--close-fds", "--subreaper", str(FD), str(parent or os.getpid()),
        "0", "0", "0", "0", "0", "0", "--", "/bin/sh", "-c", script,
    ]  # fmt: skip


def start(
    argv: list[str], *, preexec: Callable[[], None] | None = None, **kwargs: object
) -> tuple[subprocess.Popen[bytes], int]:
    """Spawn ``argv`` as the gate does (own session), with a status pipe at fd 3.

    The pipe is put at fd 3 in the child only (a dup2 between fork and exec,
    before ``preexec``). This process's own fd 3 may be pytest-xdist's
    channel to its controller, which a dup2 here replaced under the channel's
    reader thread for the length of a spawn: a worker crashed so under -n 4.
    ``close_fds`` would close fd 3 again; the helper's --close-fds closes all
    else above stderr but the pipe.
    """
    read, write = os.pipe2(os.O_CLOEXEC)

    def in_child() -> None:
        os.dup2(write, FD)  # inheritable: the helper gets it
        if preexec is not None:
            preexec()

    try:
        proc = subprocess.Popen(  # type: ignore[call-overload]
            argv, close_fds=False, start_new_session=True, preexec_fn=in_child, **kwargs
        )
    finally:
        os.close(write)
    return proc, read


def status(read: int) -> bytes:
    os.set_blocking(read, False)
    try:
        return os.read(read, 64)
    except BlockingIOError:
        return b""
    finally:
        os.close(read)


def _core_limit_up() -> None:
    """Core dumps allowed (as far as the hard limit goes): the supervisor must
    still not dump one when it re-raises the command's SIGSEGV."""
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


@pytest.mark.parametrize(
    ("script", "code"),
    [
        pytest.param("exit 3", 3, id="exit"),
        pytest.param("kill -TERM $$", -signal.SIGTERM, id="sigterm"),
        pytest.param("kill -KILL $$", -signal.SIGKILL, id="sigkill"),
        # The command dumps (or not) in its own directory; the supervisor's would be here.
        pytest.param("cd elsewhere && kill -SEGV $$", -signal.SIGSEGV, id="sigsegv"),
    ],
)
def test_the_supervisor_exits_as_the_command_did(
    helper_binary: Path, tmp_path: Path, script: str, code: int
) -> None:
    workdir = tmp_path / "workdir"
    (workdir / "elsewhere").mkdir(parents=True)
    argv = supervised(helper_binary, script)
    proc, read = start(argv, cwd=workdir, preexec=_core_limit_up)
    assert proc.wait(timeout=10) == code
    assert status(read) == b""  # nothing else of the call was left: no report
    assert sorted(p.name for p in workdir.iterdir()) == ["elsewhere"]  # no core of ours


def test_the_command_is_hardened_and_the_supervisor_holds_nothing_of_it(
    helper_binary: Path,
) -> None:
    argv = supervised(helper_binary, "grep -E '^(NoNewPrivs|SigIgn)' /proc/self/status; ulimit -n")
    argv[5] = "123"  # NOFILE
    proc, read = start(argv, stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=10)
    status(read)
    assert out.decode() == "SigIgn:\t0000000000000000\nNoNewPrivs:\t1\n123\n"
    probe = supervised(helper_binary, f"[ -e /proc/self/fd/{FD} ] && echo open || echo closed")
    proc, read = start(probe, stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=10)
    status(read)
    assert out == b"closed\n"  # the status pipe is the supervisor's alone


def test_processes_that_outlive_the_command_are_reported_and_held(helper_binary: Path) -> None:
    """The command exits 4 and leaves a sleep behind: the supervisor says "exit 4",
    lets go of the output pipe (EOF while the sleep lives), survives the group's
    SIGTERM, reaps the sleep and only then exits — as the command did."""
    marker = f"sleep {unique_seconds()}"
    proc, read = start(
        supervised(helper_binary, f"echo out; {marker} >/dev/null & exit 4"),
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.read() == b"out\n"  # EOF: neither the sleep nor the supervisor holds it
    assert wait_until(lambda: bool(pids_with_arg(marker)), 5)
    os.set_blocking(read, True)
    assert os.read(read, 64) == b"exit 4\n"
    assert proc.poll() is None  # still the sleep's subreaper
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=10) == 4
    assert not pids_with_arg(marker)
    proc.stdout.close()
    os.close(read)


def test_a_signal_sent_before_the_command_exists_reaches_it(helper_binary: Path) -> None:
    """A call stopped as it starts: SIGTERM to the group may arrive before the
    fork. The command gets it all the same (it used to be lost, and the command
    ran until the SIGKILL after the grace)."""
    worst = 0.0
    for attempt in range(30):
        started = time.monotonic()
        proc, read = start(supervised(helper_binary, "exec sleep 30"))
        if attempt % 3:
            time.sleep(0.0003 * attempt)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=10) == -signal.SIGTERM
        status(read)
        worst = max(worst, time.monotonic() - started)
    assert worst < 5  # never the sleep's 30 s


#: A stand-in for the gate: spawns the supervisor as the gate does, then waits
#: to be SIGKILLed.
PARENT = textwrap.dedent(
    """
    import fcntl, os, subprocess, sys, time
    read, write = os.pipe()
    os.dup2(write, 3)
    argv = [sys.argv[1], "--close-fds", "--subreaper", "3", str(os.getpid()),
            "0", "0", "0", "0", "0", "0", "--", "/bin/sh", "-c", sys.argv[2]]
    proc = subprocess.Popen(argv, pass_fds=(3,), start_new_session=True)
    print(proc.pid, flush=True)
    time.sleep(60)
    """
)


def test_the_whole_subtree_dies_with_the_parent(helper_binary: Path) -> None:
    m = unique_seconds()
    script = (
        f"sleep {m}1 & setsid sleep {m}2 & (setsid sh -c 'sleep {m}3 & :' &); "
        f"setsid env -i sleep {m}4 & trap '' TERM; sleep {m}5"
    )
    sleeps = [f"sleep {m}{i}" for i in range(1, 6)]
    zombies = zombie_children()
    argv = [sys.executable, "-c", PARENT, str(helper_binary), script]
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as parent:
        assert parent.stdout is not None
        supervisor = int(parent.stdout.readline())
        try:
            assert wait_until(lambda: all(pids_with_arg(s) for s in sleeps), 10)
            parent.send_signal(signal.SIGKILL)
            parent.wait()
            assert wait_until(lambda: not any(pids_with_arg(s) for s in sleeps), 10)
            assert wait_until(lambda: supervisor not in pids_with_arg("--subreaper"), 5)
        finally:
            for pid in (p for s in sleeps for p in pids_with_arg(s)):
                os.kill(pid, signal.SIGKILL)  # only after a failure: leave nothing behind
            reap_orphans(zombies)  # the supervisor, orphaned to this process


FULL_HELPER = """#!/bin/sh
# An sg-exec from before --subreaper: that option is a usage error (exit 126).
for a; do [ "$a" = --subreaper ] && exit 126; [ "$a" = -- ] && break; done
while :; do case "$1" in --chdir) cd "$2" || exit 126; shift 2;; --close-fds) shift;; *) break;; esac; done
shift 8
exec "$@"
"""


async def test_a_helper_without_the_supervisor_is_still_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Used, but with a warning to rebuild: without the supervisor, what a call
    leaves running would outlive a killed gate."""
    old = tmp_path / "sg-exec"
    old.write_text(FULL_HELPER)
    old.chmod(0o755)
    monkeypatch.setattr(_hardening, "HELPER", old)
    assert _hardening._helper_features(str(old)) == "full"
    assert "out of date" in caplog.text
    hardening = _hardening.Hardening.detect()
    assert (hardening.enters_workdir, hardening.supervises) == (True, False)
    gate = Gate(make_config(tmp_path), approver=AllowApprover())
    await gate.open()
    try:
        result = await gate.call("bash", {"command": "pwd; exit 3", "description": "where"})
    finally:
        await gate.aclose()
    assert result.text == f"{os.path.realpath(tmp_path / 'ws')}\n[exit code: 3]"
