"""A writable root must not become a git dir the host trusts; each test asserts on the host.

git treats a directory with a valid ``HEAD``, ``objects/`` and ``refs/`` as a bare
repository, and ``git status`` there on the host obeys its ``core.fsmonitor``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import SECRET, Box

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

FSMONITOR = "[core]\n\tbare = false\n\tworktree = {ws}\n\tfsmonitor = touch {marker}; false\n"


def host_git(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git on the host, as a developer would run it next (never above the tmp dir)."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(ws.parent)}
    return subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, timeout=20, env=env,
        check=False,
    )  # fmt: skip


async def assert_not_a_git_dir(box: Box, marker: Path) -> None:
    for _ in range(2):  # while the gate lives (placeholders in place), and after
        assert host_git(box.ws, "rev-parse", "--git-dir").returncode != 0
        host_git(box.ws, "status")
        assert not marker.exists()
        await box.close()
    assert not (box.ws / "HEAD").exists()  # not planted, and no placeholder left behind


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            "git init -q --bare . && git config core.bare false && "
            'git config core.worktree "$PWD" && git config core.fsmonitor "touch {marker}; false"',
            id="git-init-bare",
        ),
        pytest.param(
            "mkdir -p objects refs/heads; printf 'ref: refs/heads/main\\n' > HEAD; "
            "printf '{config}' > config",
            id="by-hand",
        ),
        pytest.param(
            "rm -f HEAD; mv HEAD H2; mkdir objects refs; ln -s refs/heads/main HEAD; "
            "printf '{config}' > config",
            id="replace-placeholder",
        ),
    ],
)
async def test_no_bare_repo_at_a_root_without_dot_git(box: Box, command: str) -> None:
    marker = box.outside / "host-ran-fsmonitor"
    config = FSMONITOR.format(ws=box.ws, marker=marker).replace("\n", "\\n").replace("\t", "\\t")
    await box.run(command.format(marker=marker, config=config))
    await assert_not_a_git_dir(box, marker)
    assert not (box.ws / "H2").exists()


async def test_project_config_and_hooks_dirs_stay_writable(box: Box) -> None:
    (box.ws / "config").mkdir()
    (box.ws / "hooks").mkdir()
    marker = box.outside / "host-ran-fsmonitor"
    result = await box.run(
        "echo a > config/app.yml && echo b > hooks/deploy.sh && mkdir objects refs && "
        f"echo 'ref: refs/heads/main' > HEAD; git init -q --bare .; "
        f"git config core.fsmonitor 'touch {marker}'"
    )
    assert (box.ws / "config" / "app.yml").read_text() == "a\n"
    assert (box.ws / "hooks" / "deploy.sh").read_text() == "b\n"
    assert result.exit_code != 0
    await assert_not_a_git_dir(box, marker)


async def test_a_fresh_workspace_may_create_config_and_hooks(box: Box) -> None:
    result = await box.run("mkdir config hooks && echo x > config/a && echo y > hooks/b")
    assert result.exit_code == 0, result.stderr.text
    assert (box.ws / "config" / "a").read_text() == "x\n"


async def test_a_bare_repository_workspace_keeps_its_config_hooks_and_head(box: Box) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(box.ws)], check=True)
    head = (box.ws / "HEAD").read_text()
    config = (box.ws / "config").read_text()
    await box.run(
        "git config core.fsmonitor 'touch x'; echo evil > hooks/pre-receive; "
        "echo 'ref: refs/heads/evil' > HEAD; mv hooks h2; mv config c2"
    )
    assert (box.ws / "config").read_text() == config
    assert (box.ws / "HEAD").read_text() == head
    assert not (box.ws / "hooks" / "pre-receive").exists()
    assert not (box.ws / "h2").exists()
    assert not (box.ws / "c2").exists()


async def test_a_dot_git_file_protects_the_git_dir_it_points_to(box: Box) -> None:
    gitdir = box.ws / "repo.git"
    subprocess.run(
        ["git", "init", "-q", f"--separate-git-dir={gitdir}", str(box.ws)], check=True
    )  # fmt: skip
    assert (box.ws / ".git").is_file()
    config = (gitdir / "config").read_text()
    await box.run(
        "echo evil > repo.git/hooks/pre-commit; git config core.fsmonitor 'touch x'; "
        "mv repo.git r2; echo 'gitdir: elsewhere' > .git"
    )
    assert (gitdir / "config").read_text() == config
    assert not (gitdir / "hooks" / "pre-commit").exists()
    assert not (box.ws / "r2").exists()
    assert (box.ws / ".git").read_text().startswith(f"gitdir: {gitdir}")


NEW_SECRET_FILES = (
    ".git-credentials", ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml",
    ".vault-token", ".terraform.d/credentials.tfrc.json",
)  # fmt: skip
NEW_SECRET_DIRS = (
    ".config/gh", ".config/hub", ".azure", ".config/op", ".local/share/keyrings",
    ".password-store",
)  # fmt: skip


async def test_credential_files_and_dirs_of_common_tools_are_masked(box: Box) -> None:
    for name in NEW_SECRET_FILES:
        path = box.home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SECRET)
    for name in NEW_SECRET_DIRS:
        (box.home / name).mkdir(parents=True)
        (box.home / name / "secret").write_text(SECRET)
    reads = " ".join(f"~/{n}" for n in NEW_SECRET_FILES)
    reads += " " + " ".join(f"~/{n}/secret" for n in NEW_SECRET_DIRS)
    result = await box.run(f"cat {reads}; cat ~/.cargo/*; ls ~/.config/gh", sandbox_mode="read-only")
    assert SECRET not in result.stdout.text
    assert "secret" not in result.stdout.text  # masked dirs are empty
    full = await box.run(f"cat {reads}", sandbox_mode="full-access")
    assert SECRET not in full.stdout.text
    assert (box.home / ".git-credentials").read_text() == SECRET  # the host copy is intact
