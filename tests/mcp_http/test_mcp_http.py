"""``shellgate mcp --http``: a real server process, the SDK's HTTP client, plain HTTP."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from shellgate.audit import verify
from tests.conftest import pids_with_arg, unique_seconds, wait_until
from tests.mcp.mcp_helpers import server_env
from tests.mcp_http.http_helpers import (
    ALICE,
    BOB,
    HttpServer,
    audit_records,
    connect,
    post,
    text_of,
    write_setup,
    write_tokens,
)

ECHO = {"command": "echo hi", "description": "say hi"}


def background(command: str) -> dict[str, Any]:
    return {"command": command, "description": "wait", "run_in_background": True}


def task_id(text: str) -> str:
    found = re.fullmatch(r"started background task (bash-\d+)", text)
    assert found, text
    return found.group(1)


async def test_a_good_token_runs_echo_hi_as_its_principal(tmp_path: Path) -> None:
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, ALICE) as session:
            tools = await session.list_tools()
            result = await session.call_tool("bash", ECHO)
        assert {t.name for t in tools.tools} == {"bash", "bash_output", "bash_kill"}
        assert (text_of(result), result.is_error) == ("hi\n", False)
        assert server.stop() == 0
    decision = next(r for r in audit_records(tmp_path) if r["type"] == "decision")
    assert (decision["subject"], decision["tenant"], decision["decision"]) == (
        "alice",
        "team-a",
        "allow",
    )
    # the MCP session id (the SDK's uuid4 hex), not the gate's own 16-digit session
    assert re.fullmatch(r"[0-9a-f]{32}", decision["session"])
    assert verify(tmp_path / "audit.jsonl").ok


REFUSED = {
    "no-token": {},
    "wrong-token": {"Authorization": "Bearer wrong-token-0123456789abcdef"},
    "token-plus-one": {"Authorization": f"Bearer {ALICE}x"},
    "token-minus-one": {"Authorization": f"Bearer {ALICE[:-1]}"},
    "not-bearer": {"Authorization": f"Basic {ALICE}"},
    "empty-token": {"Authorization": "Bearer "},
}


def test_a_missing_or_wrong_token_is_401_with_a_bearer_challenge(tmp_path: Path) -> None:
    with HttpServer(write_setup(tmp_path)) as server:
        answers = {case: post(server.url, headers) for case, headers in REFUSED.items()}
        good = post(server.url, {"Authorization": f"Bearer {ALICE}"})
        rebound = post(server.url, {"Authorization": f"Bearer {ALICE}", "Host": "evil.example"})
        assert server.stop() == 0
        log = server.stderr()
    for case, (status, headers, _body) in answers.items():
        assert status == 401, case
        challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
        assert challenge.startswith("Bearer "), case
    assert good[0] == 200  # the same request with a good token gets through
    assert rebound[0] == 421  # loopback: the SDK's DNS-rebinding check is on
    assert log.count("no valid bearer token (401)") == len(REFUSED)
    assert ALICE not in log


async def test_the_sdk_client_with_a_wrong_token_or_none_gets_no_session(
    tmp_path: Path,
) -> None:
    with HttpServer(write_setup(tmp_path)) as server:
        for token in ("wrong-token-0123456789abcdef", None):
            with pytest.raises(Exception):  # noqa: PT011, B017 - the SDK's error for a 401
                async with connect(server.url, token) as session:
                    await session.call_tool("bash", ECHO)
        assert server.stop() == 0
    assert not [r for r in audit_records(tmp_path) if r["type"] == "decision"]


async def test_two_principals_cannot_see_each_others_tasks(tmp_path: Path) -> None:
    marker = f"sleep {unique_seconds(4711)}"
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, ALICE) as alice, connect(server.url, BOB) as bob:
            started = await alice.call_tool("bash", background(marker))
            task = task_id(text_of(started))
            assert wait_until(lambda: bool(pids_with_arg(marker)))
            for tool in ("bash_output", "bash_kill"):
                foreign = await bob.call_tool(tool, {"task_id": task})
                assert (text_of(foreign), foreign.is_error) == (f"Error: unknown task {task}", True)
            # another session of the same principal does not see it either
            async with connect(server.url, ALICE) as alice_again:
                other = await alice_again.call_tool("bash_output", {"task_id": task})
            assert text_of(other) == f"Error: unknown task {task}"
            own = await alice.call_tool("bash_output", {"task_id": task})
            assert (text_of(own), own.is_error) == ("(no new output)\n[status: running]", False)
            assert pids_with_arg(marker)  # bob's kill did nothing
            killed = await alice.call_tool("bash_kill", {"task_id": task})
            assert not killed.is_error
        assert server.stop() == 0
    refused = [r for r in audit_records(tmp_path) if r["type"] == "task" and "error" in r]
    assert {(r["subject"], r["tenant"], r["tool"]) for r in refused} >= {
        ("bob", "team-b", "bash_output"),
        ("bob", "team-b", "bash_kill"),
    }


async def test_the_audit_log_names_each_principal_and_holds_no_token(tmp_path: Path) -> None:
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, ALICE) as alice, connect(server.url, BOB) as bob:
            await alice.call_tool("bash", {"command": "echo from-alice", "description": "d"})
            await bob.call_tool("bash", {"command": "echo from-bob", "description": "d"})
            await bob.call_tool("bash", {"command": f"echo {BOB[:4]}", "description": "d"})
        post(server.url, {"Authorization": "Bearer wrong-token-0123456789abcdef"})
        assert server.stop() == 0
        log = server.stderr()
    records = audit_records(tmp_path)
    who = {r["command"]: (r["subject"], r["tenant"]) for r in records if r["type"] == "decision"}
    assert who["echo from-alice"] == ("alice", "team-a")
    assert who["echo from-bob"] == ("bob", "team-b")
    audit_text = (tmp_path / "audit.jsonl").read_text()
    for token in (ALICE, BOB):
        assert token not in audit_text
        assert token not in log  # served at --log-level DEBUG
    assert "DEBUG" in log


class Accept:
    """An elicitation callback that accepts, and records each question."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={})


