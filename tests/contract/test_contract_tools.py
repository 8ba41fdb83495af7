"""The tools.md contract, through the real gate, on every executor.

Each test runs once per executor kind — and twice more for the local executor:
with the next call's supervisor waiting from the start (``local-spare``: the
first call runs under a spare, executors/_spare.py; in ``local`` it is spawned
afresh and later calls take spares), and on its fallback hardening
(``setpriv`` + ``prlimit`` + ``Popen``, used where the ``sg-exec`` helper could
not be built); the bwrap runs need a working bubblewrap
(CI installs it). Every command is approved (AllowApprover) so these tests see
the executor's behaviour, not the policy's.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import pids_with_arg, unique_seconds, wait_until

KINDS = [
    pytest.param("local", id="local"),
    pytest.param("local-spare", id="local-spare"),
    pytest.param("local-setpriv", id="local-setpriv"),
    pytest.param(
        "bwrap",
        id="bwrap",
        marks=[
            pytest.mark.bwrap,
            pytest.mark.skipif(
                importlib.util.find_spec("shellgate.executors.bwrap") is None,
                reason="bwrap executor not built into this copy",
            ),
        ],
    ),
]


def use_variant(variant: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The executor kind of a test variant, with its hardening selected."""
    if variant == "local-setpriv":
        # As on a host where the helper was not built: detection falls back.
        monkeypatch.setattr("shellgate.executors._hardening.HELPER", Path("/nonexistent/sg-exec"))
        return "local"
    if variant == "local-spare":
        from shellgate.executors.local import LocalExecutor

        async def spare_at_open(self: LocalExecutor) -> None:
            spare = self._spare_argv(self.config.executor.limits, self._drop_caps())
            assert spare is not None, "this helper cannot wait for a call"
            self._spares.refill_soon(spare)

        monkeypatch.setattr(LocalExecutor, "_probe", spare_at_open)
        return "local"
    return variant


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    return use_variant(str(request.param), monkeypatch)


@pytest.fixture
async def gate(open_gate: Any, kind: str) -> Any:
    return await open_gate(executor={"kind": kind, "grace_ms": 400})


async def bash(gate: Any, command: str, **extra: Any) -> Any:
    return await gate.call("bash", {"command": command, "description": "contract test", **extra})


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("echo hi", "hi\n", id="stdout-keeps-trailing-newline"),
        pytest.param("printf hi", "hi", id="no-newline-added-without-markers"),
        pytest.param("exit 3", "(no output)\n[exit code: 3]", id="exit-code-marker"),
        pytest.param("echo out; echo err >&2", "out\n[stderr]\nerr\n", id="stderr-section"),
        pytest.param(
            "printf out; printf err >&2", "out\n[stderr]\nerr", id="stderr-newline-inserted"
        ),
        pytest.param("echo err >&2", "[stderr]\nerr\n", id="stderr-only"),
        pytest.param("true", "(no output)", id="no-output"),
        pytest.param("printf x; exit 1", "x\n[exit code: 1]", id="marker-after-newline"),
        pytest.param(
            "kill -TERM $$",
            "(no output)\n[killed by signal: SIGTERM]",
            id="self-signal-not-timeout",
        ),
        pytest.param(
            "kill -KILL $$", "(no output)\n[killed by signal: SIGKILL]", id="self-sigkill"
        ),
        pytest.param("cat", "(no output)", id="stdin-is-dev-null"),
        # Opened read-write, as Popen's DEVNULL is: some tools write to fd 0.
        pytest.param("echo hi >&0 && echo ok", "ok\n", id="stdin-is-writable-dev-null"),
        # Nothing ignored: not Python's SIGPIPE/SIGXFSZ, not glibc's internal 32
        # and 33 (posix_spawn leaves those ignored; the helper resets them).
        pytest.param(
            "grep SigIgn /proc/self/status", "SigIgn:\t0000000000000000\n", id="no-signal-ignored"
        ),
    ],
)
async def test_result_text(gate: Any, command: str, expected: str) -> None:
    result = await bash(gate, command)
    assert result.text == expected
    assert result.is_error is False


