"""Places that run code later stay closed under ``write:**``; git in another
repository asks. Real decider, real policy files, real repositories (git init)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from tests.policy.policy_helpers import write_set

ROWS = """\
p, agent, *, write:**, allow
p, agent, *, cp *, allow
p, agent, *, mv *, allow
p, agent, *, mkdir *, allow
p, agent, *, echo *, allow
p, agent, *, cat *, allow
p, agent, *, git *, allow
p, agent, *, cd *, allow
"""


def decider_in(tmp_path: Path, ws: Path, **policy: object) -> Decider:
    rules = write_set(tmp_path, ROWS, name="pol")
    config = load_config(None, policy={"paths": [str(rules)], **policy},
                         executor={"workspace": str(ws)}, audit={"path": None})
    return Decider(config)


def effect(decider: Decider, ws: Path, command: str, workdir: Path | None = None) -> str:
    real = os.path.realpath(ws)
    where = os.path.realpath(workdir) if workdir is not None else real
    call = CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="s", workdir=where, workspace=real)
    return decider.decide(call).effect


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def made(ws: Path, *names: str) -> Path:
    """The directories the commands write in exist (a write into one that does not
    asks: an earlier program could make it a link)."""
    for name in names:
        (ws / name).mkdir(parents=True, exist_ok=True)
    return ws


DENIED = [
    "cp x .claude/settings.json", "cp x .claude/settings.local.json", "cp x .mcp.json",
    "echo '{}' > .vscode/tasks.json", "echo x > .envrc", "cp x .claude/commands/go.md",
    "cp x .claude/agents/a.md", "mkdir -p .claude/skills/s", "echo x > .gemini/settings.json",
    "echo x > .idea/workspace.xml", "echo x > .cursor/mcp.json", "echo x > .gitmodules",
    "echo x > sub/pkg/.vscode/settings.json", "mv evil .claude", "mv evil .vscode",
    "cat <<'EOF' > .envrc\nexport X=1\nEOF", "echo x > ~/.claude/settings.json",
    "echo x > ~/.claude.json",
]
ASKED = [
    "cp ci.yml .github/workflows/ci.yml", "echo x > .pre-commit-config.yaml",
    "echo x > .devcontainer/devcontainer.json", "echo x > .gitlab-ci.yml", "mv x .github",
]
NEIGHBOURS = [
    "cp x .claude/CLAUDE.md", "echo x > envrc.md", "echo x > docs/vscode.md",
    "echo x > .github/CODEOWNERS", "echo x > src/claude_settings.json", "cat .vscode/tasks.json",
    "echo x > .gitignore",
]


@pytest.mark.parametrize("command", DENIED)
def test_places_that_run_code_later_are_denied_under_write_everything(
    tmp_path: Path, ws: Path, command: str
) -> None:
    assert effect(decider_in(tmp_path, ws), ws, command) == "deny"


@pytest.mark.parametrize("command", ASKED)
def test_ci_and_container_definitions_ask_under_write_everything(
    tmp_path: Path, ws: Path, command: str
) -> None:
    assert effect(decider_in(tmp_path, ws), ws, command) == "ask"


@pytest.mark.parametrize("command", NEIGHBOURS)
def test_their_neighbours_stay_allowed(tmp_path: Path, ws: Path, command: str) -> None:
    made(ws, ".claude", ".github", "docs", "src")
    assert effect(decider_in(tmp_path, ws), ws, command) == "allow"


def test_the_lists_are_configuration(tmp_path: Path, ws: Path) -> None:
    made(ws, "tools/hooks", ".vscode", ".github/workflows")
    decider = decider_in(tmp_path, ws, run_later_paths=["tools/hooks/"], run_later_ask_paths=[])
    assert effect(decider, ws, "echo x > tools/hooks/x") == "deny"
    assert effect(decider, ws, "echo x > .vscode/tasks.json") == "allow"  # replaced, not added
    assert effect(decider, ws, "echo x > .github/workflows/ci.yml") == "allow"


def test_a_bad_list_entry_type_is_a_config_error() -> None:
    from shellgate.errors import ConfigError

    with pytest.raises(ConfigError, match="run_later_paths"):
        load_config(None, policy={"run_later_paths": "not-a-list"})


# -- repositories -----------------------------------------------------------------

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")


def git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run([GIT or "git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(ws: Path) -> Path:
    git("init", "-q", ".", cwd=ws)
    (ws / "vendor").mkdir()
    git("init", "-q", "--bare", "vendor/pkg.git", cwd=ws)
    (ws / "embedded").mkdir()
    git("init", "-q", ".", cwd=ws / "embedded")
    (ws / "src").mkdir()
    return ws


@needs_git
@pytest.mark.parametrize(
    "command",
    ["git -C vendor/pkg.git log", "cd vendor/pkg.git/objects && git status",
     "cd embedded && git status", "git -C embedded diff", "git -C not-yet status",
     "git -C {outside} status", "cd {outside}/sub && git log", "git --git-dir=vendor/pkg.git log"],
)  # fmt: skip
def test_git_in_another_repository_asks(tmp_path: Path, repo: Path, command: str) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    git("init", "-q", ".", cwd=outside)
    command = command.format(outside=outside)
    assert effect(decider_in(tmp_path, repo), repo, command) == "ask"


@needs_git
def test_git_where_no_repository_is_found_runs_nothing_of_one(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert effect(decider_in(tmp_path, ws), ws, f"git -C {tmp_path}/plain status") == "allow"


@needs_git
@pytest.mark.parametrize(
    "command", ["git status", "git -C src log", "cd src && git diff", "git -C . status"]
)
def test_git_in_the_workspaces_own_repository_stays_allowed(
    tmp_path: Path, repo: Path, command: str
) -> None:
    assert effect(decider_in(tmp_path, repo), repo, command) == "allow"


@needs_git
def test_a_workspace_inside_a_repository_owns_that_repository(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "project").mkdir(parents=True)
    git("init", "-q", ".", cwd=outer)
    ws = outer / "project"
    assert effect(decider_in(tmp_path, ws), ws, "git status") == "allow"
