"""``ask`` over MCP: elicitation when the client declares it, the headless default otherwise."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types

from shellgate.mcp.server import CANCELLED, DECLINED, NO_ELICITATION
from tests.mcp.mcp_helpers import (
    RawServer,
    ScriptedUser,
    audit_records,
    call_text,
    connect,
    text_of,
    touch,
    write_config,
)


async def test_accept_runs_once_and_decline_or_cancel_deny_with_guidance(tmp_path: Path) -> None:
    user = ScriptedUser("accept", "decline", "cancel")
    ws = tmp_path / "ws"
    async with connect(write_config(tmp_path), elicitation=user) as session:
        accepted = await session.call_tool("bash", touch("yes.txt"))
        declined = await session.call_tool("bash", touch("no.txt"))
        cancelled = await session.call_tool("bash", touch("maybe.txt"))
        allowed = await session.call_tool("bash", {"command": "echo hi", "description": "d"})

    assert (text_of(accepted), accepted.is_error) == ("(no output)", False)
    assert (ws / "yes.txt").exists()

    assert declined.is_error
    assert text_of(declined).startswith("Error: not approved (")
    assert DECLINED in text_of(declined)
    assert "writes files" in text_of(declined)  # the rule's reason reaches the model
    assert not (ws / "no.txt").exists()

    assert cancelled.is_error
    assert CANCELLED in text_of(cancelled)
    assert not (ws / "maybe.txt").exists()

    # one question per ask; an allowed command asks nobody
    assert len(user.questions) == 3
    first = user.questions[0]
    assert isinstance(first, types.ElicitRequestFormParams)
    assert "touch yes.txt" in first.message
    assert "create yes.txt" in first.message
    assert first.requested_schema == {"type": "object", "properties": {}}
    assert text_of(allowed) == "hi\n"

    approvals = [r for r in audit_records(tmp_path) if r.get("type") == "approval"]
    assert [(r["answer"], r["approver"]) for r in approvals] == [
        ("allow_once", "mcp-elicitation"),
        ("deny", "mcp-elicitation"),
        ("deny", "mcp-elicitation"),
    ]


async def test_client_without_elicitation_gets_the_headless_deny(tmp_path: Path) -> None:
    async with connect(write_config(tmp_path)) as session:  # no callback: no capability
        result = await session.call_tool("bash", touch("x.txt"))
    assert result.is_error
    assert NO_ELICITATION in text_of(result)
    assert "writes files" in text_of(result)
    assert not (tmp_path / "ws" / "x.txt").exists()


def test_headless_allow_mode_runs_asks_without_a_prompt(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path, approval="allow")) as server:
        server.initialize()
        text, is_error = call_text(server.call(2, "bash", touch("t.txt")))
        assert (text, is_error) == ("(no output)", False)
        assert (tmp_path / "ws" / "t.txt").exists()
        server.close_stdin()
        assert server.wait() == 0
        assert "approval mode 'allow'" in server.stderr()  # said loudly


def test_elicitation_error_from_the_client_denies(tmp_path: Path) -> None:
    """A client that declares elicitation but answers the request with an error: deny."""
    with RawServer(write_config(tmp_path)) as server:
        server.initialize({"elicitation": {"form": {}}})
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "bash", "arguments": touch("e.txt")},
            }
        )
        question = server.recv()
        assert question["method"] == "elicitation/create"
        server.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "error": {"code": -32603, "message": "the UI crashed"},
            }
        )
        text, is_error = call_text(server.response(2))
        assert is_error
        assert "the approval prompt could not be shown" in text
        assert "the UI crashed" in text
        assert not (tmp_path / "ws" / "e.txt").exists()