async def test_timeout_sends_sigterm(gate: Any) -> None:
    result = await bash(gate, "sleep 5", timeoutMs=300)
    assert result.text == "(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]"


async def test_timeout_trapped_term_reports_exit_143(gate: Any) -> None:
    result = await bash(gate, "trap 'exit 143' TERM; sleep 5 & wait", timeoutMs=300)
    assert result.text.endswith("[timed out after 300ms]\n[exit code: 143]")


async def test_timeout_trapped_term_exit_zero_still_timed_out(gate: Any) -> None:
    result = await bash(gate, "trap 'exit 0' TERM; sleep 5 & wait", timeoutMs=300)
    assert result.text == "(no output)\n[timed out after 300ms]"


async def test_sigkill_after_grace_when_term_is_ignored(gate: Any) -> None:
    started = time.monotonic()
    result = await bash(gate, "trap '' TERM; sleep 30", timeoutMs=300)
    elapsed = time.monotonic() - started
    assert result.text == "(no output)\n[timed out after 300ms]\n[killed by signal: SIGKILL]"
    assert elapsed < 10  # 300 ms + 400 ms grace; a gross-regression bound only


async def test_timeout_is_capped_silently(open_gate: Any, kind: str) -> None:
    gate = await open_gate(executor={"kind": kind, "max_timeout_ms": 200})
    result = await bash(gate, "sleep 5", timeoutMs=100_000)
    assert "[timed out after 200ms]" in result.text


async def test_cwd_does_not_persist_between_calls(gate: Any) -> None:
    await bash(gate, "cd /")
    result = await bash(gate, "pwd")
    assert result.text == f"{gate.executor.workspace}\n"


async def test_relative_workdir_resolves_against_workspace(gate: Any) -> None:
    (gate.executor.workspace / "sub").mkdir()
    result = await bash(gate, "pwd", workdir="sub")
    assert result.text == f"{gate.executor.workspace / 'sub'}\n"


async def test_missing_workdir_is_an_error_and_nothing_runs(gate: Any) -> None:
    marker = gate.executor.workspace / "ran"
    result = await bash(gate, f"touch {marker}", workdir="/no/such/dir")
    assert result.is_error
    assert result.text == "Error: working directory does not exist: /no/such/dir"
    assert not marker.exists()


async def test_foreground_background_child_returns_after_drain_grace(gate: Any) -> None:
    mark = unique_seconds()
    started = time.monotonic()
    result = await bash(gate, f"sleep {mark} & echo started")
    assert time.monotonic() - started < 10
    assert result.text == "started\n"
    assert wait_until(lambda: not pids_with_arg(mark), 5)


async def test_foreground_leaves_no_process_of_its_group(gate: Any) -> None:
    mark = unique_seconds()
    await bash(gate, f"(sleep {mark} >/dev/null 2>&1 &); true")
    assert wait_until(lambda: not pids_with_arg(mark), 5)


async def test_setsid_escapee_is_stopped(gate: Any) -> None:
    mark = unique_seconds()
    await bash(gate, f"setsid sleep {mark} >/dev/null 2>&1 < /dev/null & echo forked")
    assert wait_until(lambda: not pids_with_arg(mark), 5)


async def test_double_fork_escapee_is_stopped(gate: Any) -> None:
    mark = unique_seconds()
    await bash(gate, f"setsid bash -c 'sleep {mark} & disown' >/dev/null 2>&1; true")
    assert wait_until(lambda: not pids_with_arg(mark), 5)


async def test_environment_overrides_and_managed_facts(gate: Any) -> None:
    result = await bash(
        gate, "echo $NO_COLOR $TERM $PAGER $GIT_PAGER; echo ${SHELLGATE_SESSION_ID:+set}"
    )
    assert result.text == "1 dumb cat cat\nset\n"


async def test_background_delta_status_and_completion(gate: Any) -> None:
    # The task waits for a file the test creates, so "running" is certain when read.
    command = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second"
    started = await bash(gate, command, run_in_background=True)
    assert started.text == "started background task bash-1"
    first = await _read_until(gate, "bash-1", lambda t: "first" in t)
    assert first == "first\n[status: running]"
    (gate.executor.workspace / "go").touch()
    await _finished(gate, "bash-1")
    final = (await gate.call("bash_output", {"task_id": "bash-1"})).text
    assert final == "second\n[status: completed, exit code: 0]"
    again = await gate.call("bash_output", {"task_id": "bash-1"})
    assert again.text == "(no new output)\n[status: completed, exit code: 0]"


