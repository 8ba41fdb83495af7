"""The README's tour, run as written from a checkout-like git repository (the real
checkout is never written): every command works, and what it leaves behind is
ignored by the checkout's .gitignore."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console.console_helpers import ANNOUNCED as CONSOLE_ANNOUNCED
from tests.examples.examples_helpers import EXAMPLES, POLICIES, ROOT, env_with_src
from tests.mcp_http.http_helpers import ANNOUNCED as MCP_ANNOUNCED
from tests.mcp_http.http_helpers import connect, text_of
from tests.serverproc import ServerProcess

README = ROOT / "README.md"
#: Run by their own tests (tests/examples/test_examples_*.py).
TESTED_ELSEWHERE = ("examples/agent_loop.py", "examples/pause_and_resume.py")


def tour() -> list[str]:
    """The tour's command lines as typed, their trailing comments dropped."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## A short tour", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def shell_blocks() -> list[str]:
    """The tour's other ``sh`` blocks (made files), run by bash as written."""
    section = README.read_text(encoding="utf-8").split("## A short tour", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.M | re.S)[1:]


def cli(argv: list[str]) -> list[str]:
    assert argv[0] == ".venv/bin/shellgate", argv
    return [sys.executable, "-m", "shellgate.cli", *argv[1:]]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "checkout"
    repo.mkdir()
    shutil.copytree(EXAMPLES, repo / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", "*.jsonl", "*.db"))
    shutil.copytree(POLICIES, repo / "policies")
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    return repo


def untracked(repo: Path) -> list[str]:
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True, text=True, check=True,
    ).stdout
    return [line for line in status.splitlines() if line.startswith("??")]


async def test_the_readme_tour_runs_and_leaves_only_ignored_files(
    checkout: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    shutil.copy(ROOT / "tests/importers/samples/settings.json", home / ".claude/settings.json")
    env = {**env_with_src(), "HOME": str(home)}
    for block in shell_blocks():  # tokens.txt, as the README makes it
        subprocess.run(["bash", "-c", block], cwd=checkout, env=env, check=True, timeout=30)
    console_header = (checkout / "examples/console.toml").read_text().splitlines()
    [make_console_tokens] = [line[1:].strip() for line in console_header
                             if line.startswith("#") and "console-tokens" in line
                             and "umask" in line]
    subprocess.run(["bash", "-c", make_console_tokens], cwd=checkout, env=env, check=True)

    ran: list[str] = []
    for line in tour():
        argv = shlex.split(line)
        if argv[0] == ".venv/bin/python":
            assert argv[1] in TESTED_ELSEWHERE
            continue
        words = " ".join(argv[1:3])
        ran.append(words)
        if "--http" in argv:  # until SIGTERM: serve, connect as the documented client
            port = argv.index("--http") + 1
            argv = [*argv[:port], "127.0.0.1:0", *argv[port + 1 :]]  # any free port
            server = ServerProcess(cli(argv), tmp_path / "http.log", MCP_ANNOUNCED, cwd=checkout)
            try:
                token = (checkout / "tokens.txt").read_text().split()[0]
                async with connect(server.url, token) as session:
                    said = await session.call_tool(
                        "bash", {"command": "echo hi", "description": "greet"})
                assert (said.is_error, text_of(said)) == (False, "hi\n")
                assert server.stop() == 0
            finally:
                server.close()
        elif argv[1] == "serve":  # until SIGTERM
            server = ServerProcess([*cli(argv), "--listen", "127.0.0.1:0"],
                                   tmp_path / "serve.log", CONSOLE_ANNOUNCED, cwd=checkout)
            try:
                assert server.stop() == 0
            finally:
                server.close()
            assert "WARNING" not in server.stderr()
        else:  # by bash, as typed (~ expands); mcp over stdio ends at its stdin's end
            line = line.replace(".venv/bin/shellgate", shlex.join(cli([".venv/bin/shellgate"])))
            done = subprocess.run(["bash", "-c", line], cwd=checkout, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=120, check=False)
            expected = 11 if argv[1] == "check" else 0  # check: rm -rf ~ is a deny
            assert done.returncode == expected, (argv, done.stdout, done.stderr)
            assert "Traceback" not in done.stderr
    assert any("mcp --http" in line for line in tour())
    assert ran[:3] == ["check --", "run --", "policy test"]
    assert (checkout / "policy.db").is_file()
    assert (checkout / "my-policy" / "policy.csv").is_file()
    assert untracked(checkout) == []
