"""Notices, and the end of a connection: EOF, SIGTERM, in-flight calls, calls during shutdown."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.shared.memory import create_client_server_memory_streams

from shellgate.config import load_config
from shellgate.mcp.server import ShellgateMCP
from tests.conftest import pids_with_arg, wait_until
from tests.mcp.mcp_helpers import (
    RawServer,
    audit_records,
    call_text,
    connect,
    start_call,
    text_of,
    write_config,
)

BIG_OUTPUT = "max_output_bytes = 1000"


def _spill_path(text: str) -> Path:
    match = re.search(r"\[output truncated; full output: (\S+)\]", text)
    assert match, text
    return Path(match.group(1))


async def test_completion_notice_tops_the_next_result_exactly_once(tmp_path: Path) -> None:
    async with connect(write_config(tmp_path)) as session:
        started = await session.call_tool(
            "bash", {"command": "echo done", "description": "bg", "run_in_background": True}
        )
        assert text_of(started) == "started background task bash-1"
        notice = (
            "background task bash-1 (echo done) finished [status: completed, exit code: 0]. "
            "Read its output with bash_output."
        )
        deadline = time.monotonic() + 15
        while True:  # each call is a chance for the notice; bounded by the deadline
            tick = text_of(
                await session.call_tool("bash", {"command": "echo tick", "description": "d"})
            )
            if tick != "tick\n" or time.monotonic() > deadline:
                break
        assert tick == f"{notice}\n\ntick\n"
        again = await session.call_tool("bash", {"command": "echo tick", "description": "d"})
        assert text_of(again) == "tick\n"
        output = await session.call_tool("bash_output", {"task_id": "bash-1"})
        assert text_of(output) == "done\n[status: completed, exit code: 0]"


def _start_work(server: RawServer, marker: str) -> Path:
    """A truncated foreground result (a spill file) and a running background task."""
    server.initialize()
    text, _ = call_text(server.call(2, "bash", {"command": "seq 1 20000", "description": "big"}))
    spill = _spill_path(text)
    assert spill.exists()
    text, is_error = call_text(
        server.call(
            3,
            "bash",
            {"command": f"sleep {marker}", "description": "bg", "run_in_background": True},
        )
    )
    assert (text, is_error) == ("started background task bash-1", False)
    assert wait_until(lambda: bool(pids_with_arg(f"sleep {marker}")))
    return spill


def test_stdin_eof_stops_tasks_and_removes_spill_files(tmp_path: Path) -> None:
    spill_parent = tmp_path / "tmp"
    spill_parent.mkdir()
    config = write_config(tmp_path, executor=BIG_OUTPUT)
    with RawServer(config, env={"TMPDIR": str(spill_parent)}) as server:
        spill = _start_work(server, "307.25")
        server.close_stdin()
        assert server.wait() == 0
        assert pids_with_arg("sleep 307.25") == []
        assert not spill.exists()
        assert list(spill_parent.iterdir()) == []


def test_sigterm_stops_tasks_and_removes_spill_files(tmp_path: Path) -> None:
    spill_parent = tmp_path / "tmp"
    spill_parent.mkdir()
    config = write_config(tmp_path, executor=BIG_OUTPUT)
    with RawServer(config, env={"TMPDIR": str(spill_parent)}) as server:
        spill = _start_work(server, "307.5")
        server.proc.send_signal(signal.SIGTERM)
        assert server.wait() == 0
        assert pids_with_arg("sleep 307.5") == []
        assert not spill.exists()
        assert list(spill_parent.iterdir()) == []


def test_eof_during_a_foreground_call_stops_it(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        start_call(server, 2, "sleep 308.5")
        assert wait_until(lambda: bool(pids_with_arg("sleep 308.5")))
        server.close_stdin()
        assert server.wait(timeout_s=15) == 0
        assert pids_with_arg("sleep 308.5") == []


async def test_a_call_during_shutdown_gets_an_error_result_and_the_server_stays_up(
    tmp_path: Path,
) -> None:
    config = load_config(write_config(tmp_path))
    server = ShellgateMCP(config)
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(server.run, *server_streams)
        async with ClientSession(*client_streams) as session:
            await session.initialize()
            await server.gate.aclose()  # shutdown has begun
            late = await session.call_tool("bash", {"command": "echo hi", "description": "d"})
            assert late.is_error
            assert text_of(late) == "Error: the gate is shutting down; no new calls"
            listing = await session.list_tools()
            assert len(listing.tools) == 3
        await client_streams[1].aclose()  # EOF: the server's run() returns
    assert server.gate.tasks.running(server.owner) == 0
    assert not server.gate.spill.path.exists()


async def test_in_process_run_closes_the_gate_at_eof(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    server = ShellgateMCP(config)
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        runner = asyncio.ensure_future(server.run(*server_streams))
        async with ClientSession(*client_streams) as session:
            await session.initialize()
            started = await session.call_tool(
                "bash", {"command": "sleep 309.25", "description": "bg", "run_in_background": True}
            )
            assert text_of(started) == "started background task bash-1"
        await client_streams[1].aclose()
        await asyncio.wait_for(runner, 15)
    assert pids_with_arg("sleep 309.25") == []
    assert not server.gate.spill.path.exists()


def test_calls_run_concurrently_and_a_cancelled_call_stops_its_process(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        start_call(server, 2, "sleep 311.5")
        assert wait_until(lambda: bool(pids_with_arg("sleep 311.5")))
        # a long foreground call does not hold up the next one
        text, _ = call_text(server.call(3, "bash", {"command": "echo hi", "description": "d"}))
        assert text == "hi\n"
        server.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "user pressed stop"},
            }
        )
        assert wait_until(lambda: not pids_with_arg("sleep 311.5"))
        assert wait_until(
            lambda: any(r.get("outcome") == "aborted" for r in audit_records(tmp_path))
        )
        text, _ = call_text(server.call(4, "bash", {"command": "echo alive", "description": "d"}))
        assert text == "alive\n"


def test_on_a_terminal_it_says_what_it_is_and_ctrl_d_ends_it(tmp_path: Path) -> None:
    """A person who types `shellgate mcp` sees a line on stderr instead of a silent,
    apparently hung command; stdout (the wire) stays empty; Ctrl-D is EOF: exit 0."""
    import os
    import select
    import subprocess

    from tests.mcp.mcp_helpers import server_argv, server_env

    master, slave = os.openpty()
    proc = subprocess.Popen(server_argv(write_config(tmp_path)), stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env())
    os.close(slave)
    said = b""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while b"Ctrl-D" not in said and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 0.1)[0]:
                said += os.read(proc.stderr.fileno(), 4096)
        os.write(master, b"\x04")  # Ctrl-D at the start of a line: end of input
        out, _err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"shellgate mcp: serving MCP on stdin/stdout; an MCP host starts this command" in said
    assert (proc.returncode, out) == (0, b"")


def test_under_a_host_it_says_nothing(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.close_stdin()
        assert server.wait() == 0
        assert "serving MCP on stdin/stdout" not in server.stderr()