async def test_background_stderr_and_exit(gate: Any) -> None:
    await bash(gate, "echo o; echo e >&2; exit 4", run_in_background=True)
    await _finished(gate, "bash-1")
    final = (await gate.call("bash_output", {"task_id": "bash-1"})).text
    assert final == "o\n[stderr]\ne\n[status: completed, exit code: 4]"


async def test_kill_running_then_finished(gate: Any) -> None:
    mark = unique_seconds()
    await bash(gate, f"sleep {mark}", run_in_background=True)
    killed = await gate.call("bash_kill", {"task_id": "bash-1"})
    assert killed.text == "requested cancellation of task bash-1"
    final = await _read_until(gate, "bash-1", lambda t: "status: killed" in t)
    assert final == "(no new output)\n[status: killed, signal: SIGTERM]"
    again = await gate.call("bash_kill", {"task_id": "bash-1"})
    assert again.text == "task bash-1 had already finished [status: killed, signal: SIGTERM]"
    assert not again.is_error
    assert not pids_with_arg(mark)


async def test_unknown_task_ids_are_errors(gate: Any) -> None:
    for tool in ("bash_output", "bash_kill"):
        result = await gate.call(tool, {"task_id": "bash-99"})
        assert (result.text, result.is_error) == ("Error: unknown task bash-99", True)


async def test_gate_close_stops_every_task(open_gate: Any, kind: str, tmp_path: Path) -> None:
    from shellgate.approval import AllowApprover
    from shellgate.gate import Gate
    from tests.conftest import make_config

    m6, m7 = unique_seconds(), unique_seconds()
    cfg = make_config(tmp_path, executor={"kind": kind, "grace_ms": 400})
    async with Gate(cfg, approver=AllowApprover()) as gate:
        await bash(gate, f"sleep {m6}", run_in_background=True)
        await bash(gate, f"trap '' TERM; sleep {m7}", run_in_background=True)
        assert wait_until(lambda: bool(pids_with_arg(m6) and pids_with_arg(m7)), 5)
        spill_dir = gate.spill.path
    assert not pids_with_arg(m6)
    assert not pids_with_arg(m7)
    assert not spill_dir.exists()


async def test_abort_stops_the_command(gate: Any) -> None:
    mark = unique_seconds()
    abort = asyncio.Event()
    call = asyncio.ensure_future(
        gate.call("bash", {"command": f"sleep {mark}", "description": "abort test"}, abort=abort)
    )
    assert await asyncio.to_thread(wait_until, lambda: bool(pids_with_arg(mark)), 5)
    abort.set()
    result = await call
    assert (result.text, result.is_error) == ("Error: tool call aborted", True)
    assert not pids_with_arg(mark)