async def test_an_ask_goes_to_the_clients_elicitation_over_http(tmp_path: Path) -> None:
    user = Accept()
    with HttpServer(write_setup(tmp_path)) as server:
        async with (
            connect(server.url, ALICE, elicitation=user) as alice,
            connect(server.url, BOB) as bob,
        ):
            accepted = await alice.call_tool("bash", {"command": "touch a.txt", "description": "d"})
            denied = await bob.call_tool("bash", {"command": "touch b.txt", "description": "d"})
        assert server.stop() == 0
    assert (text_of(accepted), accepted.is_error) == ("(no output)", False)
    assert (tmp_path / "ws" / "a.txt").exists()
    assert len(user.questions) == 1
    assert "touch a.txt" in user.questions[0]
    assert denied.is_error
    assert "cannot ask the user" in text_of(denied)
    assert not (tmp_path / "ws" / "b.txt").exists()


async def test_the_tokens_file_is_a_secret_to_the_agent(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, ALICE) as alice:
            read = await alice.call_tool(
                "bash", {"command": f"echo x > {tokens}", "description": "d"}
            )
            shown = await alice.call_tool(
                "bash", {"command": f"sleep 0 {tokens}", "description": "d"}
            )
        assert server.stop() == 0
    assert read.is_error
    assert "protected path" in text_of(read)
    assert shown.is_error  # a read of it asks, and the headless answer is no
    assert ALICE not in text_of(read) + text_of(shown)
    assert ALICE in tokens.read_text()  # untouched


async def test_sigterm_aborts_calls_stops_tasks_and_records_them(tmp_path: Path) -> None:
    foreground, task = f"sleep {unique_seconds(4712)}", f"sleep {unique_seconds(4713)}"
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, BOB) as bob:
            await bob.call_tool("bash", background(task))
            assert wait_until(lambda: bool(pids_with_arg(task)))
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    with contextlib.suppress(Exception):  # the connection ends under it
                        await bob.call_tool("bash", {"command": foreground, "description": "d"})

                tg.start_soon(call)
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(pids_with_arg(foreground)))
                )
                server.proc.send_signal(signal.SIGTERM)
                status = await anyio.to_thread.run_sync(server.proc.wait, 30)
                tg.cancel_scope.cancel()
        assert status == 0
    assert pids_with_arg(foreground) == []
    assert pids_with_arg(task) == []
    records = audit_records(tmp_path)
    ids = {r["command"]: r["call_id"] for r in records if r["type"] == "decision"}
    outcome = {r["call_id"]: r.get("outcome") for r in records if r["type"] == "result"}
    assert outcome[ids[foreground]] == "aborted"
    assert ids[task] in outcome  # the background task's end is on the record
    assert verify(tmp_path / "audit.jsonl").ok


