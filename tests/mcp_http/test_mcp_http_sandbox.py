"""A sandbox decision through the MCP HTTP door: confined on a local deployment."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp_http.http_helpers import (
    ALICE,
    HttpServer,
    audit_records,
    connect,
    text_of,
    write_setup,
)

pytestmark = pytest.mark.bwrap


async def test_a_sandboxed_call_over_http_runs_confined(tmp_path: Path, outside: Path) -> None:
    config = write_setup(tmp_path)
    with (tmp_path / "policy" / "policy.csv").open("a") as rules:
        rules.write("p, agent, *, python3 *, sandbox\n")
    command = (f"python3 -c \"open('inside.txt', 'w').write('ok'); "
               f"open('{outside}/pwned', 'w').write('x')\"")
    with HttpServer(config) as server:
        async with connect(server.url, ALICE) as session:
            ran = await session.call_tool("bash", {"command": command, "description": "run"})
        assert server.stop() == 0
    assert not ran.is_error, text_of(ran)
    assert "Read-only file system" in text_of(ran)
    assert (tmp_path / "ws" / "inside.txt").read_text() == "ok"
    assert not (outside / "pwned").exists()
    decision = next(r for r in audit_records(tmp_path) if r["type"] == "decision")
    assert (decision["subject"], decision["decision"], decision["executor"]) == (
        "alice", "sandbox", "bwrap")
