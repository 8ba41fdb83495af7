"""How long a call's processes live: never past the gate, never past the deadline.

tools.md: every process a call started dies when the gate dies, however it dies;
SIGTERM goes to the group and its escapees together and SIGKILL follows after one
grace, so a call ends within timeout + grace (plus a small constant) whatever its
processes do. The gate-death test drives a real ``shellgate mcp`` process and
SIGKILLs it; the deadline tests run through the real gate on every executor.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from shellgate.executors import _bwrap_state as state
from tests.conftest import (
    ROOT,
    pids_running,
    pids_with_arg,
    reap_orphans,
    unique_seconds,
    wait_until,
    zombie_children,
)
from tests.contract.test_contract_tools import KINDS, bash, use_variant

# -- the gate dies --------------------------------------------------------------

#: Background tasks whose processes outlive their direct child of the gate in
#: every way a command can arrange: a plain grandchild, one in its own session,
#: a double fork, and one that also clears its environment (no call marker).
GRANDCHILDREN = [
    "sleep {m}1; echo never",
    "setsid sleep {m}2; echo never",
    "(setsid bash -c 'sleep {m}3 & disown' &); sleep {m}4; echo never",
    "setsid env -i sleep {m}5 & wait",
]


def _mcp_config(tmp_path: Path, kind: str) -> Path:
    """A config that runs every command (no rules, approval mode "allow")."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    config = tmp_path / "shellgate.toml"
    config.write_text(
        f'[executor]\nkind = "{kind}"\nworkspace = "ws"\ngrace_ms = 300\n'
        '[policy]\npaths = []\n[approval]\nmode = "allow"\n[audit]\npath = "audit.jsonl"\n',
        encoding="utf-8",
    )
    return config


