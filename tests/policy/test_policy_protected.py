"""Writes to protected paths are denied whatever the rules say; the reason names the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from shellgate.policy.protected import ProtectedPathsLayer
from tests.policy.policy_helpers import call, seg, write_set


@pytest.fixture
def env(tmp_path: Path) -> tuple[ProtectedPathsLayer, CallInfo, Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    (ws / "repo" / ".git").mkdir(parents=True)
    policy = write_set(tmp_path, "p, agent, *, *, allow\n", name="pol")
    config = Config().model_copy(update={
        "policy": Config().policy.model_copy(update={"paths": (policy,),
                                                     "protected_paths": ("secrets/",)}),
        "executor": Config().executor.model_copy(update={"workspace": ws}),
        "audit": Config().audit.model_copy(update={"path": tmp_path / "audit.jsonl"}),
    })
    lay = ProtectedPathsLayer(config, home=str(home), config_file=str(tmp_path / "sg.toml"))
    return lay, call(workdir=str(ws), workspace=str(ws)), home, ws


@pytest.mark.parametrize(
    ("target", "why"),
    [
        pytest.param("{home}/.bashrc", "shell-rc", id="home-bashrc"),
        pytest.param("{home}/.zshrc", "shell-rc", id="home-zshrc"),
        pytest.param("{home}/.profile", "shell-rc", id="home-profile"),
        pytest.param("{home}/.gitconfig", "user-git-config", id="home-gitconfig"),
        pytest.param("{home}/.config/git/config", "user-git-config", id="xdg-git-config"),
        pytest.param("{home}/.ssh/authorized_keys", "ssh", id="ssh-authorized-keys"),
        pytest.param("{home}/.ssh/config", "ssh", id="ssh-config"),
        pytest.param("{home}/.ssh/rc", "ssh", id="ssh-rc"),
        pytest.param("{home}/.ssh", "ssh", id="ssh-dir"),
        pytest.param("{ws}/.bash_profile", "shell-rc", id="workspace-rc"),
        pytest.param("{ws}/repo/.git/hooks/pre-commit", "git-hooks", id="missing-hook"),
        pytest.param("{ws}/repo/.git/hooks", "git-hooks", id="hooks-dir"),
        pytest.param("{ws}/repo/.git/config", "git-config", id="git-config"),
        pytest.param("{ws}/repo/.git", "git-dir", id="rename-git-dir"),
        pytest.param("{ws}/repo/sub/../.git/hooks/x", "git-hooks", id="dotdot"),
        pytest.param("{ws}/repo/.git/config.worktree", "git-config", id="config-worktree"),
        pytest.param("{ws}/repo/.git/commondir", "git-config", id="commondir"),
        pytest.param("{ws}/repo/.git/remotes/origin", "git-config", id="legacy-remote"),
        pytest.param("{ws}/repo/.git/rebase-merge/git-rebase-todo", "git-rebase-todo",
                     id="rebase-todo"),
        pytest.param("{ws}/repo/.git/modules/a/b/config", "git-modules", id="submodule-config"),
        pytest.param("{ws}/repo/.git/modules/s/hooks/x", "git-modules", id="submodule-hook"),
        pytest.param("{ws}/repo/.git/modules", "git-modules", id="modules-dir"),
        pytest.param("{ws}/repo/.git/worktrees/w", "git-worktree", id="worktree-dir"),
        pytest.param("{ws}/repo/.git/worktrees/w/config.worktree", "git-config",
                     id="worktree-config"),
        pytest.param("{ws}/repo/.git/worktrees/w/commondir", "git-config",
                     id="worktree-commondir"),
        pytest.param("{ws}/repo/.git/worktrees/w/hooks/x", "git-hooks", id="worktree-hooks"),
        pytest.param("{ws}/../pol/policy.csv", "gate-policy", id="policy-file"),
        pytest.param("{ws}/../sg.toml", "gate-config", id="config-file"),
        pytest.param("{ws}/../audit.jsonl", "gate-audit", id="audit-log"),
        pytest.param("{ws}/secrets/key", "configured", id="configured-relative"),
        pytest.param("repo/.git/config", "git-config", id="relative-to-workdir"),
    ],
)
def test_protected_writes_are_denied_naming_the_path(
    env: tuple[ProtectedPathsLayer, CallInfo, Path, Path], target: str, why: str
) -> None:
    lay, info, home, ws = env
    path = target.format(home=home, ws=ws)
    decision = lay.shellgate_check(info, seg("tee", path, writes=(path,)))
    assert decision is not None
    assert (decision.effect, decision.layer, decision.rule) == ("deny", "protected-paths",
                                                               f"protected-paths:{why}")
    assert path in decision.reason


@pytest.mark.parametrize("target", ["{ws}/notes.txt", "{ws}/repo/.git/index",
                                    "{ws}/repo/.git/info/exclude",
                                    "{ws}/repo/.git/info/attributes",
                                    "{ws}/repo/.git/worktrees/w/HEAD",
                                    "{ws}/repo/.git/refs/heads/config",
                                    "{ws}/repo/config", "{ws}/repo/hooks/x",
                                    "{ws}/repo/.gitignore", "{home}/.bashrc.d.txt",
                                    "{home}/.gitconfig.bak", "{home}/.ssh2/x",
                                    "{home}/.config/git/ignore"])
def test_ordinary_writes_pass(env: tuple[ProtectedPathsLayer, CallInfo, Path, Path],
                              target: str) -> None:
    lay, info, home, ws = env
    path = target.format(home=home, ws=ws)
    assert lay.shellgate_check(info, seg("tee", path, writes=(path,))) is None


def test_symlinks_do_not_lead_around(env: tuple[ProtectedPathsLayer, CallInfo, Path, Path],
                                     tmp_path: Path) -> None:
    lay, info, home, ws = env
    (ws / "innocent").symlink_to(home / ".bashrc")  # target need not exist
    os.symlink(ws / "repo", tmp_path / "linked")
    for target in (ws / "innocent", tmp_path / "linked" / ".git" / "hooks" / "post-checkout"):
        decision = lay.shellgate_check(info, seg("tee", str(target), writes=(str(target),)))
        assert decision is not None, target
        assert decision.effect == "deny", target


def test_symlinked_home_is_protected_in_both_spellings(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    (tmp_path / "home-link").symlink_to(real)
    lay = ProtectedPathsLayer(Config(), home=str(tmp_path / "home-link"))
    decision = lay.shellgate_check(call(), seg("tee", writes=(str(real / ".bashrc"),)))
    assert decision is not None
    assert decision.effect == "deny"


def test_protected_paths_beat_an_allow_rule_through_the_decider(tmp_path: Path) -> None:
    policy = write_set(tmp_path, "p, agent, *, *, allow\n", name="pol")
    config = Config().model_copy(update={"policy": Config().policy.model_copy(
        update={"paths": (policy,)})})
    decider = Decider(config)
    registered = [i.plugin_name for i in decider.pm.hook.shellgate_check.get_hookimpls()]
    assert registered == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root"]
    workdir = os.path.realpath(tmp_path)
    target = os.path.join(workdir, ".git", "hooks", "pre-push")
    verdict = decider.decide(call(command=f"cp x {target}", workdir=workdir, workspace=workdir))
    assert (verdict.effect, verdict.decision.layer) == ("deny", "protected-paths")
    assert target in verdict.decision.reason
    allowed = decider.decide(call(command="cp x y", workdir=workdir, workspace=workdir))
    # Only the path made it deny: an ordinary target is not denied (the analysis may
    # still ask about a writer's operands, but no layer vetoes it).
    assert allowed.effect != "deny", allowed
    assert allowed.decision.layer != "protected-paths"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        pytest.param("echo x >> ~/.ssh/authorized_keys", "ssh", id="authorized-keys"),
        pytest.param("cp k ~/.ssh/id_ed25519", "ssh", id="ssh-key"),
        pytest.param("tee -a ~/.ssh/config < /dev/null", "ssh", id="ssh-config"),
        pytest.param("cp k ~/.gitconfig", "user-git-config", id="gitconfig"),
        pytest.param("echo x > ~/.config/git/config", "user-git-config", id="xdg-git-config"),
        pytest.param("echo x > {xdg}/git/config", "user-git-config", id="xdg-env"),
    ],
)
def test_home_git_config_and_ssh_are_denied_through_the_decider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, why: str
) -> None:
    from shellgate.config import load_config

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    decider = Decider(load_config(None, policy={"paths": []}, audit={"path": None}))
    workdir = os.path.realpath(tmp_path)
    command = command.format(xdg=tmp_path / "xdg")
    verdict = decider.decide(call(command=command, workdir=workdir, workspace=workdir))
    assert verdict.effect == "deny", verdict
    assert verdict.decision.layer == "protected-paths", verdict.decision
    assert verdict.decision.rule == f"protected-paths:{why}"
