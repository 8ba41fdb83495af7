"""Escape attempts against the file system; each asserts on the host afterwards."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import SECRET, Box

pytestmark = pytest.mark.bwrap


@pytest.fixture(params=["deployment", "decision"])
def via(request: pytest.FixtureRequest) -> str:
    """Every escape attempt, against a bwrap deployment and against the executor a
    local deployment runs the calls its policy sandboxes on."""
    return str(request.param)


async def test_writes_outside_the_workspace_do_not_land(box: Box) -> None:
    target = box.outside / "pwned"
    result = await box.run(f"echo ok > inside; echo x > {target}; touch /etc/sg-escape")
    assert not target.exists()
    assert not os.path.exists("/etc/sg-escape")
    assert (box.ws / "inside").read_text() == "ok\n"  # the workspace itself is writable
    assert result.sandbox_denied


async def test_symlinks_in_the_workspace_do_not_lead_outside(box: Box) -> None:
    victim = box.outside / "victim"
    victim.write_text("orig")
    (box.ws / "dirlink").symlink_to(box.outside)
    (box.ws / "filelink").symlink_to(victim)
    await box.run("echo x > dirlink/new; echo x > filelink; ln -sf /etc/passwd p && echo y >> p")
    assert victim.read_text() == "orig"
    assert not (box.outside / "new").exists()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo evil > .git/hooks/pre-commit", id="hook-file"),
        pytest.param("chmod +x .git/hooks/sample; echo evil >> .git/hooks/sample", id="hook-edit"),
        pytest.param("echo '[core] hooksPath = /tmp' >> .git/config", id="git-config"),
        pytest.param("git config core.hooksPath /tmp/h", id="git-config-cmd"),
        pytest.param("rm -rf .git/hooks; mkdir .git/hooks; echo evil > .git/hooks/pre-commit", id="rm-hooks"),
        pytest.param("mv .git .git2 && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit", id="rename-git"),
        pytest.param("mv .git/hooks .git/h2 && mkdir .git/hooks && echo e > .git/hooks/pre-commit", id="rename-hooks"),
        pytest.param("echo evil >> .bashrc; rm -f .bashrc; echo evil > .bashrc", id="rc-file"),
    ],
)
async def test_existing_protected_paths_stay_unchanged(box: Box, command: str) -> None:
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)
    (box.ws / ".git" / "hooks" / "sample").write_text("orig")
    (box.ws / ".bashrc").write_text("orig")
    config = (box.ws / ".git" / "config").read_text()
    await box.run(command)
    assert not (box.ws / ".git" / "hooks" / "pre-commit").exists()
    assert (box.ws / ".git" / "hooks" / "sample").read_text() == "orig"
    assert (box.ws / ".git" / "config").read_text() == config
    assert (box.ws / ".bashrc").read_text() == "orig"
    assert not (box.ws / ".git2").exists()
    assert not (box.ws / ".git" / "h2").exists()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit", id="new-git-hooks"),
        pytest.param("git init -q . && echo evil > .git/hooks/pre-commit", id="git-init"),
        pytest.param("echo evil > .bashrc; echo evil > .profile; echo evil > .zshenv", id="rc-files"),
        pytest.param("rmdir .git; rm -f .bashrc; echo evil > .bashrc", id="remove-placeholder"),
    ],
)
async def test_missing_protected_paths_cannot_be_created(box: Box, command: str) -> None:
    result = await box.run(command)
    for name in (".git", "HEAD", ".bashrc", ".profile", ".zshenv"):
        assert_placeholder_or_missing(box.ws / name)
    await box.close()
    for name in (".git", "HEAD", ".bashrc", ".profile", ".zshenv"):
        assert not (box.ws / name).exists(), name  # not created, and no placeholder left
    assert result.exit_code != 0


async def test_missing_hooks_in_an_existing_repo_cannot_be_created(box: Box) -> None:
    (box.ws / ".git").mkdir()
    (box.ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    await box.run("mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; echo x > .git/config")
    await box.close()
    assert not (box.ws / ".git" / "hooks").exists()
    assert not (box.ws / ".git" / "config").exists()
    assert (box.ws / ".git" / "HEAD").exists()


async def test_home_inside_the_workspace_keeps_every_rc_file(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(box.ws))
    await box.run(
        "echo e > ~/.bash_logout; mkdir -p ~/.config/fish && echo e > ~/.config/fish/config.fish"
    )
    await box.close()
    assert not (box.ws / ".bash_logout").exists()
    assert not (box.ws / ".config" / "fish" / "config.fish").exists()


async def test_masked_secrets_cannot_be_read_or_copied(box: Box) -> None:
    result = await box.run(
        "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc; cp ~/.ssh/id_rsa stolen; "
        f"cat {box.home}/.ssh/id_rsa; ls -a ~/.ssh"
    )
    assert SECRET not in result.stdout.text
    assert not (box.ws / "stolen").exists() or SECRET not in (box.ws / "stolen").read_text()
    assert (box.home / ".ssh" / "id_rsa").read_text() == SECRET  # the host copy is intact


async def test_configured_deny_read_paths_are_masked(box: Box) -> None:
    (box.ws / "vault").mkdir()
    (box.ws / "vault" / "key").write_text(SECRET)
    (box.outside / "token").write_text(SECRET)
    await box.executor(sandbox={"deny_read": ["vault", str(box.outside / "token")]})
    result = await box.run(f"cat vault/key {box.outside}/token; echo x > vault/new")
    assert SECRET not in result.stdout.text
    assert not (box.ws / "vault" / "new").exists()


async def test_the_secret_list_of_the_reads_layer_is_masked_too(box: Box) -> None:
    """One list (shellgate.policy.secrets): the workspace `.env` and `[policy]
    secret_paths` are masked as the protected-reads layer asks about them."""
    (box.ws / ".env").write_text(SECRET)
    (box.ws / "creds").write_text(SECRET)
    await box.executor(policy={"secret_paths": ["creds"]})
    result = await box.run("cat .env creds")
    assert SECRET not in result.stdout.text
    assert (box.ws / ".env").read_text() == SECRET  # the host copy is intact


async def test_tmp_is_private(box: Box) -> None:
    marker = f"/tmp/sg-private-{os.getpid()}"
    result = await box.run(f"echo x > {marker} && cat {marker}")
    assert result.stdout.text == "x\n"
    assert not os.path.exists(marker)


async def test_read_only_mode_cannot_write_the_workspace(box: Box) -> None:
    result = await box.run("echo x > f", sandbox_mode="read-only")
    assert not (box.ws / "f").exists()
    assert result.sandbox_denied
    assert result.sandbox_mode == "read-only"


async def test_file_size_limit_bounds_a_disk_filler(box: Box) -> None:
    await box.executor(executor={"limits": {"file_size_bytes": 1_000_000}})
    result = await box.run("head -c 3000000 /dev/zero > big")
    assert (box.ws / "big").stat().st_size <= 1_000_000
    assert result.exit_code != 0 or result.signal is not None


def assert_placeholder_or_missing(path: Path) -> None:
    """While its executor lives a placeholder stays: an empty file or directory."""
    if path.is_dir() and not path.is_symlink():
        assert not any(path.iterdir()), path
    elif path.exists() or path.is_symlink():
        assert not path.is_symlink(), path
        assert path.is_file(), path
        assert path.stat().st_size == 0, path


async def test_config_worktree_cannot_be_planted_and_commondir_cannot_change(
    box: Box,
) -> None:
    """``config.worktree`` is config under ``extensions.worktreeConfig``: it cannot
    be created from the box (an empty placeholder, gone with it). An existing
    ``commondir`` (a linked worktree's) stays as it is; a missing one gets no
    placeholder, as git refuses an empty one (docs/sandbox.md)."""
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)
    (box.ws / ".git" / "commondir").write_text(".\n")
    result = await box.run(
        "printf '[core]\\n\\tfsmonitor = touch planted\\n' > .git/config.worktree; "
        "echo ../evil > .git/commondir"
    )
    assert result.exit_code != 0
    assert (await box.run("git status --short")).exit_code == 0
    await box.close()
    assert not (box.ws / ".git" / "config.worktree").exists()
    assert (box.ws / ".git" / "commondir").read_text() == ".\n"


def test_a_commondir_file_makes_git_read_another_config(tmp_path: Path) -> None:
    """Why ``commondir`` is guarded: real git follows it to a foreign ``config``."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True)
    subprocess.run(["git", "config", "--file", str(other / "config"), "sg.probe", "yes"],
                   check=True)
    (repo / ".git" / "commondir").write_text(f"{other}\n")
    seen = subprocess.run(["git", "-C", str(repo), "config", "sg.probe"],
                          capture_output=True, text=True, check=False)
    assert seen.stdout.strip() == "yes"


async def test_existing_places_that_run_code_later_stay_unchanged(box: Box) -> None:
    """A sandboxed program the analysis cannot see into (a build, an install script)
    cannot edit an existing editor task, agent setting or CI workflow — code the host
    runs later, unconfined (shellgate.policy.later_code)."""
    files = {
        ".vscode/tasks.json": "{}",
        ".claude/settings.json": "{}",
        ".github/workflows/ci.yml": "on: push",
        ".envrc": "export A=1",
        ".pre-commit-config.yaml": "repos: []",
    }
    for name, text in files.items():
        (box.ws / name).parent.mkdir(parents=True, exist_ok=True)
        (box.ws / name).write_text(text)
    result = await box.run(
        "echo fine > notes.txt; mkdir -p .github/ISSUE_TEMPLATE; "
        "echo evil > .vscode/launch.json; echo evil > .vscode/tasks.json; "
        "echo evil >> .claude/settings.json; mv .claude .claude2; "
        "rm -rf .github/workflows; echo evil > .github/workflows/new.yml; "
        "mv .github .github2; mkdir -p .github/workflows && echo e > .github/workflows/x.yml; "
        "rm -f .envrc; echo evil > .envrc; echo evil > .pre-commit-config.yaml"
    )
    for name, text in files.items():
        assert (box.ws / name).read_text() == text, name
    assert not (box.ws / ".vscode" / "launch.json").exists()
    assert not (box.ws / ".claude2").exists()
    assert sorted(p.name for p in (box.ws / ".github" / "workflows").iterdir()) == ["ci.yml"]
    assert not (box.ws / ".github2").exists()
    assert (box.ws / "notes.txt").read_text() == "fine\n"  # ordinary writes still land
    assert (box.ws / ".github" / "ISSUE_TEMPLATE").is_dir()  # beside a guarded place
    assert result.sandbox_denied


async def test_missing_places_that_run_code_later_get_no_placeholder(box: Box) -> None:
    """No empty ``.mcp.json`` or ``.claude/`` appears on the host while the gate runs:
    a tool there would read it as a broken config (docs/sandbox.md, limits)."""
    result = await box.run("ls -A")
    assert result.exit_code == 0
    for name in (".mcp.json", ".claude", ".vscode", ".envrc", ".github", "opencode.json"):
        assert not (box.ws / name).exists(), name
