"""examples/ci_agent.toml: a headless, sandboxed CI agent on the ci policy set."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from shellgate.config import load_config
from shellgate.gate import Gate
from tests.examples.examples_helpers import (
    EXAMPLES,
    POLICIES,
    ROOT,
    bwrap_works,
    env_with_src,
    localised,
)

CI_TOML = EXAMPLES / "ci_agent.toml"


def header_commands(prefix: str) -> list[list[str]]:
    """The ``shellgate …`` command lines in the file's header comment, as argv."""
    lines = CI_TOML.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines[: lines.index("[executor]")] if line.startswith("#")]
    found = [shlex.split(line.lstrip("# ")) for line in header if line.lstrip("# ").startswith(prefix)]
    assert found, f"ci_agent.toml's header no longer shows a '{prefix}' command"
    return found


def cli_argv(argv: list[str]) -> list[str]:
    """``shellgate …`` as written, run as this checkout's CLI module."""
    assert argv[0] == "shellgate"
    return [sys.executable, "-m", "shellgate.cli", *argv[1:]]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout laid out like this one: examples/ci_agent.toml as written,
    policies/ci, .gitignore, and a Makefile whose ``test`` target is cheap."""
    repo = tmp_path / "checkout"
    (repo / "examples").mkdir(parents=True)
    shutil.copy(CI_TOML, repo / "examples" / CI_TOML.name)
    shutil.copytree(POLICIES / "ci", repo / "policies" / "ci")
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    (repo / "Makefile").write_text("test:\n\t@echo all tests passed in $(CURDIR)\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    return repo


def _outside_make(env: dict[str, str]) -> dict[str, str]:
    """The environment without make's own variables: under ``make test`` the stub
    Makefile would run as a sub-make and print its directory changes."""
    return {k: v for k, v in env.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}


def untracked(repo: Path) -> list[str]:
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True, text=True, check=True,
    ).stdout
    return [line for line in status.splitlines() if line.startswith("??")]


def test_ci_config_is_headless_sandboxed_and_strict() -> None:
    config = load_config(EXAMPLES / "ci_agent.toml")
    assert config.executor.kind == "bwrap"
    assert config.sandbox.mode in ("read-only", "workspace-write")
    assert config.sandbox.network is False
    assert config.sandbox.escalation is False
    assert config.approval.mode == "deny"
    assert config.policy.default == "deny"
    assert [p.resolve() for p in config.policy.paths] == [POLICIES / "ci"]


@pytest.mark.skipif(not bwrap_works(), reason="bwrap does not work here")
async def test_ci_agent_runs_build_commands_in_the_sandbox_and_denies_the_rest(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    config = load_config(
        localised(
            EXAMPLES / "ci_agent.toml",
            tmp_path,
            {
                'workspace = ".."': f'workspace = "{tmp_path / "ws"}"',
                '"../policies/ci"': f'"{POLICIES / "ci"}"',
                'path = "../ci-audit.jsonl"': f'path = "{tmp_path / "audit.jsonl"}"',
            },
        )
    )
    async with Gate(config) as gate:
        assert gate.sandboxed
        echo = await gate.call("bash", {"command": "echo built", "description": "d"})
        unknown = await gate.call("bash", {"command": "uptime", "description": "d"})
        outside = await gate.call(
            "bash", {"command": "echo x > /etc/ci-canary", "description": "d"}
        )
    assert echo.run is not None
    assert echo.run.executor == "bwrap"
    assert echo.text == "built\n"
    assert unknown.is_error
    assert unknown.text.startswith("Error: ")
    assert outside.is_error or (outside.run is not None and outside.run.exit_code != 0)
    assert not Path("/etc/ci-canary").exists()


def test_ci_config_paths_are_the_checkout_it_sits_in() -> None:
    config = load_config(CI_TOML)
    assert Path(config.executor.workspace).resolve() == ROOT
    assert config.audit.path is not None
    assert config.audit.path.resolve() == ROOT / "ci-audit.jsonl"


@pytest.mark.skipif(not bwrap_works(), reason="bwrap does not work here")
def test_the_header_run_command_works_as_written_and_leaves_nothing_untracked(
    checkout: Path,
) -> None:
    for argv in header_commands("shellgate run"):
        done = subprocess.run(
            cli_argv(argv), cwd=checkout, env=_outside_make(env_with_src()), capture_output=True,
            text=True, timeout=120, check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout == f"all tests passed in {checkout}\n"  # the checkout, not examples/
    assert (checkout / "ci-audit.jsonl").is_file()
    assert untracked(checkout) == []


@pytest.mark.skipif(not bwrap_works(), reason="bwrap does not work here")
async def test_the_header_mcp_command_serves_the_checkout(checkout: Path) -> None:
    (argv,) = header_commands("shellgate mcp")
    command, *args = cli_argv(argv)
    params = StdioServerParameters(command=command, args=args, env=_outside_make(env_with_src()), cwd=checkout)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        built = await session.call_tool("bash", {"command": "make test", "description": "ci"})
        pushed = await session.call_tool("bash", {"command": "git push", "description": "ci"})
    assert not built.is_error
    assert f"all tests passed in {checkout}" in built.content[0].text  # type: ignore[union-attr]
    assert pushed.is_error
    assert untracked(checkout) == []
