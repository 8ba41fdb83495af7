"""Red-team findings in git's catalog entries, decided by the real decider.

Each string below was allowed under ``fixtures/allowlist`` (``git *`` allowed):
a subcommand wrote a file through an option or operand, created a repository
or work tree anywhere, pushed through plumbing, set a config key git runs, or
named a program it runs. None may be allowed now; a protected path (``.git/config``,
``.git/hooks``) is denied. The controls stay allowed.
"""

from __future__ import annotations

import shlex

import pytest

from shellgate.policy.patterns import compile_pattern
from shellgate.shell import catalog
from shellgate.shell.argv.canonical import joined
from tests.shell.allowlist_helpers import NOT_ALLOW, A, D, K, p, verdict

REDTEAM = [
    # 1. credential-store --file is a write target.
    p("credential-store-file-glued", "git credential-store --file=.git/config store", D),
    p("credential-store-file-sep", "git credential-store --file .git/hooks/x store", D),
    p("credential-store-file-abbrev", "git credential-store --fi=.git/config store", D),
    p("credential-store-file-home", "git credential-store --file=~/.bashrc store", NOT_ALLOW),
    p("credential-store-file-plain", "git credential-store --file=creds store", A),
    # 2. merge-file writes its first operand.
    p("merge-file-config", "git merge-file .git/config base other", D),
    p("merge-file-home", "git merge-file ~/.bashrc base other", NOT_ALLOW),
    p("merge-file-labels", "git merge-file -L a -L b -L c .git/hooks/x b c", D),
    p("merge-file-plain", "git merge-file a b c", A),
    # 3. clone, worktree add, init create directories: outside the workdir they ask.
    p("clone-dest-outside", "git clone https://x/y.git /tmp/elsewhere", K),
    p("clone-dest-hooks", "git clone https://x/y.git .git/hooks", D),
    p("clone-dest-home", "git clone https://x/y.git ~/.config/git", NOT_ALLOW),
    p("clone-default-dest-under-C", "git -C /tmp clone https://x/y.git", K),
    p("worktree-add-outside", "git worktree add ../wt", K),
    p("worktree-add-hooks", "git worktree add .git/hooks main", D),
    p("worktree-add-b-hooks", "git worktree add -b feat .git/hooks main", D),
    p("worktree-move-outside", "git worktree move wt /tmp/wt", K),
    p("init-outside", "git init /tmp/other", K),
    p("init-hooks", "git init .git/hooks", D),
    # 4. apply --unsafe-paths: the patch may write anywhere.
    p("apply-unsafe-paths", "git apply --unsafe-paths x.patch", K),
    p("apply-unsafe-abbrev", "git apply --unsafe x.patch", K),
    # 5. marks files and index-pack -o are write targets.
    p("fast-export-export-marks", "git fast-export --export-marks=.git/config HEAD", D),
    p("fast-export-export-marks-plain", "git fast-export --export-marks=marks HEAD", A),
    p("fast-import-export-marks", "git fast-import --export-marks=.git/config", D),
    p("fast-import-export-marks-sep", "git fast-import --export-marks .git/hooks/x", D),
    p("fast-import-unsafe-features", "git fast-import --allow-unsafe-features", K),
    p("index-pack-o", "git index-pack -o .git/hooks/x p.pack", D),
    p("index-pack-stdin-pack", "git index-pack --stdin .git/hooks/pre-commit", D),
    # 6. pushes through plumbing.
    p("send-pack", "git send-pack https://x/y.git main", K),
    p("subtree-push", "git subtree push --prefix=d https://x/y.git main", K),
    p("subtree-push-options-after", "git subtree push https://x/y.git main -P d", K),
    # 7. config keys git runs, and renames that move keys into one.
    p("config-tar-command", "git config tar.tgz.command 'sh -c id'", K),
    p("config-sendmailcmd", "git config sendemail.sendmailcmd 'sh -c id'", K),
    p("config-sendmailcmd-identity", "git config sendemail.work.sendmailCmd x", K),
    p("config-help-browser", "git config help.browser evil", K),
    p("config-core-worktree", "git config core.worktree /tmp", K),
    p("config-set-core-worktree", "git config set core.worktree /tmp", K),
    p("config-rename-section-opt", "git config --rename-section a alias", K),
    p("config-rename-section-verb", "git config rename-section a alias", K),
    p("config-rename-opt", "git config --rename a.b alias.b", K),
    p("config-rename-verb", "git config rename a.b alias.b", K),
    p("c-tar-command", "git -c tar.tgz.command='sh -c id' archive HEAD", K),
    # 8. send-email programs.
    p("send-email-sendmail-cmd", "git send-email --sendmail-cmd='sh -c id' x.patch", K),
    p("send-email-sendmail-cmd-abbrev", "git send-email --sendm=id x.patch", K),
    p("send-email-sendmail-cmd-one-dash", "git send-email -SENDMAIL-CMD=id x.patch", K),
    p("send-email-smtp-server-path", "git send-email --smtp-server=/tmp/prog x.patch", K),
    p("send-email-smtp-server-sep", "git send-email --smtp-server /tmp/prog x.patch", K),
]

