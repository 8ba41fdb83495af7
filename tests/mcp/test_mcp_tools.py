"""The MCP server through the official client: listing, results, tool errors, principal."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shellgate.tools.schemas import schemas
from tests.mcp.mcp_helpers import (
    audit_records,
    connect,
    server_argv,
    server_env,
    text_of,
    write_config,
)


async def test_tools_list_serves_exactly_the_gate_schemas(tmp_path: Path) -> None:
    async with connect(write_config(tmp_path)) as session:
        listing = await session.list_tools()
    served = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for t in listing.tools
    ]
    assert served == schemas("mcp", sandboxed=False)
    assert [t["name"] for t in served] == ["bash", "bash_output", "bash_kill"]


async def test_bwrap_server_offers_the_escalation_arguments(tmp_path: Path) -> None:
    pytest.importorskip("shellgate.executors.bwrap", reason="the bwrap executor is not built yet")
    config = write_config(tmp_path, executor='kind = "bwrap"')
    async with connect(config) as session:
        listing = await session.list_tools()
    bash = next(t for t in listing.tools if t.name == "bash")
    assert "sandbox_permissions" in bash.input_schema["properties"]
    assert bash.input_schema == schemas("mcp", sandboxed=True)[0]["inputSchema"]


async def test_results_denials_and_tool_errors_are_tool_results(tmp_path: Path) -> None:
    async with connect(write_config(tmp_path)) as session:
        ok = await session.call_tool("bash", {"command": "echo hi", "description": "say hi"})
        failed = await session.call_tool("bash", {"command": "false", "description": "fail"})
        denied = await session.call_tool("bash", {"command": "rm notes.txt", "description": "rm"})
        bad_type = await session.call_tool(
            "bash", {"command": "echo x", "description": "d", "timeoutMs": "soon"}
        )
        unknown_tool = await session.call_tool("python", {"code": "1"})
        unknown_task = await session.call_tool("bash_output", {"task_id": "bash-99"})
        after = await session.call_tool("bash", {"command": "echo still up", "description": "d"})

    assert (text_of(ok), ok.is_error) == ("hi\n", False)
    assert (text_of(failed), failed.is_error) == ("(no output)\n[exit code: 1]", False)
    assert denied.is_error
    assert text_of(denied).startswith("Error: denied by casbin rule ")
    assert "policy.csv:8" in text_of(denied)
    assert "removes files" in text_of(denied)
    assert bad_type.is_error
    assert text_of(bad_type) == 'Error: invalid timeoutMs: expected a positive number, got "soon"'
    assert unknown_tool.is_error
    assert text_of(unknown_tool) == (
        "Error: unknown tool 'python'; the tools are bash, bash_output, bash_kill"
    )
    assert (text_of(unknown_task), unknown_task.is_error) == ("Error: unknown task bash-99", True)
    assert text_of(after) == "still up\n"


async def test_principal_comes_from_config_never_from_arguments(tmp_path: Path) -> None:
    rules = """
        p, bob, *, echo *, allow
        p, agent, *, echo *, deny, agents may not echo
    """
    config = write_config(tmp_path, rules=rules, subject="bob", tenant="acme")
    async with connect(config) as session:
        smuggled = await session.call_tool(
            "bash", {"command": "echo hi", "description": "d", "subject": "agent"}
        )
        plain = await session.call_tool("bash", {"command": "echo hi", "description": "d"})
    assert smuggled.is_error
    assert text_of(smuggled) == 'Error: invalid arguments: unknown property "subject"'
    assert (text_of(plain), plain.is_error) == ("hi\n", False)
    decisions = [r for r in audit_records(tmp_path) if r.get("type") == "decision"]
    assert decisions, "the call was not audited"
    assert {(r["subject"], r["tenant"]) for r in decisions} == {("bob", "acme")}


@pytest.mark.parametrize(
    ("setup", "args", "needle"),
    [
        pytest.param("unknown-key", [], "unknown key 'policy.defualt'", id="bad-config"),
        pytest.param("bad-policy", [], "policy.csv:1", id="broken-policy"),
        pytest.param("ok", ["--log-level", "LOUD"], "invalid --log-level", id="bad-log-level"),
    ],
)
def test_start_up_mistakes_are_one_line_and_exit_2(
    tmp_path: Path, setup: str, args: list[str], needle: str
) -> None:
    config = write_config(tmp_path)
    if setup == "unknown-key":
        config.write_text(config.read_text().replace('default = "ask"', 'defualt = "ask"'))
    elif setup == "bad-policy":
        (tmp_path / "policy" / "policy.csv").write_text("p, agent, *, ls *, perhaps\n")
    done = subprocess.run(
        [*server_argv(config), *args],
        input="",
        capture_output=True,
        text=True,
        env=server_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # stdout is the protocol: nothing else ever goes there
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    # the CLI's error style: a hint line may follow ("did you mean 'policy.default'?")
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("hint: "))
