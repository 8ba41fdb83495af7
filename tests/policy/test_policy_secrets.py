"""Reading a secret asks whatever the rules say: the protected-reads layer, through the
real decider and the real `shellgate check`; the sandbox masks read the same list."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shellgate.config import Config, load_config
from shellgate.decider import Decider
from shellgate.models import Verdict
from shellgate.policy import secrets

# tests.* is first-party once the test folders are packages: its own block either way
# isort: split
from tests.policy.policy_helpers import call, write_set
from tests.policy.test_policy_cli import shellgate

READS = [
    pytest.param("cat ~/.ssh/id_rsa", "~/.ssh", id="cat-ssh-key"),
    pytest.param("cat .env", ".env", id="cat-dotenv"),
    pytest.param("head -n 3 ~/.aws/credentials", "~/.aws", id="head"),
    pytest.param("less ~/.netrc", "~/.netrc", id="less"),
    pytest.param("grep -r password ~/.ssh", "~/.ssh", id="grep-dir"),
    pytest.param("grep -f.env x.txt", ".env", id="grep-glued-option-value"),
    pytest.param("cp ~/.ssh/id_rsa stolen", "~/.ssh", id="cp-from"),
    pytest.param("tar -cf out.tar ~/.ssh", "~/.ssh", id="tar-of"),
    pytest.param("tar cf out.tar -C ~ .ssh", "~/.ssh", id="tar-old-style-relative"),
    pytest.param("cat < ~/.ssh/id_rsa", "~/.ssh", id="input-redirect"),
    pytest.param("sudo cat ~/.ssh/id_rsa", "~/.ssh", id="through-a-wrapper"),
    pytest.param("cat {home}/.ssh/../.ssh/id_rsa", "~/.ssh", id="absolute-dotdot"),
    pytest.param("cat link/id_rsa", "~/.ssh", id="symlink-to-secret"),
    pytest.param("cat sub/../.env", ".env", id="dotdot-into-workspace-secret"),
    pytest.param("git diff --no-index .env x", ".env", id="unknown-subcommand-operand"),
    pytest.param("cat vault/token", "vault", id="configured-relative"),
    pytest.param("cat {tmp}/outside/token", "{tmp}/outside/token", id="configured-absolute"),
]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / ".env").write_text("TOKEN=x\n")
    (ws / "link").symlink_to(home / ".ssh")
    monkeypatch.setenv("HOME", str(home))
    return home, ws


def _decider(tmp_path: Path, ws: Path, rows: str) -> Decider:
    policy = write_set(tmp_path, rows, name="pol")
    return Decider(load_config(
        None,
        policy={"paths": [str(policy)], "default": "deny",
                "secret_paths": ["vault", str(tmp_path / "outside" / "token")]},
        executor={"workspace": str(ws)},
        audit={"path": None},
    ))


def _decide(decider: Decider, command: str, ws: Path, tmp_path: Path, home: Path) -> Verdict:
    workdir = os.path.realpath(ws)
    text = command.format(home=home, tmp=tmp_path)
    return decider.decide(call(command=text, workdir=workdir, workspace=workdir))


def _reads_decision(verdict: Verdict) -> list[tuple[str, str | None]]:
    return [(d.effect, d.rule) for sv in verdict.segments for d in sv.decisions
            if d.layer == "protected-reads"]


@pytest.mark.parametrize(("command", "secret"), READS)
def test_reading_a_secret_asks_even_with_an_allow_rule(
    world: tuple[Path, Path], tmp_path: Path, command: str, secret: str
) -> None:
    home, ws = world
    decider = _decider(tmp_path, ws, "p, agent, *, *, allow\np, agent, *, write:**, allow\n")
    verdict = _decide(decider, command, ws, tmp_path, home)
    assert verdict.effect == "ask", verdict
    assert ("ask", f"protected-reads:{secret.format(tmp=tmp_path)}") in _reads_decision(verdict)


@pytest.mark.parametrize(("command", "secret"), READS[:8])
def test_a_deny_rule_still_denies_a_secret_read(
    world: tuple[Path, Path], tmp_path: Path, command: str, secret: str
) -> None:
    home, ws = world
    decider = _decider(tmp_path, ws, "p, agent, *, *, deny, nothing runs here\n")
    verdict = _decide(decider, command, ws, tmp_path, home)
    assert verdict.effect == "deny"
    assert verdict.decision.layer == "casbin"


@pytest.mark.parametrize(
    "command",
    ["cat README.md", "cat .envrc", "cat docs/env", "ls ~", "grep -r ssh src",
     "head ~/.sshd_notes", "cat ~/.ssh.txt", "cat id_rsa", "tar -tf out.tar"],
)
def test_other_paths_are_not_touched(
    world: tuple[Path, Path], tmp_path: Path, command: str
) -> None:
    home, ws = world
    decider = _decider(tmp_path, ws, "p, agent, *, *, allow\np, agent, *, write:**, allow\n")
    verdict = _decide(decider, command, ws, tmp_path, home)
    assert _reads_decision(verdict) == []
    assert verdict.effect == "allow", verdict


def test_the_layer_runs_after_protected_paths_and_before_the_rules(tmp_path: Path) -> None:
    policy = write_set(tmp_path, "p, agent, *, *, allow\n", name="pol")
    decider = Decider(Config().model_copy(update={"policy": Config().policy.model_copy(
        update={"paths": (policy,)})}))
    registered = [i.plugin_name for i in decider.pm.hook.shellgate_check.get_hookimpls()]
    assert registered == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root"]


def test_the_sandbox_masks_the_same_list(tmp_path: Path) -> None:
    """One list: what the layer asks about is what the bwrap executor masks."""
    config = load_config(None, policy={"paths": [], "secret_paths": ["vault"]},
                         sandbox={"deny_read": ["old/key"]}, audit={"path": None})
    paths = secrets.secret_paths(config, home_dirs=["/h"], workspace="/w")
    expected = {f"/h/{s}" for s in secrets.HOME_SECRETS} | {"/w/.env", "/w/vault", "/w/old/key"}
    assert set(paths) == expected
    from shellgate.executors.bwrap import BwrapExecutor

    executor = BwrapExecutor(config.model_copy(update={"workspace": tmp_path}))
    masked = executor._inputs("/usr/bin/bwrap").secrets  # what the survey masks
    assert masked == tuple(
        secrets.secret_paths(config, home_dirs=executor.homes, workspace=str(executor.workspace))
    )


def test_shellgate_check_shows_the_layer_and_its_reason(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    _home, ws = world
    policy = write_set(tmp_path, "p, agent, *, cat *, allow\n", name="pol")
    done = shellgate("check", "--policy", str(policy), "--workdir", str(ws), "--",
                     "cat ~/.ssh/id_rsa", cwd=ws)
    assert done.returncode == 10, done.stdout + done.stderr
    assert "decided by protected-reads" in done.stdout
    assert "reads '~/.ssh/id_rsa' in the secret path '~/.ssh'" in done.stdout
    as_json = shellgate("check", "--policy", str(policy), "--workdir", str(ws), "--json", "--",
                        "cat .env", cwd=ws)
    out = json.loads(as_json.stdout)
    assert (out["decision"], out["layer"], out["rule"]) == ("ask", "protected-reads",
                                                           "protected-reads:.env")
    assert out["reason"].startswith("reads the secret path '.env'")
