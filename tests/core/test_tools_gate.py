"""Gate-level behaviour of the tools: validation, tasks, notices, environment."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import AllowApprover
from shellgate.executors._procfs import children, stat_fields
from shellgate.gate import Gate
from shellgate.tools.tasks import Owner
from tests.conftest import (
    make_config,
    pids_with_arg,
    reap_orphans,
    unique_seconds,
    wait_until,
    zombie_children,
)


async def bash(gate: Gate, command: str, **extra: Any) -> Any:
    return await gate.call("bash", {"command": command, "description": "core test", **extra})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"command": "", "description": "d"},
            "invalid command: expected a non-empty string",
            id="empty-command",
        ),
        pytest.param(
            {"command": "   ", "description": "d"},
            "invalid command: expected a non-empty string",
            id="blank-command",
        ),
        pytest.param(
            {"command": 5, "description": "d"},
            "invalid command: expected a non-empty string",
            id="number-command",
        ),
        pytest.param(
            {"command": "ls"},
            'invalid arguments: missing required property "description"',
            id="no-description",
        ),
        pytest.param(
            {"description": "d"},
            'invalid arguments: missing required property "command"',
            id="no-command",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "timeoutMs": 0},
            "invalid timeoutMs: expected a positive number, got 0",
            id="zero-timeout",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "timeoutMs": -5},
            "invalid timeoutMs: expected a positive number, got -5",
            id="negative-timeout",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "timeoutMs": "10"},
            'invalid timeoutMs: expected a positive number, got "10"',
            id="string-timeout",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "timeoutMs": True},
            "invalid timeoutMs: expected a positive number, got true",
            id="bool-timeout",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "run_in_background": "yes"},
            'invalid run_in_background: expected a boolean, got "yes"',
            id="string-background",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "workdir": 3},
            "invalid workdir: expected a string, got 3",
            id="number-workdir",
        ),
        pytest.param(
            {"command": "ls", "description": "d", "rm": 1},
            'invalid arguments: unknown property "rm"',
            id="unknown-key",
        ),
        pytest.param(
            {
                "command": "ls",
                "description": "d",
                "sandbox_permissions": "full-access",
                "justification": "x",
            },
            'invalid arguments: unknown property "sandbox_permissions"',
            id="escalation-unsandboxed",
        ),
        pytest.param(
            ["ls"], 'invalid arguments: expected an object, got ["ls"]', id="not-an-object"
        ),
    ],
)
async def test_validation_errors_name_field_and_value(
    open_gate: Any, arguments: Any, message: str
) -> None:
    gate = await open_gate()
    marker = gate.executor.workspace / "ran"
    result = await gate.call("bash", arguments)
    assert (result.text, result.is_error) == (f"Error: {message}", True)
    assert not marker.exists()


async def test_unknown_tool_is_an_error(open_gate: Any) -> None:
    gate = await open_gate()
    result = await gate.call("python", {"code": "1"})
    assert result.is_error
    assert result.text.startswith("Error: unknown tool 'python'")


async def test_task_ids_are_per_owner(open_gate: Any) -> None:
    gate = await open_gate()
    await gate.call(
        "bash",
        {"command": "sleep 31.4201", "description": "d", "run_in_background": True},
        session="a",
    )
    # Running (exec'd) before the kill attempt, so "still there" below means something.
    assert await asyncio.to_thread(wait_until, lambda: bool(pids_with_arg("31.4201")), 5)
    foreign = await gate.call("bash_output", {"task_id": "bash-1"}, session="b")
    assert (foreign.text, foreign.is_error) == ("Error: unknown task bash-1", True)
    foreign_kill = await gate.call(
        "bash_kill", {"task_id": "bash-1"}, subject="mallory", session="a"
    )
    assert foreign_kill.text == "Error: unknown task bash-1"
    assert pids_with_arg("31.4201")  # the foreign kill did nothing
    mine = await gate.call("bash_kill", {"task_id": "bash-1"}, session="a")
    assert mine.text == "requested cancellation of task bash-1"


async def test_task_limit_is_actionable_and_ids_are_never_reused(open_gate: Any) -> None:
    gate = await open_gate(executor={"max_tasks": 2})
    for _ in range(2):
        await bash(gate, "sleep 31.4202", run_in_background=True)
    third = await bash(gate, "sleep 31.4202", run_in_background=True)
    assert third.is_error
    assert third.text.startswith("Error: too many background tasks running (2 of 2);")
    assert "bash_kill" in third.text
    await gate.call("bash_kill", {"task_id": "bash-1"})
    await gate.tasks.get(gate.owner(None, None, None), "bash-1").process.done
    fourth = await bash(gate, "true", run_in_background=True)
    assert fourth.text == "started background task bash-3"


async def test_one_notice_when_nobody_read_the_final_status(open_gate: Any) -> None:
    gate = await open_gate()
    owner = gate.owner(None, None, None)
    await bash(gate, "sleep 0.1", run_in_background=True)
    await gate.tasks.get(owner, "bash-1").process.done
    await asyncio.sleep(0)  # let the done-callback run
    assert gate.pop_notices(owner) == [
        "background task bash-1 (sleep 0.1) finished [status: completed, exit code: 0]. "
        "Read its output with bash_output."
    ]
    assert gate.pop_notices(owner) == []


async def test_no_notice_after_the_final_status_was_read(open_gate: Any) -> None:
    gate = await open_gate()
    owner = gate.owner(None, None, None)
    await bash(gate, "true", run_in_background=True)
    task = gate.tasks.get(owner, "bash-1")
    await task.process.done
    await asyncio.sleep(0)  # the notice is queued now, not yet collected by the host
    read = await gate.call("bash_output", {"task_id": "bash-1"})
    assert read.text.endswith("[status: completed, exit code: 0]")
    assert gate.pop_notices(owner) == []  # withdrawn: the model saw the end itself


async def test_no_notice_for_a_killed_task(open_gate: Any) -> None:
    gate = await open_gate()
    owner = gate.owner(None, None, None)
    await bash(gate, "sleep 30", run_in_background=True)
    await gate.call("bash_kill", {"task_id": "bash-1"})
    await gate.tasks.get(owner, "bash-1").process.done
    await asyncio.sleep(0)
    assert gate.pop_notices(owner) == []


async def test_notice_sink_callback_gets_owner(tmp_path: Path) -> None:
    got: list[tuple[Owner, str]] = []
    cfg = make_config(tmp_path)
    async with Gate(cfg, approver=AllowApprover(), notices=lambda o, t: got.append((o, t))) as gate:
        await gate.call(
            "bash",
            {"command": "exit 2", "description": "d", "run_in_background": True},
            session="s1",
        )
        await gate.tasks.get(gate.owner(None, None, "s1"), "bash-1").process.done
        await asyncio.sleep(0)
    assert got == [
        (
            Owner("agent", "default", "s1"),
            "background task bash-1 (exit 2) finished [status: completed, exit code: 2]. "
            "Read its output with bash_output.",
        )
    ]


async def test_parent_credentials_do_not_reach_commands(
    open_gate: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SG_TEST_API_KEY", "leak")
    monkeypatch.setenv("SG_TEST_PLAIN", "fine")
    monkeypatch.setenv("BASH_ENV", "/nonexistent/evil.sh")
    gate = await open_gate()
    result = await bash(gate, "env")
    assert "SG_TEST_PLAIN=fine" in result.text
    assert "leak" not in result.text
    assert "BASH_ENV" not in result.text


async def test_exported_function_cannot_shadow_a_command(
    open_gate: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASH_FUNC_echo%%", "() { printf hijacked; }")
    gate = await open_gate()
    assert (await bash(gate, "echo real")).text == "real\n"


async def test_trusted_caller_env_and_forged_session(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    env = {"PROJECT": "demo", "SHELLGATE_SESSION_ID": "forged"}
    async with Gate(cfg, approver=AllowApprover(), env=env, session="real-session") as gate:
        result = await bash(gate, "echo $PROJECT $SHELLGATE_SESSION_ID")
    assert result.text == "demo real-session\n"


async def test_workspace_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    cfg = make_config(tmp_path, executor={"workspace": str(link)})
    async with Gate(cfg, approver=AllowApprover()) as gate:
        result = await bash(gate, "pwd", workdir="sub")
        missing = await bash(gate, "pwd", workdir="nope")
    assert result.text == f"{real / 'sub'}\n"
    assert missing.text == "Error: working directory does not exist: nope"


async def test_binary_output_is_decoded_losslessly_enough(open_gate: Any) -> None:
    gate = await open_gate()
    result = await bash(gate, r"printf 'a\xff\x00b'")
    assert result.text == "a\ufffd\x00b"


async def test_huge_output_is_bounded(open_gate: Any) -> None:
    gate = await open_gate(executor={"max_output_bytes": 4096, "max_spill_bytes": 1 << 20})
    result = await bash(gate, "head -c 50000000 /dev/zero | tr '\\0' x")
    body, notice = result.text.split("\n[output truncated; full output: ")
    assert body == "x" * 4096
    assert notice == "(unavailable)]"


async def test_closed_gate_refuses_calls(tmp_path: Path) -> None:
    gate = Gate(make_config(tmp_path), approver=AllowApprover())
    await gate.open()
    await gate.aclose()
    result = await bash(gate, "true")
    assert result.is_error
    assert "shutting down" in result.text


def test_background_task_survives_between_sync_calls(tmp_path: Path) -> None:
    from shellgate.gate import SyncGate

    with SyncGate(make_config(tmp_path), approver=AllowApprover()) as gate:
        gate.call(
            "bash",
            {"command": "sleep 0.3; echo late", "description": "d", "run_in_background": True},
        )
        gate.call("bash", {"command": "true", "description": "d"})
        assert wait_until(lambda: bool(pids_with_arg("sleep 0.3")), 5)
        gate.wait_task("bash-1")
        out = gate.call("bash_output", {"task_id": "bash-1"})
    assert out.text == "late\n[status: completed, exit code: 0]"


def test_parent_death_kills_commands(tmp_path: Path) -> None:
    """A host killed with SIGKILL takes its commands with it (parent-death signal)."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "host.py"
    script.write_text(
        "import asyncio, sys\n"
        "from shellgate.approval import AllowApprover\n"
        "from shellgate.gate import Gate\n"
        "from tests.conftest import make_config\n"
        "from pathlib import Path\n"
        "async def main():\n"
        f"    gate = Gate(make_config(Path({str(tmp_path)!r})), approver=AllowApprover())\n"
        "    await gate.open()\n"
        "    await gate.call('bash', {'command': 'sleep 31.4203', 'description': 'd', 'run_in_background': True})\n"
        "    await asyncio.sleep(0)\n"  # the turn that starts the next call's spare
        "    print('ready', flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    root = Path(__file__).resolve().parents[2]
    # TMPDIR: the killed host cannot remove its spill directory; keep it in tmp_path.
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root}", "TMPDIR": str(tmp_path)}
    zombies = zombie_children()
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, env=env, cwd=root
    ) as host:
        assert host.stdout is not None
        assert host.stdout.readline().strip() == b"ready"
        # The spawn returns before the exec: wait until the command line shows.
        assert wait_until(lambda: bool(pids_with_arg("31.4203")), 5)
        # The call's supervisor and the spare started after it (executors/_spare.py).
        supervisors = children(host.pid)
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 5
    while pids_with_arg("31.4203") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pids_with_arg("31.4203")
    # Each of them sweeps its subtree and exits, orphaned to this test process.
    assert wait_until(lambda: all(_ended(pid) for pid in supervisors), 5)
    reap_orphans(zombies)