def _rpc(server: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert server.stdin is not None
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()


def _answer(server: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` (the server answers in order; notices skipped)."""
    assert server.stdout is not None
    while True:
        line = server.stdout.readline()
        assert line, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _marked(mark: str) -> list[int]:
    """Live processes whose environment carries ``mark`` (the server's, inherited)."""
    found = []
    needle = mark.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ and state != "Z":
            found.append(int(entry))
    return found


def _server_env(tmp_path: Path, mark: str) -> dict[str, str]:
    """This checkout's shellgate, temporary files under ``tmp_path``, plus ``mark``."""
    name, _, value = mark.partition("=")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "TMPDIR": str(tmp_path)}
    env.pop("SHELLGATE_CONFIG", None)
    return {**env, name: value}


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("local", id="local"),
        # (The setpriv fallback has no supervisor: only direct children die with
        # the gate there, as docs/tools.md says.)
        *(p for p in KINDS if p.id == "bwrap"),
    ],
)
def test_every_process_of_a_call_dies_with_a_sigkilled_gate(tmp_path: Path, kind: str) -> None:
    mark = f"SG_LIFETIME_TEST={uuid.uuid4().hex}"
    m = unique_seconds(300)  # unique sleep arguments: {m}1 .. {m}5
    env = _server_env(tmp_path, mark)
    zombies = zombie_children()
    sleeps = [f"sleep {m}{i}" for i in range(1, 6)]
    argv = [sys.executable, "-m", "shellgate.cli", "mcp", "--config", str(_mcp_config(tmp_path, kind))]
    stderr = (tmp_path / "server-stderr.log").open("wb")
    server = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=tmp_path
    )
    try:
        _rpc(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "lifetime-test", "version": "0"}}})  # fmt: skip
        assert "result" in _answer(server, 1)
        _rpc(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for index, template in enumerate(GRANDCHILDREN, start=2):
            arguments = {
                "command": template.format(m=m),
                "description": "outlive the gate",
                "run_in_background": True,
            }
            _rpc(server, {"jsonrpc": "2.0", "id": index, "method": "tools/call",
                          "params": {"name": "bash", "arguments": arguments}})  # fmt: skip
            text = _answer(server, index)["result"]["content"][0]["text"]
            assert text.startswith("started background task"), text
        # The sleeps themselves, not only the bwrap or shell naming them: killed
        # while a sandbox is still being set up, the gate is another test's case.
        assert wait_until(lambda: all(pids_running(s) for s in sleeps), 10), (
            [s for s in sleeps if not pids_running(s)],
            (tmp_path / "server-stderr.log").read_text(),
        )
        assert _marked(mark)  # the premise: the call's processes carry the mark
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)

        def gone() -> bool:
            return not _marked(mark) and not any(pids_with_arg(s) for s in sleeps)

        assert wait_until(gone, 10), {s: pids_with_arg(s) for s in sleeps}
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for pid in {*_marked(mark), *(p for s in sleeps for p in pids_with_arg(s))}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)  # only after a failure: leave nothing for 300 s
        for stream in (server.stdin, server.stdout):
            if stream is not None:
                stream.close()
        stderr.close()
        reap_orphans(zombies)  # the dead gate's supervisors were orphaned to this process
        _sweep_dead_gates(tmp_path)


def _sweep_dead_gates(tmp: Path) -> None:
    """Do what the next gate under this ``TMPDIR`` would: the killed gate's record
    names its pids cgroup (a root bwrap gate), which would otherwise outlive the test."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp)
    try:
        state.sweep()
    finally:
        tempfile.tempdir = saved


# -- the deadline ---------------------------------------------------------------

#: A leader and an escapee (its own session) that both ignore SIGTERM; the
#: escapee holds the output pipes or not.
STUBBORN = {
    "escapee-holds-pipes": "setsid bash -c \"trap '' TERM; sleep {m}1\" & trap '' TERM; sleep {m}2",
    "escapee-detached": (
        "setsid bash -c \"trap '' TERM; sleep {m}1\" >/dev/null 2>&1 & trap '' TERM; sleep {m}2"
    ),
}
TIMEOUT_S, GRACE_S = 1.0, 1.0
#: The old code took timeout + ~5 graces here (5-7 s for 1 s + 1 s, 11 s for
#: 1 s + 2 s); the fixed one takes timeout + grace + a few hundred ms, which the
#: bound (4.5 s for 1 s + 1 s) tells apart from the old 5-7 s.
SLACK_S = 2.5


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    return use_variant(str(request.param), monkeypatch)


@pytest.mark.parametrize("shape", list(STUBBORN))
async def test_a_call_ends_within_timeout_plus_grace(
    open_gate: Any, kind: str, shape: str
) -> None:
    gate = await open_gate(executor={"kind": kind, "grace_ms": int(GRACE_S * 1000)})
    m = unique_seconds()
    started = time.monotonic()
    result = await bash(gate, STUBBORN[shape].format(m=m), timeoutMs=int(TIMEOUT_S * 1000))
    elapsed = time.monotonic() - started
    assert result.text.endswith("[timed out after 1000ms]\n[killed by signal: SIGKILL]")
    assert elapsed < TIMEOUT_S + GRACE_S + SLACK_S, elapsed
    assert not pids_with_arg(f"sleep {m}1")
    assert not pids_with_arg(f"sleep {m}2")


async def test_a_killed_task_ends_within_one_grace(open_gate: Any, kind: str) -> None:
    gate = await open_gate(executor={"kind": kind, "grace_ms": int(GRACE_S * 1000)})
    m = unique_seconds()
    await bash(gate, STUBBORN["escapee-holds-pipes"].format(m=m), run_in_background=True)
    assert wait_until(lambda: bool(pids_with_arg(f"sleep {m}1")), 5)
    task = gate.tasks.get(gate.owner(None, None, None), "bash-1")
    started = time.monotonic()
    await gate.call("bash_kill", {"task_id": "bash-1"})
    await task.process.done
    assert time.monotonic() - started < GRACE_S + SLACK_S
    assert not pids_with_arg(f"sleep {m}1")
    assert not pids_with_arg(f"sleep {m}2")


async def test_a_leader_that_exits_late_does_not_stretch_the_call(open_gate: Any) -> None:
    """The leader exits just before its timeout; what it left holds the pipes and
    ignores SIGTERM. The drain and the stop after it are cut to the same
    deadline (they used to add a grace each: 0.8 + 3 + 3 s here)."""
    grace = 3.0
    gate = await open_gate(executor={"grace_ms": int(grace * 1000)})
    m = unique_seconds()
    started = time.monotonic()
    result = await bash(gate, f"(trap '' TERM; sleep {m}) & sleep 0.8", timeoutMs=1000)
    elapsed = time.monotonic() - started
    assert result.text == "(no output)"  # the leader exited 0, before its timeout
    assert elapsed < 1.0 + grace + 1.5, elapsed  # about 4.3 s now, 6.9 s before
    assert not pids_with_arg(f"sleep {m}")


@pytest.mark.parametrize(
    ("command", "ending"),
    [
        pytest.param("(sleep {m} &); exit 5", "[exit code: 5]", id="exit-code"),
        # The rest of the call ignores SIGTERM, so the gate SIGKILLs the group,
        # supervisor included: the ending is the command's own, as reported.
        pytest.param(
            "(trap '' TERM; sleep {m}) & kill -TERM $$",
            "[killed by signal: SIGTERM]",
            id="signal",
        ),
    ],
)
async def test_a_command_that_leaves_processes_behind_reports_its_own_ending(
    open_gate: Any, kind: str, command: str, ending: str
) -> None:
    gate = await open_gate(executor={"kind": kind, "grace_ms": 300})
    m = unique_seconds()
    result = await bash(gate, command.format(m=m))
    assert result.text == f"(no output)\n{ending}"
    assert not pids_with_arg(f"sleep {m}")
