"""Signals to a real ``shellgate mcp``: SIGTERM/SIGINT end it as EOF does, SIGHUP reloads."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shellgate.audit import verify
from shellgate.config import load_config
from shellgate.errors import ShellgateError
from shellgate.gate import Gate
from tests.conftest import pids_with_arg, wait_until
from tests.mcp.mcp_helpers import (
    RULES,
    RawServer,
    audit_records,
    call_text,
    server_argv,
    server_env,
    start_call,
    write_config,
)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _decided(records: list[dict[str, Any]], command: str) -> list[dict[str, Any]]:
    """The records of the call(s) whose decision record holds ``command``."""
    ids = {r["call_id"] for r in records if r["type"] == "decision" and r["command"] == command}
    return [r for r in records if r.get("call_id") in ids]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_stop_signal_records_the_in_flight_call_as_aborted(
    tmp_path: Path, sig: signal.Signals
) -> None:
    marker = f"sleep 313.{int(sig)}"
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        start_call(server, 2, marker)
        assert wait_until(lambda: bool(pids_with_arg(marker)))
        server.proc.send_signal(sig)
        assert server.wait(timeout_s=30) == 0
        assert pids_with_arg(marker) == []
        call = _decided(audit_records(tmp_path), marker)
        assert [(r["type"], r.get("outcome")) for r in call] == [
            ("decision", None),
            ("result", "aborted"),
        ]
        assert verify(tmp_path / "audit.jsonl").ok


def _echo(server: RawServer, request_id: int, word: str) -> tuple[str, bool]:
    return call_text(
        server.call(request_id, "bash", {"command": f"echo {word}", "description": "d"})
    )


def test_sighup_after_a_rename_writes_the_next_records_to_a_new_file(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    rotated = tmp_path / "audit.jsonl.1"
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        assert _echo(server, 2, "before") == ("before\n", False)
        log.rename(rotated)
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(log.exists)  # reopened: a new file at the configured path
        assert _echo(server, 3, "after") == ("after\n", False)
        assert server.proc.poll() is None
        old, new = _records(rotated), _records(log)
        assert (new[0]["type"], new[0]["prev"]) == ("link", old[-1]["hash"])  # one chain
        assert _decided(old, "echo before")
        assert not _decided(old, "echo after")
        assert _decided(new, "echo after")
        assert not _decided(new, "echo before")
        server.close_stdin()
        assert server.wait() == 0


def _seq(server: RawServer, request_id: int) -> tuple[str, bool]:
    return call_text(server.call(request_id, "bash", {"command": "seq 1 2", "description": "d"}))


def test_sighup_reloads_the_policy_and_a_broken_one_keeps_the_last_good(tmp_path: Path) -> None:
    policy = tmp_path / "policy" / "policy.csv"
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        assert _seq(server, 2) == ("1\n2\n", False)
        denying = RULES.replace("seq *, allow", "seq *, deny, no seq after the reload")
        policy.write_text(denying.replace("\n    ", "\n").lstrip("\n"), encoding="utf-8")
        server.proc.send_signal(signal.SIGHUP)
        ids = iter(range(3, 1000))
        # the call itself is the observable: poll until the new rule decides (bounded)
        assert wait_until(lambda: _seq(server, next(ids))[1], timeout_s=20)
        text, is_error = _seq(server, next(ids))
        assert is_error
        assert "no seq after the reload" in text

        policy.write_text("p, agent, *, echo *, perhaps\n", encoding="utf-8")  # not an effect
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "reload failed" in server.stderr(), timeout_s=20)
        assert "the last good one stays" in server.stderr()
        assert server.proc.poll() is None
        text, is_error = _seq(server, next(ids))
        assert is_error
        assert "no seq after the reload" in text
        assert _echo(server, next(ids), "up") == ("up\n", False)
        server.close_stdin()
        assert server.wait() == 0


class _Extra:
    """A layer registered in code, which a reload must not lose."""

    name = "extra"


async def test_gate_reload_keeps_code_registered_layers_and_fails_closed(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    async with Gate(config) as gate:
        gate.decider.register(_Extra(), name="extra")
        first = gate.decider
        gate.reload()
        assert gate.decider is not first
        assert gate.decider.pm.get_plugin("extra") is first.pm.get_plugin("extra")
        good = gate.decider
        (tmp_path / "policy" / "policy.csv").write_text("p, agent, *, echo *, perhaps\n")
        with pytest.raises(ShellgateError, match="policy not reloaded, the last good one stays"):
            gate.reload()
        assert gate.decider is good


def test_sigterm_ends_the_server_even_when_the_client_stopped_reading(tmp_path: Path) -> None:
    """Answers pile up unread (a full pipe): SIGTERM still closes the gate and exits."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "deaf", "version": "0"},
        },
    }
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(2, 400)]
    with (tmp_path / "stderr").open("wb") as stderr:
        proc = subprocess.Popen(
            server_argv(write_config(tmp_path)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,  # never read: the answers fill the pipe
            stderr=stderr,
            env=server_env(),
        )
        try:
            assert proc.stdin is not None
            proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
            proc.stdin.flush()
            assert wait_until(lambda: _pipe_full(proc.pid), timeout_s=30)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0  # the drain gives up after DRAIN_S
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
    assert verify(tmp_path / "audit.jsonl").ok


def _pipe_full(pid: int) -> bool:
    """Whether some thread of ``pid`` is blocked writing (the unread pipe is full)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if "pipe_write" in (task / "wchan").read_text():  # anon_pipe_write on newer kernels
                return True
        except OSError:
            continue
    return False


def test_a_client_that_hung_up_both_pipes_ends_the_server_cleanly(tmp_path: Path) -> None:
    """stdout gone (EPIPE on the next answer) and stdin at EOF: exit 0, gate closed."""
    with (tmp_path / "stderr").open("wb") as stderr:
        proc = subprocess.Popen(
            server_argv(write_config(tmp_path)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=server_env(),
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdout.close()  # the client is gone before the first answer
        lines = [{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(1, 50)]
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.close()
        try:
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "writing stdout failed" in (tmp_path / "stderr").read_text()