CONTROLS = [
    p("clone-sub", "git clone https://x/y.git sub", A),
    p("clone-default-dest", "git clone https://x/y.git", A),
    p("clone-branch-sub", "git clone -b main https://x/y.git sub", A),
    p("worktree-list", "git worktree list", A),
    p("worktree-add-inside", "git worktree add wt main", A),
    p("init", "git init", A),
    p("init-sub", "git init sub", A),
    p("merge-file-p", "git merge-file -p a b c", A),
    p("merge-file-stdout", "git merge-file --stdout a b c", A),
    p("config-get-pager", "git config --get core.pager", A),
    p("config-user-name", "git config user.name x", A),
    p("apply", "git apply x.patch", A),
    p("fast-export-import-marks", "git fast-export --import-marks=marks HEAD", A),
    p("subtree-split", "git subtree split --prefix=d", A),
    p("send-email-smtp-host", "git send-email --smtp-server=smtp.example.com x.patch", A),
]


@pytest.mark.parametrize(("command", "expected"), [*REDTEAM, *CONTROLS])
def test_git_redteam(command: str, expected: str) -> None:
    got = verdict(command)
    if expected == NOT_ALLOW:
        assert got.effect != A, (command, got.decision.reason)
    else:
        assert got.effect == expected, (command, got.decision.reason)


@pytest.mark.parametrize(
    ("command", "expected"),
    [("git mv x .git/hooks/x", D), ("git mv -f a .git/hooks/pre-commit", D), ("git mv a b", A),
     ("git apply --directory=.git/hooks x.patch", D)],
)  # fmt: skip
def test_git_moves_and_patch_prefixes_meet_protected_paths(command: str, expected: str) -> None:
    assert verdict(command).effect == expected


@pytest.mark.parametrize(
    ("pattern", "command"),
    [("git reset --hard *", "git reset --har HEAD~1"), ("git reset --hard *", "git reset x --hard"),
     ("git clean -fdx *", "git clean -xdf"), ("git clean -fdx *", "git clean --force -d -x"),
     ("git clean -fdx *", "git clean -dfx -e y"), ("git branch -D *", "git branch -d -f x"),
     ("git branch -D *", "git branch --delete --force x"), ("git branch -d -f *", "git branch -D x"),
     ("pip install *", "pip -v install x"), ("pip install *", "pip3.11 --proxy p install x"),
     ("python -m pip install *", "python3.11 -m pip install x")],
)  # fmt: skip
def test_deny_rules_on_destructive_git_and_pip_meet_every_spelling(
    pattern: str, command: str
) -> None:
    reading = catalog.read(tuple(shlex.split(command)))
    assert reading is not None
    assert reading.canonical is not None
    assert compile_pattern(pattern).matches_canonical(joined(reading.canonical)), reading.canonical


@pytest.mark.parametrize(
    ("pattern", "command"),
    [("git reset --hard *", "git reset HEAD~1"), ("git branch -D *", "git branch -d x"),
     ("git clean -fdx *", "git clean -n")],
)  # fmt: skip
def test_the_milder_spellings_are_not_caught(pattern: str, command: str) -> None:
    reading = catalog.read(tuple(command.split()))
    assert reading is not None
    assert reading.canonical is not None
    assert not compile_pattern(pattern).matches_canonical(joined(reading.canonical))