async def test_cancellation_propagates_and_stops_the_command(gate: Any) -> None:
    mark = unique_seconds()
    call = asyncio.ensure_future(bash(gate, f"sleep {mark}"))
    assert await asyncio.to_thread(wait_until, lambda: bool(pids_with_arg(mark)), 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert not pids_with_arg(mark)


async def test_cancellation_at_any_step_leaves_nothing_running(gate: Any) -> None:
    """Cancel after 0, 1, 2… loop turns: wherever the call is (deciding, spawning,
    supervising), nothing of it may keep running — not even a command whose
    supervisor had not taken its first step yet."""
    base = unique_seconds()
    for turns in range(40):
        marker = f"{base}{turns:02d}"
        call = asyncio.ensure_future(bash(gate, f"sleep {marker}"))
        for _ in range(turns):
            await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert not pids_with_arg(marker), f"left running after {turns} turns"


async def test_output_is_tail_kept_with_spill(open_gate: Any, kind: str) -> None:
    gate = await open_gate(executor={"kind": kind, "max_output_bytes": 1000})
    result = await bash(gate, "seq 1 2000")
    full = "".join(f"{i}\n" for i in range(1, 2001))
    body, notice = result.text.rsplit("\n[output truncated; full output: ", 1)
    assert body == full[-1000:]
    path = Path(notice.rstrip("]"))
    assert path.read_text() == full
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


async def _finished(gate: Any, task_id: str) -> None:
    """Wait for the task's own completion future (no polling, no sleeping)."""
    task = gate.tasks.get(gate.owner(None, None, None), task_id)
    await asyncio.wait_for(asyncio.shield(task.process.done), 10)


async def _read_until(gate: Any, task_id: str, done: Any, timeout_s: float = 10) -> str:
    """Read deltas until ``done(text)``; returns the concatenated deltas' last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = await gate.call("bash_output", {"task_id": task_id})
        if done(result.text) or time.monotonic() > deadline:
            return str(result.text)
        # Nothing new yet: yield to the loop until the task's pipes deliver more.
        await asyncio.sleep(0.05)


async def test_hardening_applies_in_children(open_gate: Any, kind: str) -> None:
    """no_new_privs and the rlimits reach the command."""
    gate = await open_gate(executor={"kind": kind, "limits": {"open_files": 321}})
    result = await bash(gate, "ulimit -n; grep NoNewPrivs /proc/self/status")
    assert result.text == "321\nNoNewPrivs:\t1\n"


@pytest.mark.parametrize("variant", ["local", "local-setpriv"])
async def test_parent_death_signal_is_armed_locally(
    open_gate: Any, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local command itself carries SIGKILL as its parent-death signal.

    (Under bwrap, ``--die-with-parent`` and the PID namespace do this job.)
    """
    gate = await open_gate(executor={"kind": use_variant(variant, monkeypatch)})
    # bash execs python: the signal armed by the hardening prefix survives exec.
    probe = f"exec {sys.executable} -c 'import prctl; print(prctl.get_pdeathsig())'"
    result = await bash(gate, probe)
    assert result.text == "9\n"


async def test_capability_bounding_set_is_empty_under_root(open_gate: Any, kind: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("the bounding set is dropped only when the gate runs as root")
    gate = await open_gate(executor={"kind": kind})
    caps = await bash(gate, "grep CapBnd /proc/self/status")
    assert caps.text == "CapBnd:\t0000000000000000\n"


async def test_inherited_descriptors_do_not_reach_the_command(open_gate: Any, kind: str) -> None:
    """A descriptor the host left inheritable (no close-on-exec) stays out of the command."""
    gate = await open_gate(executor={"kind": kind})
    fd = os.open(os.devnull, os.O_RDONLY)
    try:
        os.set_inheritable(fd, True)
        result = await bash(gate, f"[ -e /proc/self/fd/{fd} ] && echo leaked || echo closed")
    finally:
        os.close(fd)
    assert result.text == "closed\n"


async def test_command_runs_in_the_workdir(open_gate: Any, kind: str, tmp_path: Path) -> None:
    gate = await open_gate(executor={"kind": kind})
    (tmp_path / "ws" / "sub dir").mkdir()
    result = await bash(gate, "pwd", workdir="sub dir")
    assert result.text == f"{os.path.realpath(tmp_path / 'ws' / 'sub dir')}\n"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("setsid sh -c 'sleep 0.2' &", id="setsid-in-background"),
        pytest.param("(setsid sh -c 'sleep 0.2' &)", id="setsid-from-a-subshell"),
        pytest.param("setsid -f sh -c 'sleep 0.2'", id="setsid-fork"),
    ],
)
async def test_an_escapee_that_dies_during_the_drain_is_reaped(
    open_gate: Any, kind: str, command: str
) -> None:
    """It holds the pipes, so the call drains until it exits: a zombie with no
    environment by then, so it must have been attributed while still alive."""
    from tests.conftest import wait_until_async, zombie_children

    gate = await open_gate(executor={"kind": kind, "grace_ms": 2000})
    before = set(zombie_children())
    result = await bash(gate, command)
    assert result.text == "(no output)"
    # The sandbox's first process is reaped on the gate's loop when its pidfd fires.
    gone = await wait_until_async(lambda: not set(zombie_children()) - before, timeout_s=2)
    assert gone, zombie_children()
