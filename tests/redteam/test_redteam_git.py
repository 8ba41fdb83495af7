"""git: files whose text it chooses, config keys that run programs, forced pushes
spelled otherwise, and ``git maintenance`` (rt-report findings 3, 4, 7 and 8).

The red-teamer's policy allows ``git *`` and ``make *`` and denies ``git push
--force *`` and ``git push -f *``. Under it each command below was allowed; each
now gets the safe answer through the real decider, a harmless neighbour keeps
``allow``, and a paired test shows with the real git (in ``tmp_path``, with
``HOME`` and ``GIT_CONFIG_GLOBAL`` pointed there) that the hidden effect is real.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.redteam.conftest import _CONTAIN, WORKSPACE_WRITABLE, Decide, decide_with_rules

RULES = """\
p, agent, *, git *, allow
p, agent, *, make *, allow
p, agent, *, git push --force *, deny
p, agent, *, git push -f *, deny
p, agent, *, git push --delete *, deny
"""

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def decide(tmp_path_factory: pytest.TempPathFactory) -> Decide:
    return decide_with_rules(tmp_path_factory.mktemp("gitpol"), RULES + WORKSPACE_WRITABLE)


@pytest.fixture(scope="module")
def decide_no_writes(tmp_path_factory: pytest.TempPathFactory) -> Decide:
    """The same rules without a write: rule: every write falls to the closing default."""
    return decide_with_rules(tmp_path_factory.mktemp("gitpol-nw"), RULES)


def git_runs(script: str, tmp_path: Path) -> bool:
    """Run ``script`` with bash in a fresh repository ``tmp_path/repo`` (one
    commit of a file ``f`` on ``main``), git's global and system configuration kept out of it;
    True when the script created ``MARKER``."""
    home, repo, marker = tmp_path / "home", tmp_path / "repo", tmp_path / "marker"
    home.mkdir()
    repo.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "LANG": "C",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }  # fmt: skip
    setup = "git init -q -b main && echo a > f && git add f && git commit -q -m one && "
    subprocess.run(
        # Run under a subreaper that waits for orphans (imap-send's tunnel).
        [sys.executable, "-c", _CONTAIN, "bash", "-c", setup + script.replace("MARKER", str(marker))],
        cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, timeout=60, check=False,
    )  # fmt: skip
    return marker.exists()


# -- 3. report writes whose text git is told to write ------------------------------

ALIAS = "--format='[alias]%n%x09st = !touch /tmp/pwned'"
PLANTS = [
    "git log -1 --format='all:%n%x09touch /tmp/pwned' --output=Makefile && make",
    "git log -1 --format=x --output conftest.py",
    "git show -s --format=x --output=conftest.py HEAD",
    "git diff --output=setup.py",
    "git whatchanged --output=Makefile",
    "git log --outp=Makefile",
    "git -C sub log -1 --format=x --output=Makefile",
    "git range-diff --output=Makefile A..B C..D",
    f"git init -q --bare sub && git log -1 {ALIAS} --output=sub/config && git -C sub st",
    "git format-patch -o .github/workflows -1",
    "git format-patch --output-directory=out -1",
    "git archive --format=tar --prefix='x != touch /tmp/pwned\n' -o Makefile 'HEAD^{tree}'",
    "git archive --output=x.tar HEAD",
    "git bundle create build.sh HEAD",
]
PROTECTED_INSIDE_GIT = [
    "git log -1 --format=x --output=.git/config.worktree",
    "git config extensions.worktreeConfig true && git log -1 "
    f"{ALIAS} --output=.git/config.worktree && git status",
    "git log -1 --format=x --output=.git/commondir",
    "git log -1 --format=x --output=.git/worktrees/wt/config.worktree",
    "git log -1 --format=x --output=.git/worktrees/wt/commondir",
    "git log -1 --format=x --output=.git/modules/sub/config",
    "git log -1 --format=x --output=.git/modules/sub/hooks/post-checkout",
    "git log -1 --format='Push: +HEAD:main' --output=.git/remotes/up",
    "git log -1 --format='exec touch /tmp/pwned' --output=.git/rebase-merge/git-rebase-todo",
    "git log -1 --format=x --output=sub/.git/config.worktree",
    "git archive -o .git/config.worktree HEAD",
    "git bundle create .git/commondir HEAD",
]
STAYS_ALLOWED = [
    "git log --oneline",
    "git log -p --output-indicator-new=+",
    "git diff --stat",
    "git show HEAD",
    "git log --output=/dev/null",
    "git format-patch --stdout -1",
    "git status",
]


@pytest.mark.parametrize("command", PLANTS)
def test_a_file_git_writes_with_chosen_text_is_decided_as_a_write(
    decide: Decide, decide_no_writes: Decide, command: str
) -> None:
    """Text git is told to write is a write like ``> FILE``: without a write: rule
    it is not allowed; under write:** only where ``> FILE`` would be (below)."""
    assert decide_no_writes(command) != "allow"


#: Under write:**, what `> FILE` may not do, git's --output may not either: a CI
#: workflow asks, a bare repository the same line plants is not the workspace's.
PLANTS_STILL_CLOSED = [
    "git format-patch -o .github/workflows -1",
    f"git init -q --bare sub && git log -1 {ALIAS} --output=sub/config && git -C sub st",
]


@pytest.mark.parametrize("command", PLANTS_STILL_CLOSED)
def test_git_writes_that_would_run_code_stay_closed_under_write_rules(
    decide: Decide, command: str
) -> None:
    assert decide(command) != "allow"


@pytest.mark.parametrize("command", PROTECTED_INSIDE_GIT)
def test_what_git_reads_as_config_or_code_is_protected(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"


@pytest.mark.parametrize("command", STAYS_ALLOWED)
def test_plain_reads_stay_allowed(decide: Decide, command: str) -> None:
    assert decide(command) == "allow"


@needs_git
@pytest.mark.parametrize(
    "script",
    [
        pytest.param("git log -1 --format='all:%n%x09@touch MARKER' --output=Makefile && make",
                     id="makefile"),
        # (aliases are read before the worktree's configuration; fsmonitor after)
        pytest.param("git config extensions.worktreeConfig true && git log -1 --format="
                     "'[core]%n%x09fsmonitor = touch MARKER; false' --output=.git/config.worktree"
                     " && git status", id="config-worktree"),
        pytest.param("git init -q --bare sub && git log -1 "
                     "--format='[alias]%n%x09st = !touch MARKER' --output=sub/config"
                     " && git -C sub st", id="bare-repository-config"),
        pytest.param("mkdir -p a && git archive --format=tar --prefix='x != touch MARKER\n' "
                     "-o a/Makefile 'HEAD^{tree}' && make -C a", id="archive-prefix-makefile"),
        pytest.param("git branch 'b;touch${IFS}MARKER;#' && "
                     "git bundle create build.sh 'refs/heads/b;touch${IFS}MARKER;#' && sh build.sh",
                     id="bundle-ref-names-script"),
        pytest.param("mkdir ../evil && cp -r .git/objects .git/refs .git/HEAD ../evil/ && "
                     "printf '[alias]\\n\\tst = !touch MARKER\\n' > ../evil/config && "
                     "echo \"$PWD/../evil\" > .git/commondir && git st", id="commondir"),
        pytest.param("git commit -q --allow-empty -m two && { git rebase -q -x false HEAD~1; "
                     "printf 'exec touch MARKER\\n' >> .git/rebase-merge/git-rebase-todo; } && "
                     "git rebase --continue", id="rebase-todo-exec"),
    ],
)  # fmt: skip
def test_proof_the_planted_file_runs(script: str, tmp_path: Path) -> None:
    assert git_runs(script, tmp_path)


# -- 4. config keys that run a program ---------------------------------------------

IMAP = ("git config imap.tunnel 'touch /tmp/pwned' && git config imap.folder x && "
        "git format-patch -1 --stdout | git imap-send")  # fmt: skip


def test_imap_tunnel_is_a_key_git_runs(decide: Decide) -> None:
    assert decide(IMAP) != "allow"
    assert decide("git config imap.tunnel 'touch /tmp/pwned'") != "allow"
    # The tunnel is a payload of its own: deny rules meet it.
    assert decide("git -c imap.tunnel='git push -f origin main' imap-send") == "deny"
    assert decide("git config extensions.worktreeConfig true") != "allow"
    assert decide("git config help.autocorrect immediate") != "allow"
    assert decide("git config imap.folder x") == "allow"


@needs_git
def test_proof_imap_send_runs_the_tunnel(tmp_path: Path) -> None:
    assert git_runs(IMAP.replace("/tmp/pwned", "MARKER"), tmp_path)


@needs_git
def test_proof_autocorrect_runs_another_command(tmp_path: Path) -> None:
    # `git stauts` is read as an undeclared subcommand; git runs `status`.
    assert git_runs("git -c help.autocorrect=immediate stauts > MARKER && grep -q main MARKER "
                    "|| rm -f MARKER", tmp_path)  # fmt: skip


# -- 7. forced pushes and deletions, however spelled -------------------------------

FORCED = [
    "git push origin +main",
    "git push origin +HEAD:main",
    "git push origin main +feature",
    "git push origin '+refs/heads/*:refs/heads/*'",
    "git push --mirror origin",
    "git push --mirr origin",
    "git -C . --no-pager push origin +main",
    "git push origin :main",
    "git push --prune origin 'refs/heads/*:refs/heads/*'",
    "git for-each-repo --config=x.y push --force origin main",
    "git for-each-repo --config=x.y -- push origin +main",
]
MAKES_PUSHES_FORCE = [
    "git config remote.origin.push '+refs/heads/main:refs/heads/main'",
    "git config --add remote.origin.push +main",
    "git config set remote.origin.push :main",
    "git config remote.origin.mirror true",
    "git remote add --mirror=push backup /srv/x.git",
    "git remote add --mirror backup /srv/x.git",
    "git clone --mirror /srv/x.git m",
]
PUSHES_STAY_ALLOWED = [
    "git push origin main",
    "git push -u origin feature",
    "git push origin HEAD:main",
    "git push --tags origin",
    # A separate, conditional option (docs/policies.md): named by its own rule.
    "git push --force-with-lease origin main",
    "git push --force-with-lease --force-if-includes origin main",
    "git config remote.origin.push refs/heads/main:refs/heads/main",
    "git config remote.origin.mirror false",
    "git remote add backup /srv/x.git",
    "git remote add --mirror=fetch backup /srv/x.git",
    "git clone /srv/x.git m",
]


@pytest.mark.parametrize("command", FORCED)
def test_every_spelling_of_a_forced_push_meets_the_deny_rule(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"


@pytest.mark.parametrize("command", MAKES_PUSHES_FORCE)
def test_configuring_later_pushes_to_force_is_not_allowed(decide: Decide, command: str) -> None:
    assert decide(command) != "allow"


@pytest.mark.parametrize("command", PUSHES_STAY_ALLOWED)
def test_ordinary_pushes_stay_allowed(decide: Decide, command: str) -> None:
    assert decide(command) == "allow"


#: A remote whose main has a commit the local main no longer has, then the push.
_DIVERGED = ("git init -q --bare ../remote.git && git remote add origin ../remote.git && "
             "git commit -q --allow-empty -m two && git push -q origin main && "
             "git reset -q --hard HEAD~1 && git commit -q --allow-empty -m three && ")  # fmt: skip
_FORCED = (
    ' && test "$(git -C ../remote.git rev-parse main)" = "$(git rev-parse HEAD)" && touch MARKER'
)


@needs_git
@pytest.mark.parametrize(
    "push",
    [
        "git push -q origin +main",
        "git push -q origin +HEAD:main",
        "git push -q --mirror origin",
        "git config remote.origin.push +refs/heads/main:refs/heads/main && git push -q origin",
        "git config remote.origin.mirror true && git push -q origin",
        "git remote add --mirror=push up ../remote.git && git push -q up",
        "mkdir -p .git/remotes && printf 'URL: ../remote.git\\nPush: +HEAD:refs/heads/main\\n'"
        " > .git/remotes/up && git push -q up",
    ],
)
def test_proof_these_pushes_force(push: str, tmp_path: Path) -> None:
    assert git_runs(_DIVERGED + push + _FORCED, tmp_path)


@needs_git
def test_proof_a_plain_push_does_not_force(tmp_path: Path) -> None:
    assert not git_runs(_DIVERGED + "git push -q origin main" + _FORCED, tmp_path)


# -- 8. git maintenance writes the global configuration and the scheduler ------------

MAINTENANCE = [
    "git maintenance register",
    "git maintenance unregister",
    "git maintenance start",
    "git maintenance start --scheduler=crontab",
    "git maintenance stop",
    "git maintenance register --config-file=other.cfg",
]


@pytest.mark.parametrize("command", MAINTENANCE)
def test_maintenance_that_changes_user_state_is_not_allowed(decide: Decide, command: str) -> None:
    assert decide(command) != "allow"


def test_maintenance_onto_a_protected_file_is_denied(decide: Decide) -> None:
    assert decide("git maintenance register --config-file ~/.gitconfig") == "deny"


@pytest.mark.parametrize("command", ["git maintenance run", "git maintenance run --task=gc"])
def test_running_maintenance_stays_allowed(decide: Decide, command: str) -> None:
    assert decide(command) == "allow"


@needs_git
def test_proof_register_writes_the_global_config(tmp_path: Path) -> None:
    # Never `start` here: it would install the machine's cron or systemd jobs.
    assert git_runs('git maintenance register && grep -q "repo = $PWD" "$GIT_CONFIG_GLOBAL" '
                    "&& touch MARKER", tmp_path)  # fmt: skip