async def test_every_tool_call_is_audited(tmp_path: Path) -> None:
    import json

    cfg = make_config(tmp_path)
    async with Gate(cfg, approver=AllowApprover()) as gate:
        await bash(gate, "echo audited", run_in_background=True)
        await gate.wait_task("bash-1")
        await gate.call("bash_output", {"task_id": "bash-1"})
        await gate.call("bash_kill", {"task_id": "bash-1"})
        await gate.call("bash_kill", {"task_id": "bash-7"})
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    kinds = [(r["type"], r.get("tool")) for r in records]
    assert kinds[0] == ("decision", "bash")
    assert ("started", None) in kinds
    assert ("task", "bash_output") in kinds
    tasks = [r for r in records if r["type"] == "task"]
    assert [t.get("status") for t in tasks[:2]] == ["[status: completed, exit code: 0]"] * 2
    assert tasks[2]["error"] == "unknown task bash-7"
    result = next(r for r in records if r["type"] == "result")
    assert (result["exit_code"], result["task_id"], result["stdout_bytes"]) == (0, "bash-1", 8)
    from shellgate.audit import verify

    assert verify(tmp_path / "audit.jsonl").ok


async def test_cancelling_a_call_with_an_abort_event_still_stops_the_command(
    open_gate: Any,
) -> None:
    gate = await open_gate()
    abort = asyncio.Event()
    call = asyncio.ensure_future(
        gate.call("bash", {"command": "sleep 31.4204", "description": "d"}, abort=abort)
    )
    assert await asyncio.to_thread(wait_until, lambda: bool(pids_with_arg("31.4204")), 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert not pids_with_arg("31.4204")


@pytest.mark.parametrize("spawn", ["spare", "posix_spawn", "popen"])
async def test_a_spawn_that_cannot_be_watched_leaves_nothing_behind(
    open_gate: Any, monkeypatch: pytest.MonkeyPatch, spawn: str
) -> None:
    """The command started but its pidfd could not be opened: killed, reaped, fds closed.

    ``spare``: the call was handed to the supervisor started ahead of it
    (executors/_spare.py), whose descriptors were the call's; the next spare is
    started on the loop's next turn, as after any call.
    """
    if spawn == "popen":  # the setpriv fallback spawns with Popen
        monkeypatch.setattr("shellgate.executors._hardening.HELPER", Path("/nonexistent/sg-exec"))
    if spawn == "posix_spawn":  # a helper that cannot wait for its call: a fresh spawn
        monkeypatch.setattr("shellgate.executors._hardening.Hardening.spares", False)
    gate = await open_gate()
    await gate.call("bash", {"command": "true", "description": "warm up"})
    await asyncio.sleep(0)  # the loop turn that starts the next call's spare
    spare = gate.executor._spares.idle
    assert (spare is not None) == (spawn == "spare")
    # No cyclic collection in between: an earlier test's event loop, collected
    # meanwhile, would close its epoll descriptor.
    gc.collect()
    gc.disable()
    try:
        fds_before = _fds(gate)
        children_before = _own_children()

        def refuse(pid: int) -> int:
            raise OSError(errno.EMFILE, "Too many open files")

        mark = unique_seconds()
        monkeypatch.setattr(os, "pidfd_open", refuse)
        result = await gate.call("bash", {"command": f"sleep {mark}", "description": "unwatchable"})
        monkeypatch.undo()
        assert result.is_error
        assert result.text == "Error: cannot start the command: Too many open files"
        await asyncio.sleep(0)  # the loop turn that starts the next call's spare
        after = gate.executor._spares.idle
        assert (after is not None) == (spawn == "spare")
        fds_after = _fds(gate)
    finally:
        gc.enable()
    assert sorted(fds_after) == sorted(fds_before), set(fds_before.items()) ^ set(fds_after.items())
    assert pids_with_arg(f"sleep {mark}") == []  # killed
    new = {after.pid} if after is not None else set()
    # ... and reaped: no new child but the next spare, not even a zombie
    assert _own_children() - new <= children_before
    assert spare is None or spare.pid not in _own_children()


def _ended(pid: int) -> bool:
    """Gone, or a zombie nobody reaped yet."""
    fields = stat_fields(pid)
    return fields is None or fields[0] == "Z"


def _fds(gate: Any) -> dict[str, str]:
    """This process's descriptors and what they are, but the idle spare's."""
    found = {}
    for fd in set(os.listdir("/proc/self/fd")) - _spare_fds(gate):
        with contextlib.suppress(OSError):
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return found


def _spare_fds(gate: Any) -> set[str]:
    spare = gate.executor._spares.idle
    if spare is None:
        return set()
    return {str(fd) for fd in (*spare.fds, spare.status_r, spare.request_w)}


def _own_children() -> set[int]:
    """This process's children, zombies included (every thread's list)."""
    kids: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        raw = Path(f"/proc/self/task/{tid}/children").read_text()
        kids.update(int(pid) for pid in raw.split())
    return kids


@pytest.mark.parametrize("workdir", ["a\x00b", "x" * 5000, "/" + "y" * 300 + "/z"])
async def test_an_unusable_workdir_is_a_tool_error_not_a_crash(
    tmp_path: Path, workdir: str
) -> None:
    # A NUL byte (ValueError) or a name too long (OSError) in the model's workdir
    # must come back as a tool error the model reads, never escape Gate.call.
    cfg = make_config(tmp_path)
    async with Gate(cfg, approver=AllowApprover()) as gate:
        result = await bash(gate, "pwd", workdir=workdir)
    assert result.is_error
    assert result.text.startswith(("Error: invalid working directory", "Error: working directory"))


async def test_a_call_refused_before_any_decision_is_still_audited(tmp_path: Path) -> None:
    # Bad bash arguments, a bad workdir and an unknown tool never reach a decision,
    # but "every call is on the record": each gets an `invalid` record.
    import json

    from shellgate.audit import verify

    cfg = make_config(tmp_path)
    async with Gate(cfg, approver=AllowApprover()) as gate:
        missing = await gate.call("bash", {"command": "echo hi"})
        nowhere = await bash(gate, "echo hi", workdir="no\udcffwhere")
        unknown = await gate.call("bash\udcff", {"env": {"X": "1"}})
    assert [r.is_error for r in (missing, nowhere, unknown)] == [True, True, True]
    path = tmp_path / "audit.jsonl"
    assert verify(path).ok
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["type"], r["tool"]) for r in records] == [
        ("invalid", "bash"), ("invalid", "bash"), ("invalid", "bash\\udcff"),
    ]
    assert records[0]["command"] == "echo hi"
    assert records[0]["error"] == missing.text.removeprefix("Error: ")
    assert records[1]["workdir"] == "no\\udcffwhere"
    assert "/workdir" in records[1]["escaped"]
    assert records[2]["error"].startswith("unknown tool")
    assert "env" not in records[2]  # arguments are not copied wholesale


async def test_a_huge_task_id_or_tool_name_is_not_echoed_back_whole(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    async with Gate(cfg, approver=AllowApprover()) as gate:
        output = await gate.call("bash_output", {"task_id": "x" * 5_000_000})
        tool = await gate.call("y" * 5_000_000, {})
    assert output.is_error
    assert tool.is_error
    assert output.text.startswith('Error: invalid task_id: expected a task id like bash-1, got "xxx')
    assert len(output.text) < 200
    assert tool.text.startswith("Error: unknown tool 'yyy")
    assert len(tool.text) < 200
