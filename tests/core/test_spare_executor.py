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
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
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


async def test_the_command_takes_the_gates_umask_of_its_call(executor: LocalExecutor) -> None:
    """The spare inherited the umask it started with; its command takes the one
    the gate has when the call comes (as a fresh spawn would)."""
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    old = os.umask(0o077)
    try:
        result = await executor.run(ExecRequest(command="echo $PPID; umask"))
    finally:
        os.umask(old)
    ppid, mask = result.stdout.text.split()
    assert (int(ppid), mask) == (spare, "0077")


async def test_a_spare_started_before_the_limits_changed_is_let_go(
    executor: LocalExecutor,
) -> None:
    """A host that changes its process state between calls (limits here; its
    credentials, groups, affinity, nice likewise): the call spawns afresh and
    takes the state as it is now."""
    await executor.run(ExecRequest(command="true"))
    spare = await settled(executor)
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    new = 0 if soft != 0 else min(4096, hard) if hard != resource.RLIM_INFINITY else 4096
    resource.setrlimit(resource.RLIMIT_CORE, (new, hard))
    try:
        result = await executor.run(ExecRequest(command="echo $PPID; ulimit -c"))
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    ppid, core = result.stdout.text.split()
    assert int(ppid) != spare
    assert core == str(new // 1024 if new else 0) or (new and core == str(new // 512))
    assert spare not in children(os.getpid())  # let go and reaped


HOST = """
import asyncio, os, signal, sys, time
from pathlib import Path
from shellgate.executors.local import LocalExecutor
from shellgate.executors.requests import ExecRequest
from tests.conftest import make_config

async def main():
    ex = LocalExecutor(make_config(Path(sys.argv[1])))
    await ex.open()
    await ex.run(ExecRequest(command="true"))
    await asyncio.sleep(0)
    assert ex._spares.idle is not None
    {between}
    started = time.monotonic()
    result = await ex.run(ExecRequest(command="id -u; echo ran", timeout_ms=20000))
    print(repr(result.stdout.text), result.exit_code, round(time.monotonic() - started, 3))
    sys.stdout.flush()
    {after}
    await ex.aclose()

asyncio.run(main())
"""


def run_host(tmp_path: Path, between: str, after: str = "pass", home: Path | None = None) -> str:
    """Run HOST with ``between`` before its second call; its printed result."""
    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "host.py"
    script.write_text(HOST.replace("{between}", between).replace("{after}", after))
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root}"}
    done = subprocess.run(
        [sys.executable, str(script), str(home or tmp_path)],
        capture_output=True, text=True, timeout=60, env=env, cwd=root, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping root needs root")
def test_a_host_that_drops_root_runs_the_next_call_as_its_new_user(tmp_path: Path) -> None:
    """Red team: the spare started as root; the host then became nobody. The call
    must run as nobody, and letting the root spare go must not hang the host
    (it may no longer signal it: the request's EOF ends it)."""
    home = Path(tempfile.mkdtemp(prefix="sg-drop-", dir="/var/tmp"))  # nobody can enter it
    try:
        (home / "ws").mkdir()
        os.chmod(home / "ws", 0o777)  # noqa: S103 - the dropped host's workspace
        os.chmod(home, 0o755)  # noqa: S103
        drop = "os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)"
        out = run_host(tmp_path, drop, home=home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    text, code, seconds = out.rsplit(" ", 2)
    assert (text, code) == ("'65534\\nran\\n'", "0")
    assert float(seconds) < 10  # a hang would be the test's timeout


def test_a_fork_of_the_host_does_not_hold_the_next_call(tmp_path: Path) -> None:
    """Red team: a fork of the gate (multiprocessing's default start method) holds
    a copy of the request socket; the request must still end when the gate says so."""
    fork = "child = os.fork()\n    if child == 0:\n        time.sleep(8); os._exit(0)"
    out = run_host(tmp_path, fork, after="os.kill(child, signal.SIGKILL); os.waitpid(child, 0)")
    text, code, seconds = out.rsplit(" ", 2)
    assert (text.split("\\n")[-2], code) == ("ran", "0")
    assert float(seconds) < 4  # held until the fork exits, it would take 8 s


def test_a_dead_spare_cannot_kill_a_host_that_restored_sigpipe(tmp_path: Path) -> None:
    """Red team: the spare died idle and the host gave SIGPIPE its default action
    (a common CLI idiom): handing it the call must not end the host."""
    kill = (
        "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
        "    os.killpg(ex._spares.idle.pid, signal.SIGKILL)\n"
        "    time.sleep(0.3)"
    )
    out = run_host(tmp_path, kill)
    text, code, _ = out.rsplit(" ", 2)
    assert (text.split("\\n")[-2], code) == ("ran", "0")
