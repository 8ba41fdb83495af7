"""A repository nested in the workspace is found the way git finds one (issue 23).

git walks up from its working directory (after every ``cd`` and ``-C``) to the
first ``.git`` or bare repository, and runs what that repository's
configuration says (aliases, ``core.fsmonitor``, hooks). So an allowed git
command run inside an embedded repository, a vendored bare one or any
directory below it asks; the workspace's own repository stays allowed. The
proofs run the real git in a throwaway workspace.
"""

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

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not on this machine")
_ALIAS = "[alias]\n\tst = !touch MARKER\n"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})  # fmt: skip


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace repository holding a bare ``vendor/pkg.git`` and an embedded
    ``vendor/lib`` repository, each configured to run a program."""
    ws = tmp_path / "ws"
    (ws / "vendor").mkdir(parents=True)
    _git("init", "-q", cwd=ws)
    _git("init", "-q", "--bare", "vendor/pkg.git", cwd=ws)
    _git("init", "-q", "vendor/lib", cwd=ws)
    (ws / "vendor" / "lib" / "src").mkdir()
    for config in (ws / "vendor/pkg.git/config", ws / "vendor/lib/.git/config"):
        config.write_text(config.read_text() + _ALIAS.replace("MARKER", str(tmp_path / "ran")))
    return ws


def _decide(ws: Path, command: str) -> str:
    rows = "".join(f"p, agent, *, {program} *, allow\n"
                   for program in ("git", "cd", "go", "gh", "pre-commit"))
    policy = write_set(ws.parent, rows, name="policy")
    decider = Decider(load_config(None, policy={"paths": [str(policy)], "default": "ask"},
                                  executor={"workspace": str(ws)}, audit={"path": None}))
    call = CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="t", workdir=str(ws), workspace=str(ws))  # fmt: skip
    return decider.decide(call).effect


FOREIGN = [
    "cd vendor/pkg.git/objects && git status",
    "cd vendor/pkg.git/refs/heads && git st",
    "git -C vendor/pkg.git diff",
    "git -C vendor/pkg.git/objects log",
    "cd vendor && git -C pkg.git log",
    "git --git-dir=vendor/pkg.git log",
    "cd vendor/lib/src && git log",
    "git -C vendor/lib status",
    # programs that run git in their directory declare it too
    "cd vendor/pkg.git && go build ./...",
    "cd vendor/lib/src && go install .",
    "cd vendor/lib && gh pr list",
    "cd vendor/pkg.git/objects && pre-commit run",
]


@needs_git
@pytest.mark.parametrize("command", FOREIGN)
def test_git_in_a_nested_repository_asks(workspace: Path, command: str) -> None:
    assert _decide(workspace, command) == "ask"


@needs_git
@pytest.mark.parametrize(
    "command",
    ["git status", "cd vendor && git status", "git -C . log", "go build ./...", "gh pr list",
     "pre-commit run -a"],
)
def test_git_in_the_workspace_repository_stays_allowed(workspace: Path, command: str) -> None:
    assert _decide(workspace, command) == "allow"


@needs_git
@pytest.mark.parametrize(
    "where", ["vendor/pkg.git/objects", "vendor/pkg.git/refs/heads", "vendor/lib/src"]
)
def test_proof_git_runs_the_nested_repository_config(workspace: Path, where: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "st"], cwd=workspace / where, env=env, capture_output=True, check=False)
    assert (workspace.parent / "ran").exists()
