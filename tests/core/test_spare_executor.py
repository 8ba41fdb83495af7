"""The local executor's spare supervisor (executors/_spare.py) through real calls.

After a call, the executor starts the next call's supervisor on the loop's next
turn; the next call is handed to it. Whatever keeps a spare from taking a call
(a request too large, a dead spare, other limits, another thread) makes that call
spawn afresh, with the same result; a spare let go is reaped (the autouse
fixture fails any test that leaves a zombie).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from shellgate.executors import _hardening
from shellgate.executors._procfs import children, read_proc, stat_fields
from shellgate.executors._spare import REQUEST_MAX
from shellgate.executors._spawn import IDLE_SPARES
from shellgate.executors.local import LocalExecutor
from shellgate.executors.requests import ExecRequest
from tests.conftest import make_config, wait_until

pytestmark = pytest.mark.skipif(
    not _hardening.Hardening.detect().spares, reason="the sg-exec helper cannot wait for a call here"
)


async def settled(executor: LocalExecutor) -> int:
    """The pid of the spare started after the last call (one loop turn later)."""
    await asyncio.sleep(0)
    spare = executor._spares.idle
    assert spare is not None
    return spare.pid


async def forked(spare: int) -> int:
    """The command the spare forked ahead of its call (it does so as it starts,
    so the spare's own exec is complete then)."""
    assert wait_until(lambda: len(children(spare)) == 1, 5)
    (waiting,) = children(spare)
    return waiting


@pytest.fixture
async def executor(tmp_path: Path) -> Any:
    ex = LocalExecutor(make_config(tmp_path))
    await ex.open()
    yield ex
    await ex.aclose()


async def test_the_next_call_runs_under_the_spare(executor: LocalExecutor, tmp_path: Path) -> None:
    first = await executor.run(ExecRequest(command="echo $PPID"))
    spare = await settled(executor)
    assert int(first.stdout.text) != spare  # the first call's supervisor was spawned afresh
    await forked(spare)  # its exec complete (posix_spawn returns as it begins)
    assert read_proc(f"/proc/{spare}/environ") == b"SHELLGATE_SPARE=1\0"
    (tmp_path / "ws" / "sub").mkdir()
    script = 'echo $PPID; pwd; echo "$SHELLGATE_CALL_ID" "$EXTRA"; ulimit -n'
    result = await executor.run(ExecRequest(command=script, workdir="sub", env={"EXTRA": "yes"}))
    ppid, cwd, ids, nofile = result.stdout.text.splitlines()
    assert int(ppid) == spare  # the command's parent: the spare, now this call's supervisor
    assert cwd == os.path.realpath(tmp_path / "ws" / "sub")
    call_id, extra = ids.split()
    assert len(call_id) == 24
    assert extra == "yes"
    assert int(nofile) == executor.config.executor.limits.open_files
    assert await settled(executor) != spare  # and the next one waits already


async def test_a_request_too_large_for_the_pipe_spawns_afresh(executor: LocalExecutor) -> None:
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    assert spare in IDLE_SPARES  # a child of the gate that no call's look counts
    big = "x" * REQUEST_MAX
    result = await executor.run(ExecRequest(command='echo $PPID; echo "${#BIG}"', env={"BIG": big}))
    ppid, size = result.stdout.text.split()
    assert int(ppid) != spare
    assert int(size) == REQUEST_MAX
    assert executor._spares.idle is not None
    assert executor._spares.idle.pid == spare  # untouched: the next call's still
    assert spare in IDLE_SPARES
    await executor.run(ExecRequest(command="true"))
    assert spare not in IDLE_SPARES  # taken: that call's leader


async def test_a_spare_killed_while_idle_is_reaped_and_the_call_spawns_afresh(
    executor: LocalExecutor,
) -> None:
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    waiting = await forked(spare)
    os.killpg(spare, signal.SIGKILL)
    # Both gone (a zombie holds no descriptor): one still exiting would take the request.
    assert wait_until(lambda: _ended(spare) and _ended(waiting), 5)
    seen = [read_proc(f"/proc/{pid}/stat") for pid in (spare, waiting)]  # for a failure
    result = await executor.run(ExecRequest(command="echo $PPID; exit 3"))
    assert result.exit_code == 3, (seen, result.signal, result.stderr.text)
    assert int(result.stdout.text) not in (spare, waiting)
    assert spare not in children(os.getpid())  # reaped, not left a zombie


async def test_a_spare_with_other_limits_is_let_go(executor: LocalExecutor) -> None:
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    limits = executor.config.executor.limits.model_copy(update={"open_files": 99})
    executor.config.executor.__dict__["limits"] = limits  # as a reload would change them
    result = await executor.run(ExecRequest(command="echo $PPID; ulimit -n"))
    ppid, nofile = result.stdout.text.split()
    assert (int(ppid) != spare, nofile) == (True, "99")
    assert spare not in children(os.getpid())  # killed and reaped, with its waiting command
    replacement = await settled(executor)
    await forked(replacement)  # so its exec is complete: its command line is there
    cmdline = read_proc(f"/proc/{replacement}/cmdline") or b""
    assert " 99 " in cmdline.replace(b"\0", b" ").decode()


async def test_a_spare_is_used_only_on_the_thread_that_started_it(
    executor: LocalExecutor,
) -> None:
    """Its parent-death signal follows that thread; on another, the call spawns afresh."""
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    outcome: list[Any] = []

    def elsewhere() -> None:
        async def call() -> None:
            result = await executor.run(ExecRequest(command="echo $PPID"))
            outcome.append(int(result.stdout.text))
            executor._spares.close()  # this thread's spare, before its loop goes

        asyncio.run(call())

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(30)
    assert outcome
    assert outcome[0] != spare
    assert spare not in children(os.getpid())


async def test_closing_the_executor_lets_the_spare_go(tmp_path: Path) -> None:
    executor = LocalExecutor(make_config(tmp_path))
    await executor.open()
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    waiting = await forked(spare)
    await executor.aclose()
    assert spare not in children(os.getpid())
    assert not os.path.exists(f"/proc/{waiting}")
    assert executor._spares.idle is None


def _ended(pid: int) -> bool:
    """Gone, or a zombie (which holds no descriptor any more)."""
    fields = stat_fields(pid)
    return fields is None or fields[0] == "Z"



async def test_another_process_cannot_slip_a_request_to_the_waiting_spare(
    executor: LocalExecutor, tmp_path: Path
) -> None:
    """Red team: any process with the gate's credentials reaches the gate's
    descriptors through /proc/<gate>/fd. A pipe opens that way (its request would
    run in the next call's place, under that call's audit record); the request
    socket does not. The status pipe, opened as the control, shows the way works."""
    await executor.run(ExecRequest(command="true"))
    spare_pid = await settled(executor)
    spare = executor._spares.idle
    assert spare is not None
    attempt = (
        "import sys\n"
        "try:\n"
        "    with open(sys.argv[1], 'wb', buffering=0) as f:\n"
        "        f.write(sys.argv[2].encode().replace(b'|', bytes(1)))\n"
        "    print('wrote')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.strerror)\n"
    )
    evil = f"/|1|/bin/touch|{tmp_path}/slipped||"

    def try_fd(fd: int) -> str:
        done = subprocess.run(
            [sys.executable, "-c", attempt, f"/proc/{os.getpid()}/fd/{fd}", evil],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    assert try_fd(spare.request_w) == "refused No such device or address"
    assert try_fd(spare.status_r) == "wrote"  # a pipe: the way is open to the user
    legit = await executor.run(ExecRequest(command="echo $PPID"))
    assert int(legit.stdout.text) == spare_pid  # the next call ran under it, as itself
    assert not (tmp_path / "slipped").exists()
