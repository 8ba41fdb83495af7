"""Bytes on the wire that are not clean JSON-RPC: answered when the id reads, never run."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shlex
import subprocess
from pathlib import Path

import anyio
import pytest

from shellgate.mcp import wire as mcp_wire
from shellgate.mcp.wire import INVALID_REQUEST, PARSE_ERROR, Refused, read_line
from tests.conftest import wait_until
from tests.mcp.mcp_helpers import (
    RawServer,
    audit_records,
    call_text,
    server_argv,
    server_env,
    write_config,
)


def _request(request_id: int, command: bytes) -> bytes:
    """A tools/call line whose command is the given raw bytes (already JSON-escaped)."""
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "bash", '
        b'"arguments": {"command": "%s", "description": "d"}}}' % (request_id, command)
    )


def _assert_alive(server: RawServer, request_id: int) -> None:
    text, is_error = call_text(
        server.call(request_id, "bash", {"command": "echo alive", "description": "d"})
    )
    assert (text, is_error) == ("alive\n", False)


@pytest.mark.parametrize(
    ("command", "code"),
    [
        pytest.param(b"echo \xff > made.txt", PARSE_ERROR, id="invalid-utf8"),
        pytest.param(b"echo \xed\xa0\x80 > made.txt", PARSE_ERROR, id="utf8-encoded-surrogate"),
        pytest.param(b"echo \\ud800 > made.txt", INVALID_REQUEST, id="escaped-lone-surrogate"),
    ],
)
def test_a_request_that_is_not_unicode_is_refused_and_nothing_runs(
    tmp_path: Path, command: bytes, code: int
) -> None:
    # approval "allow": were the command let through, it would run and make the file
    with RawServer(write_config(tmp_path, approval="allow")) as server:
        server.initialize()
        server.send_line(_request(2, command))
        answer = server.recv(timeout_s=20)  # the very next message: the refusal, not a result
        assert answer["id"] == 2
        assert answer["error"]["code"] == code
        assert "nothing in it was run" in answer["error"]["message"]
        _assert_alive(server, 3)
        assert not (tmp_path / "ws" / "made.txt").exists()
        commands = [r["command"] for r in audit_records(tmp_path) if r["type"] == "decision"]
        assert commands == ["echo alive"]  # the refused line never reached the gate
        (refused,) = [r for r in audit_records(tmp_path) if r["type"] == "refused"]
        assert refused["answered_id"] == 2
        assert refused["reason"] == answer["error"]["message"]
        line = _request(2, command)
        assert refused["line_bytes"] == len(line)
        assert refused["line_sha256"] == hashlib.sha256(line).hexdigest()


def test_lines_without_a_readable_id_are_logged_and_the_rest_answered(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        unanswerable = [
            b"this is not json",
            b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}',  # not an id
            b'{"jsonrpc": "2.0", "id": "\\udc80", "method": "tools/list"}',  # the id is the bad part
            b'{"jsonrpc": "2.0", "id": "\xff", "method": "tools/list"}',
            b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"k": "\\ud800"}}',
            b'{"jsonrpc": "2.0", "id": 5, "result": {"k": "\\udfff"}}',  # a response: never answered
            b"[]",
        ]
        for line in unanswerable:
            server.send_line(line)
        server.send_line(b'{"jsonrpc": "1.0", "id": "old", "method": "tools/list"}')
        server.send_line(b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": "x\xc3"}')
        server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        got = [server.recv(timeout_s=20) for _ in range(3)]
        assert [m["id"] for m in got] == ["old", 6, 7]  # nothing else came first
        assert got[0]["error"]["code"] == INVALID_REQUEST
        assert got[1]["error"]["code"] == PARSE_ERROR
        assert len(got[2]["result"]["tools"]) == 3
        with pytest.raises(queue.Empty):  # and nothing else comes late
            server.recv(timeout_s=0.5)
        assert wait_until(
            lambda: server.stderr().count("dropped a line from the client") == len(unanswerable)
        )
        _assert_alive(server, 8)
        refused = [r for r in audit_records(tmp_path) if r["type"] == "refused"]
        assert len(refused) == len(unanswerable) + 2  # nothing unrecorded, answered or not
        assert [r["answered_id"] for r in refused[-2:]] == ["old", 6]
        assert refused[0]["line"] == "this is not json"


@pytest.mark.parametrize(
    ("line", "reason", "answer_id"),
    [
        pytest.param(b"{", "parse error: the line is not JSON", None, id="not-json"),
        pytest.param(b"NaN", "parse error: the line is not JSON", None, id="nan"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"\\ud800":1}}',
            "invalid request: a key in params holds a lone surrogate",
            3,
            id="surrogate-key",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":"a","method":"x","params":[{"k":["\\udfff"]}]}',
            "invalid request: params[0].k[0] holds a lone surrogate",
            "a",
            id="surrogate-in-a-list",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":true,"method":"x"}',
            "invalid request: the id is neither an integer nor a string",
            None,
            id="boolean-id-unanswerable",
        ),
        pytest.param(
            b'{"jsonrpc":"1.0","id":9,"method":"x"}',
            "invalid request: not a JSON-RPC 2.0 message",
            9,
            id="old-jsonrpc",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"command":"a\x01b"}}',
            "parse error: the line is not JSON",
            8,
            id="raw-control-character-answered",
        ),
        pytest.param(
            b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"bom","method":"ping"}',
            "parse error: the line is not JSON",
            "bom",
            id="byte-order-mark-answered",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":10,"method":"ping","x":NaN}',
            "parse error: the line is not JSON",
            10,
            id="nan-inside-answered",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":11,"method":"ping"}\x00',
            "parse error: the line is not JSON",
            11,
            id="trailing-bytes-answered",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":12,"method":"ping"',
            "parse error: the line is not JSON",
            None,
            id="truncated-unanswerable",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":"\\udc80","method":"ping","x":NaN}',
            "parse error: the line is not JSON",
            None,
            id="lenient-surrogate-id-unanswerable",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":5,"result":NaN}',
            "parse error: the line is not JSON",
            None,
            id="lenient-response-unanswered",
        ),
    ],
)
def test_read_line_refuses(line: bytes, reason: str, answer_id: object) -> None:
    checked = read_line(line)
    assert isinstance(checked, Refused)
    assert checked.reason.startswith(reason), checked.reason
    if answer_id is None:
        assert checked.answer is None
    else:
        assert checked.answer is not None
        assert checked.answer.id == answer_id


def test_a_blank_line_is_skipped() -> None:
    assert read_line(b" \r") is None


def test_a_clean_line_passes_unchanged() -> None:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "echo ü €", "description": "d"}},
        },
        ensure_ascii=False,
    ).encode()
    checked = read_line(line)
    assert not isinstance(checked, Refused)
    assert checked is not None
    assert checked.model_dump(by_alias=True, exclude_unset=True) == json.loads(line)


async def test_an_over_long_line_is_dropped_unread_and_the_next_line_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mcp_wire, "MAX_LINE_BYTES", 1000)
    read_fd, write_fd = os.pipe()
    out_read, out_write = os.pipe()
    os.set_blocking(read_fd, False)
    refused: list[tuple[bytes, Refused]] = []
    wire = mcp_wire.Wire(read_fd, out_write, lambda line, why: refused.append((line, why)))

    def listing(request_id: int) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}).encode()

    long_line = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"x": "'
    data = listing(1) + b"\n" + long_line + b"y" * 5000 + b'"}}\n' + listing(2)  # no last \n
    try:
        os.write(write_fd, data)
        os.close(write_fd)
        async with anyio.create_task_group() as tg, wire.read_stream:
            tg.start_soon(wire.read)
            tg.start_soon(wire.write)  # ends once both senders have closed
            got = [item async for item in wire.read_stream]
            await wire.write_stream.aclose()
        ids = [getattr(item.message, "id", None) for item in got if not isinstance(item, Exception)]
        assert ids == [1, 2]
        ((head, why),) = refused  # the dropped line is on the record, not only in the log
        assert head.startswith(long_line)
        assert len(head) > 1000
        assert "dropped unread" in why.reason
        assert why.answer is None
    finally:
        for fd in (read_fd, out_read, out_write):
            os.close(fd)


@pytest.mark.parametrize("fd", [0, 1], ids=["stdin", "stdout"])
def test_a_closed_stdin_or_stdout_is_a_start_up_error(tmp_path: Path, fd: int) -> None:
    argv = " ".join(shlex.quote(a) for a in server_argv(write_config(tmp_path)))
    done = subprocess.run(
        ["sh", "-c", f'exec {argv} {fd}<&- 2>"$1"', "sh", str(tmp_path / "err")],
        env=server_env(),
        stdin=subprocess.PIPE,
        timeout=60,
        check=False,
    )
    name = "stdin" if fd == 0 else "stdout"
    assert done.returncode == 2
    assert (tmp_path / "err").read_text() == (
        f"error: {name} is closed; shellgate mcp speaks MCP over stdin/stdout\n"
    )
