"""examples/mcp_host_config.json and examples/shellgate.toml: an MCP host starts the server."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from shellgate.config import load_config
from tests.examples.examples_helpers import EXAMPLES, POLICIES, env_with_src, localised

PLACEHOLDER = "/absolute/path/to/shellgate.toml"


def test_the_example_config_loads_as_written() -> None:
    config = load_config(EXAMPLES / "shellgate.toml")
    assert config.policy.paths == (EXAMPLES / "../policies/default",)
    assert config.approval.mode == "deny"
    # No workspace pinned: the server's own directory, never the config's (examples/).
    assert "workspace" not in config.executor.model_fields_set


def test_docs_mcp_shows_the_example_config_as_it_is() -> None:
    example = (EXAMPLES / "shellgate.toml").read_text(encoding="utf-8")
    docs = (EXAMPLES.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    shown = docs.split("## A shellgate.toml for an MCP host", 1)[1].split("```toml\n", 1)[1]
    assert shown.split("```", 1)[0] == example[example.index("[executor]") :]


async def test_a_host_using_the_example_entry_gets_the_gated_tools(tmp_path: Path) -> None:
    host = json.loads((EXAMPLES / "mcp_host_config.json").read_text(encoding="utf-8"))
    entry = host["mcpServers"]["shellgate"]
    assert entry["command"] == "shellgate"
    assert entry["args"] == ["mcp", "--config", PLACEHOLDER]
    project = tmp_path / "project"
    project.mkdir()
    (project / "marker-of-the-project").write_text("")
    config = localised(
        EXAMPLES / "shellgate.toml",
        tmp_path,
        {
            '"../policies/default"': f'"{POLICIES / "default"}"',
            'path = "shellgate-audit.jsonl"': f'path = "{tmp_path / "audit.jsonl"}"',
        },
    )
    # The installed console script when there is one, else the same CLI as a module.
    script = shutil.which("shellgate")
    command, prefix = (script, []) if script else (sys.executable, ["-m", "shellgate.cli"])
    args = [*prefix, *(str(config) if a == PLACEHOLDER else a for a in entry["args"])]
    # Started in the project, as Claude Code starts a project's servers.
    params = StdioServerParameters(
        command=command, args=args, env={**env_with_src(), **entry["env"]}, cwd=project
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        listed = await session.call_tool("bash", {"command": "ls -a", "description": "list"})
        denied = await session.call_tool("bash", {"command": "rm -rf /", "description": "x"})
    assert [t.name for t in tools.tools] == ["bash", "bash_output", "bash_kill"]
    assert not listed.is_error
    assert "marker-of-the-project" in listed.content[0].text  # type: ignore[union-attr]
    assert denied.is_error
    assert "policy.csv:" in denied.content[0].text  # type: ignore[union-attr]
    assert (tmp_path / "audit.jsonl").is_file()
