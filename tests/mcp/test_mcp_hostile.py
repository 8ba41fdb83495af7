"""A misbehaving client: garbage lines, bad params, wrong types. The server answers and stays up."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.mcp_helpers import RawServer, call_text, write_config

GARBAGE = [
    b"this is not json",
    b"{",
    b"[]",
    b"null",
    b'{"jsonrpc": "1.0", "id": 50, "method": "tools/list"}',
    b"\xff\xfe\x00 not utf-8",
    b'{"jsonrpc": "2.0", "method": "notifications/no-such-thing"}',
    b"{" + b'"x": 1, ' * 20_000 + b'"y": 2}',
]


def _assert_alive(server: RawServer, request_id: int) -> None:
    text, is_error = call_text(
        server.call(request_id, "bash", {"command": "echo alive", "description": "check"})
    )
    assert (text, is_error) == ("alive\n", False)


def test_garbage_before_and_after_initialize_is_survived(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        for line in GARBAGE:
            server.send_line(line)
        early = server.call(9, "bash", {"command": "echo early", "description": "d"})
        assert "error" in early or "result" in early  # answered, not hung
        server.initialize()
        for line in GARBAGE:
            server.send_line(line)
        _assert_alive(server, 10)
        assert server.proc.poll() is None


def test_bad_requests_get_errors_and_the_server_stays_up(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        # params that do not fit the protocol: JSON-RPC errors, not crashes
        as_list = server.call(2, "bash", [1, 2])
        assert as_list["error"]["code"] == -32602
        bad_name = server.request(3, "tools/call", {"name": 5})
        assert bad_name["error"]["code"] == -32602
        no_method = server.request(4, "no/such/method")
        assert no_method["error"]["code"] == -32601
        # well-formed calls with bad arguments: tool results the model can read
        cases = {
            5: ("bash", {"command": 42, "description": "d"}),
            6: ("bash", {"command": "echo x", "description": "d", "run_in_background": "yes"}),
            7: ("bash", {"command": "echo x", "description": "d", "timeoutMs": -1}),
            8: ("bash_kill", {"task_id": ["bash-1"]}),
            9: ("bash", {"command": "   ", "description": "d"}),
            10: ("rm_rf", {}),
        }
        expected = {
            5: "Error: invalid command: expected a non-empty string",
            6: 'Error: invalid run_in_background: expected a boolean, got "yes"',
            7: "Error: invalid timeoutMs: expected a positive number, got -1",
            8: 'Error: invalid task_id: expected a task id like bash-1, got ["bash-1"]',
            9: "Error: invalid command: expected a non-empty string",
            10: "Error: unknown tool 'rm_rf'; the tools are bash, bash_output, bash_kill",
        }
        for request_id, (tool, arguments) in cases.items():
            text, is_error = call_text(server.call(request_id, tool, arguments))
            assert (text, is_error) == (expected[request_id], True), request_id
        missing_args = server.request(11, "tools/call", {"name": "bash"})
        text, is_error = call_text(missing_args)
        assert is_error
        assert text == 'Error: invalid arguments: missing required property "command"'
        _assert_alive(server, 12)
        server.close_stdin()
        assert server.wait() == 0


def test_a_second_initialize_and_a_response_nobody_asked_for_are_harmless(tmp_path: Path) -> None:
    with RawServer(write_config(tmp_path)) as server:
        server.initialize()
        server.send({"jsonrpc": "2.0", "id": 777, "result": {"action": "accept"}})
        server.send({"jsonrpc": "2.0", "id": 778, "error": {"code": 1, "message": "boo"}})
        again = server.request(
            2,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "again", "version": "0"},
            },
        )
        assert "result" in again or "error" in again
        _assert_alive(server, 3)
