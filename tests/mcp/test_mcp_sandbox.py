"""A sandbox decision through the MCP stdio door: confined on a local deployment."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.mcp_helpers import RULES, audit_records, connect, text_of, write_config

pytestmark = pytest.mark.bwrap


def script(outside: Path) -> str:
    return (f"python3 -c \"open('inside.txt', 'w').write('ok'); "
            f"open('{outside}/pwned', 'w').write('x')\"")


async def test_a_sandboxed_call_over_mcp_runs_confined(tmp_path: Path, outside: Path) -> None:
    config = write_config(tmp_path, rules=RULES + "p, agent, *, python3 *, sandbox\n")
    async with connect(config) as session:
        listing = await session.list_tools()
        ran = await session.call_tool("bash", {"command": script(outside), "description": "run"})
        started = await session.call_tool("bash", {"command": "python3 -c 'import time'",
                                                   "description": "bg",
                                                   "run_in_background": True})
    assert not ran.is_error, text_of(ran)
    assert "Read-only file system" in text_of(ran)
    assert (tmp_path / "ws" / "inside.txt").read_text() == "ok"
    assert not (outside / "pwned").exists()
    assert text_of(started).startswith("started background task bash-1")
    bash = next(t for t in listing.tools if t.name == "bash")
    assert "sandbox_permissions" in bash.input_schema["properties"]  # escalation is offered
    decisions = [r for r in audit_records(tmp_path) if r["type"] == "decision"]
    assert [(r["decision"], r["executor"]) for r in decisions] == [("sandbox", "bwrap")] * 2


async def test_without_bwrap_the_mcp_door_asks_and_runs_nothing(
    tmp_path: Path, outside: Path
) -> None:
    config = write_config(tmp_path, rules=RULES + "p, agent, *, python3 *, sandbox\n",
                          extra=f'[sandbox]\nbwrap_path = "{tmp_path / "no-bwrap"}"\n')
    async with connect(config) as session:  # no elicitation: the headless deny answers
        refused = await session.call_tool("bash", {"command": script(outside),
                                                   "description": "run"})
    assert refused.is_error
    assert "bubblewrap is not installed" in text_of(refused)
    assert not (tmp_path / "ws" / "inside.txt").exists()