async def test_the_end_of_a_session_stops_its_tasks(tmp_path: Path) -> None:
    marker = f"sleep {unique_seconds(4714)}"
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect(server.url, ALICE) as alice:
            await alice.call_tool("bash", background(marker))
            assert wait_until(lambda: bool(pids_with_arg(marker)))
        # leaving the client deletes the session (DELETE /mcp)
        assert wait_until(lambda: not pids_with_arg(marker), timeout_s=20)
        assert server.proc.poll() is None
        assert server.stop() == 0


async def test_sighup_rereads_the_tokens_file(tmp_path: Path) -> None:
    carol = "carol-token-00112233445566778899"
    with HttpServer(write_setup(tmp_path)) as server:
        write_tokens(tmp_path / "tokens", f"{carol} carol team-c\n{BOB} bob team-b\n")
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "SIGHUP: 2 tokens loaded" in server.stderr())
        assert post(server.url, {"Authorization": f"Bearer {ALICE}"})[0] == 401
        assert post(server.url, {"Authorization": f"Bearer {carol}"})[0] == 200
        # a bad file keeps the last good table
        write_tokens(tmp_path / "tokens", f"{carol} carol\n")
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "tokens not reloaded" in server.stderr())
        assert post(server.url, {"Authorization": f"Bearer {carol}"})[0] == 200
        assert server.proc.poll() is None
        assert server.stop() == 0
        assert carol not in server.stderr()


@contextlib.asynccontextmanager
async def modern(url: str, token: str, **headers: str) -> AsyncIterator[Client]:
    """The SDK's high-level client, negotiating the 2026 per-request era (no MCP session)."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}", **headers}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_per_request_era_clients_are_fenced_per_principal(tmp_path: Path) -> None:
    marker = f"sleep {unique_seconds(4715)}"
    with HttpServer(write_setup(tmp_path)) as server:
        forged = {"mcp-session-id": "f" * 32}  # names no session: not the audit's session
        async with modern(server.url, ALICE, **forged) as alice, modern(server.url, BOB) as bob:
            assert alice.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
            hi = await alice.call_tool("bash", ECHO)
            task = task_id(text_of(await alice.call_tool("bash", background(marker))))
            foreign = await bob.call_tool("bash_output", {"task_id": task})
            own = await alice.call_tool("bash_kill", {"task_id": task})
        assert server.stop() == 0
    assert (text_of(hi), hi.is_error) == ("hi\n", False)
    assert (text_of(foreign), foreign.is_error) == (f"Error: unknown task {task}", True)
    assert not own.is_error
    sessions = {
        r["subject"]: r["session"] for r in audit_records(tmp_path) if r["type"] == "decision"
    }
    assert re.fullmatch(r"[0-9a-f]{16}", sessions["alice"])  # the principal's gate session


async def test_a_principal_no_rule_names_is_told_whose_rules_were_read(tmp_path: Path) -> None:
    """docs/mcp.md's `ci-bot team-a` with rules that never name ci-bot: the refusal says
    which subject and tenant the rules were read for, not only that nobody could ask."""
    bot = "ci-bot-token-0123456789abcdef0123"
    config = write_setup(tmp_path, tokens=f"{ALICE} alice team-a\n{bot} ci-bot team-a\n")
    with HttpServer(config) as server:
        async with connect(server.url, bot) as session:
            result = await session.call_tool("bash", ECHO)
        assert server.stop() == 0
    assert result.is_error
    text = text_of(result)
    assert "cannot ask the user" in text
    assert "no rule decides `echo hi` for subject 'ci-bot' in tenant 'team-a'" in text
    check = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--config", str(config),
         "--subject", "ci-bot", "--tenant", "team-a", "--json", "--", "echo hi"],
        capture_output=True, text=True, env=server_env(), timeout=60, check=False,
    )
    assert check.returncode == 10
    assert set(json.loads(check.stdout)) == {"decision", "reason", "layer", "rule", "segments"}
    assert "no rule of the policy applies to subject 'ci-bot' in tenant 'team-a'" in check.stderr
    alice = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--config", str(config),
         "--subject", "alice", "--tenant", "team-a", "--", "echo hi"],
        capture_output=True, text=True, env=server_env(), timeout=60, check=False,
    )
    assert alice.returncode == 0
    assert "no rule of the policy applies" not in alice.stderr  # alice holds the agent role
