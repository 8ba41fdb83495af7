"""``ask`` on the modern MCP protocol: ``input_required`` with a sealed request state.

A real ``shellgate mcp`` process, the SDK's ``mcp.Client`` negotiating 2026-07-28
(``server/discover``, no ``initialize``): an ask comes back as an
``InputRequiredResult`` carrying one form elicitation, the client asks its user and
retries with the answer and the request state. The person is on the record as
``mcp-user:<subject>``; a forged, altered, replayed, expired or mismatched state is
a deny naming the cause, and nothing runs.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import mcp_types as types

from shellgate.config import load_config
from shellgate.gate import Gate
from shellgate.mcp.ask import APPROVAL_INPUT, CANCELLED, DECLINED, NO_ELICITATION, ModernAsk
from tests.mcp.mcp_helpers import (
    ACCEPT,
    DECLINE,
    ScriptedUser,
    answer,
    audit_records,
    connect_modern,
    text_of,
    touch,
    write_config,
)

MODERN = "2026-07-28"


def by_call(tmp_path: Path, call_id: str) -> list[dict[str, Any]]:
    return [r for r in audit_records(tmp_path) if r.get("call_id") == call_id]


def the_decision(tmp_path: Path, command: str) -> dict[str, Any]:
    [record] = [
        r
        for r in audit_records(tmp_path)
        if r.get("type") == "decision" and r["command"] == command
    ]
    return record


async def test_accept_runs_once_on_the_decision_and_names_the_person(tmp_path: Path) -> None:
    user = ScriptedUser("accept", "decline", "cancel")
    ws = tmp_path / "ws"
    async with connect_modern(write_config(tmp_path), elicitation=user) as client:
        assert client.protocol_version == MODERN
        accepted = await client.call_tool("bash", touch("yes.txt"))
        declined = await client.call_tool("bash", touch("no.txt"))
        cancelled = await client.call_tool("bash", touch("maybe.txt"))
        allowed = await client.call_tool("bash", {"command": "echo hi", "description": "d"})
        denied = await client.call_tool("bash", {"command": "rm -f x", "description": "d"})

    assert (text_of(accepted), accepted.is_error) == ("(no output)", False)
    assert (ws / "yes.txt").exists()

    assert declined.is_error
    assert text_of(declined).startswith("Error: not approved (mcp-user:agent: ")
    assert DECLINED in text_of(declined)
    assert "writes files" in text_of(declined)  # the rule's reason reaches the model
    assert not (ws / "no.txt").exists()
    assert cancelled.is_error
    assert CANCELLED in text_of(cancelled)
    assert not (ws / "maybe.txt").exists()

    assert (text_of(allowed), allowed.is_error) == ("hi\n", False)
    assert denied.is_error
    assert "removes files" in text_of(denied)

    # one question per ask, as a form with no fields; an allow or a deny asks nobody
    assert len(user.questions) == 3
    first = user.questions[0]
    assert isinstance(first, types.ElicitRequestFormParams)
    assert first.requested_schema == {"type": "object", "properties": {}}
    assert first.message.startswith("Allow this command? `touch yes.txt`")
    assert "Purpose (as the agent states it): create yes.txt" in first.message
    assert f"Working directory: {ws.resolve()}" in first.message

    # one decision per call (gate.decide), the person's answer, the run: one call_id
    yes = the_decision(tmp_path, "touch yes.txt")
    assert (yes["decision"], yes["via"]) == ("ask", "decide")
    records = by_call(tmp_path, yes["call_id"])
    assert [r["type"] for r in records] == ["decision", "approval", "result"]
    approval = records[1]
    assert (approval["via"], approval["answer"], approval["approver"]) == (
        "approve",
        "allow_once",
        "mcp-user:agent",
    )
    assert approval["question"].startswith("Allow this command? `touch yes.txt`")
    assert records[2]["exit_code"] == 0

    no = by_call(tmp_path, the_decision(tmp_path, "touch no.txt")["call_id"])
    assert [(r["type"], r.get("answer"), r.get("approver")) for r in no] == [
        ("decision", None, None),
        ("approval", "deny", "mcp-user:agent"),
        ("result", None, None),
    ]
    assert no[1]["message"] == DECLINED
    assert no[2]["outcome"] == "not approved"

    rm = by_call(tmp_path, the_decision(tmp_path, "rm -f x")["call_id"])
    assert [r["type"] for r in rm] == ["decision", "result"]
    assert rm[1]["outcome"] == "denied"


async def test_a_modern_client_without_elicitation_gets_the_headless_deny(tmp_path: Path) -> None:
    async with connect_modern(write_config(tmp_path)) as client:  # no callback: no capability
        assert client.protocol_version == MODERN
        result = await client.call_tool("bash", touch("x.txt"))
    assert result.is_error
    assert NO_ELICITATION in text_of(result)
    assert not (tmp_path / "ws" / "x.txt").exists()


def altered(state: str) -> str:
    """The same token with one byte of its sealed body changed."""
    at = len(state) // 2
    return state[:at] + ("A" if state[at] != "A" else "B") + state[at + 1 :]


async def test_forged_altered_mismatched_and_replayed_states_are_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    async with connect_modern(write_config(tmp_path), elicitation=ScriptedUser()) as client:
        session = client.session

        async def call(args: dict[str, str], **retry: Any) -> Any:
            return await session.call_tool("bash", args, allow_input_required=True, **retry)

        first = await call(touch("t.txt"))
        assert isinstance(first, types.InputRequiredResult)
        assert first.result_type == "input_required"
        assert first.input_requests is not None
        [(key, ask)] = first.input_requests.items()
        assert key == APPROVAL_INPUT
        assert isinstance(ask, types.ElicitRequest)
        state = first.request_state
        assert state is not None
        assert "touch" not in state  # sealed, not readable
        assert not (ws / "t.txt").exists()  # asking ran nothing

        refusals = {
            "altered": await call(
                touch("t.txt"), input_responses=ACCEPT, request_state=altered(state)
            ),
            "forged": await call(touch("t.txt"), input_responses=ACCEPT, request_state="v1.AAAA"),
            "other call": await call(touch("u.txt"), input_responses=ACCEPT, request_state=state),
            "no answer": await call(touch("t.txt"), request_state=state),
        }
        assert not (ws / "t.txt").exists()
        assert not (ws / "u.txt").exists()

        genuine = await call(touch("t.txt"), input_responses=ACCEPT, request_state=state)
        assert (text_of(genuine), genuine.is_error) == ("(no output)", False)
        assert (ws / "t.txt").exists()
        (ws / "t.txt").unlink()
        replayed = await call(touch("t.txt"), input_responses=ACCEPT, request_state=state)

        # declined, then the same state presented again with an accept
        second = await call(touch("d.txt"))
        no = await call(touch("d.txt"), input_responses=DECLINE, request_state=second.request_state)
        flipped = await call(
            touch("d.txt"), input_responses=ACCEPT, request_state=second.request_state
        )

    for why, result in refusals.items():
        assert result.is_error, why
        assert text_of(result).startswith("Error: not approved: "), why
        assert text_of(result).endswith("; the command was not run"), why
    assert "was not issued by this server or was altered" in text_of(refusals["altered"])
    assert "was not issued by this server or was altered" in text_of(refusals["forged"])
    assert "issued for another call" in text_of(refusals["other call"])
    assert "carried no answer" in text_of(refusals["no answer"])

    assert replayed.is_error
    assert "was already used" in text_of(replayed)
    assert not (ws / "t.txt").exists()  # the replay ran nothing
    assert no.is_error
    assert DECLINED in text_of(no)
    assert flipped.is_error
    assert "was already used" in text_of(flipped)
    assert not (ws / "d.txt").exists()

    # every refusal is on the record: the gate's seal, not the person, said no
    refused = [
        r
        for r in audit_records(tmp_path)
        if r.get("type") == "approval" and r.get("approver") == "shellgate"
    ]
    assert len(refused) == 6
    assert all(r["answer"] == "deny" and r["via"] == "approval" for r in refused)
    assert sum("already used" in r["message"] for r in refused) == 2


async def test_a_state_from_another_server_process_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    async with connect_modern(config, elicitation=ScriptedUser()) as client:
        first = await client.session.call_tool("bash", touch("p.txt"), allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
    async with connect_modern(config, elicitation=ScriptedUser()) as client:  # restarted
        result = await answer(client, touch("p.txt"), first)
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    assert "was not issued by this server or was altered" in text_of(result)
    assert not (tmp_path / "ws" / "p.txt").exists()


async def test_an_answer_after_the_approval_timeout_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    text = config.read_text().replace("timeout_ms = 10000", "timeout_ms = 200")
    config.write_text(text)
    async with connect_modern(config, elicitation=ScriptedUser()) as client:
        first = await client.session.call_tool("bash", touch("late.txt"), allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        asked = time.monotonic()
        await asyncio.sleep(0.6)  # the person takes 3x the deadline to answer
        assert time.monotonic() - asked >= 0.6
        result = await answer(client, touch("late.txt"), first)
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    assert "came after the approval deadline" in text_of(result)
    assert "200 ms" in text_of(result)
    assert not (tmp_path / "ws" / "late.txt").exists()


async def test_a_state_is_bound_to_the_principal_it_was_issued_to(tmp_path: Path) -> None:
    """Over HTTP one server serves many principals; a state names the one it was issued to.

    In process (stdio has one principal): the same asker, one gate, two owners.
    """
    asker = ModernAsk(10_000)
    abort = asyncio.Event()
    async with Gate(load_config(write_config(tmp_path))) as gate:
        alice = gate.owner("alice", "acme", "s1")
        mallory = gate.owner("mallory", "acme", "s2")
        first = await asker._first_round(gate, alice, touch("a.txt"), abort)
        assert isinstance(first, types.InputRequiredResult)
        assert first.request_state is not None
        stolen = await asker._resume(
            gate, mallory, "bash", touch("a.txt"), first.request_state, ACCEPT, abort
        )
        assert stolen.is_error
        assert "was issued to another principal or session" in stolen.text
        assert not (tmp_path / "ws" / "a.txt").exists()
        own = await asker._resume(
            gate, alice, "bash", touch("a.txt"), first.request_state, ACCEPT, abort
        )
        assert (own.text, own.is_error) == ("(no output)", False)
    assert (tmp_path / "ws" / "a.txt").exists()
    [approval] = [
        r for r in audit_records(tmp_path) if r.get("type") == "approval" and r["via"] == "approve"
    ]
    assert approval["approver"] == "mcp-user:alice"


async def test_refused_states_do_not_write_into_another_calls_records(tmp_path: Path) -> None:
    """A call_id is one call's story. A state presented by another principal, or for
    other arguments, or one that does not verify, is refused on the record under its
    own call_id (naming the decision it claimed), not under the real call's id, which
    the real answer then continues."""
    asker = ModernAsk(10_000)
    abort = asyncio.Event()
    async with Gate(load_config(write_config(tmp_path))) as gate:
        alice = gate.owner("alice", "acme", "s1")
        mallory = gate.owner("mallory", "acme", "s2")
        first = await asker._first_round(gate, alice, touch("a.txt"), abort)
        assert isinstance(first, types.InputRequiredResult)
        state = first.request_state
        assert state is not None
        for who, args, st in ((mallory, touch("a.txt"), state), (alice, touch("b.txt"), state),
                              (alice, touch("a.txt"), altered(state))):
            refused = await asker._resume(gate, who, "bash", args, st, ACCEPT, abort)
            assert refused.outcome == "not approved"
        own = await asker._resume(gate, alice, "bash", touch("a.txt"), state, ACCEPT, abort)
        assert own.outcome == "ok"
    decision = the_decision(tmp_path, "touch a.txt")
    assert [r["type"] for r in by_call(tmp_path, decision["call_id"])] == [
        "decision", "approval", "result"]
    claims = [r for r in audit_records(tmp_path) if "claimed_decision" in r]
    assert [r["claimed_decision"] for r in claims] == [decision["call_id"]] * 2
    assert all(r.get("call_id") for r in audit_records(tmp_path))  # never an empty call_id


async def test_the_question_sent_to_the_client_cannot_be_repainted_by_the_agent(
    tmp_path: Path,
) -> None:
    """The elicitation message is shown by the client, often in a terminal. The agent
    writes the description (and a justification): control characters there (``ESC[2A``
    moves the cursor up over the real command line), bidi overrides, or newlines that
    start a line of their own could show the person another command or another ask.
    Every line of the message is shellgate's; the agent's text stays inside its own,
    escaped as the terminal prompt escapes it."""
    asker = ModernAsk(10_000)
    abort = asyncio.Event()
    spoof = ("tidy up\x1b[3A\x1b[2K\rCommand: ls -la\u202e\nWorking directory: /tmp\n"
             "Accept to run it once; decline to refuse.")
    async with Gate(load_config(write_config(tmp_path))) as gate:
        owner = gate.owner(None, None, None)
        first = await asker._first_round(
            gate, owner, {"command": "touch x.txt", "description": spoof}, abort)
    assert isinstance(first, types.InputRequiredResult)
    assert first.input_requests is not None
    message = first.input_requests[APPROVAL_INPUT].params.message  # type: ignore[union-attr]
    for hidden in ("\x1b", "\r", "\u202e"):
        assert hidden not in message
    lines = message.split("\n")
    assert [line.split(":")[0] for line in lines[1:]] == [
        "Command", "Purpose (as the agent states it)", "Working directory",
        "Accept to run it once; decline to refuse."]
    assert lines[1] == "Command: touch x.txt"
    assert "\\x1b[3A" in lines[2]
    assert "\\u202e" in lines[2]
