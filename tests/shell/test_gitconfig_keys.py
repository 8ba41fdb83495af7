"""git configuration keys that run a program, load code or change what later
commands do: ``git config KEY VALUE`` of each is a finding (``catalog/gitconfig.py``).

The table was audited against ``git help config`` of git 2.39 (the documentation
of every key whose value git runs, hands to a shell, or that loads more
configuration or code), plus the keys other manual pages define. The last test
checks the list against the names this machine's own git documents.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from shellgate.shell import catalog
from shellgate.shell.catalog.gitconfig import key_findings

#: (key as documented, where) — git runs the value, or it loads code or configuration.
CODE_KEYS = [
    ("core.fsmonitor", "git-config"), ("core.hooksPath", "git-config"),
    ("core.pager", "git-config"), ("core.editor", "git-config"),
    ("core.sshCommand", "git-config"), ("core.askPass", "git-config"),
    ("core.gitProxy", "git-config"), ("core.alternateRefsCommand", "git-config"),
    ("sequence.editor", "git-config"), ("diff.external", "git-config"),
    ("interactive.diffFilter", "git-config"), ("init.templateDir", "git-config"),
    ("diff.<driver>.command", "git-config"), ("diff.<driver>.textconv", "git-config"),
    ("merge.<driver>.driver", "git-config"), ("filter.<driver>.clean", "git-config"),
    ("filter.<driver>.smudge", "git-config"), ("filter.<driver>.process", "gitattributes"),
    ("alias.<name>", "git-config"), ("credential.helper", "git-config"),
    ("credential.<url>.helper", "git-config"), ("gpg.program", "git-config"),
    ("gpg.<format>.program", "git-config"), ("gpg.ssh.defaultKeyCommand", "git-config"),
    ("pager.<cmd>", "git-config"), ("uploadpack.packObjectsHook", "git-config"),
    ("include.path", "git-config"), ("includeIf.<condition>.path", "git-config"),
    ("extensions.worktreeConfig", "git-config"), ("extensions.objectFormat", "git-config"),
    ("extensions.partialClone", "git-config"), ("protocol.allow", "git-config"),
    ("protocol.<name>.allow", "git-config"), ("remote.<name>.uploadpack", "git-config"),
    ("remote.<name>.receivepack", "git-config"), ("remote.<name>.proxy", "git-config"),
    ("remote.<name>.vcs", "git-config"), ("submodule.<name>.update", "git-config"),
    ("instaweb.browser", "git-config"), ("instaweb.httpd", "git-instaweb"),
    ("instaweb.modulePath", "git-config"), ("hook.<name>.command", "githooks (2.46+)"),
    ("trailer.<token>.command", "git-interpret-trailers"),
    ("trailer.<token>.cmd", "git-interpret-trailers"),
    ("difftool.<tool>.cmd", "git-config"), ("difftool.<tool>.path", "git-config"),
    ("mergetool.<tool>.cmd", "git-config"), ("mergetool.<tool>.path", "git-config"),
    ("browser.<tool>.cmd", "git-config"), ("browser.<tool>.path", "git-config"),
    ("web.browser", "git-config"), ("man.viewer", "git-config"),
    ("man.<tool>.cmd", "git-config"), ("man.<tool>.path", "git-config"),
    ("help.browser", "git-config"), ("guitool.<name>.cmd", "git-config"),
    ("tar.<format>.command", "git-archive"), ("sendemail.tocmd", "git-config"),
    ("sendemail.ccCmd", "git-config"), ("sendemail.headerCmd", "git-send-email"),
    ("sendemail.sendmailCmd", "git-send-email"), ("sendemail.smtpServer", "git-send-email"),
    ("sendemail.<identity>.sendmailCmd", "git-send-email"),
    ("imap.tunnel", "git-config"), ("svn.authorsProg", "git-svn"),
]  # fmt: skip
#: Keys that change what a later command does beyond its words (not code).
STATE_KEYS = [
    ("core.worktree", "/tmp"), ("http.cookieFile", "/tmp/c"), ("http.<url>.cookieFile", "c"),
    ("help.autoCorrect", "immediate"), ("remote.<name>.push", "+refs/heads/*:refs/heads/*"),
    ("remote.<name>.push", ":refs/heads/main"), ("remote.<name>.mirror", "true"),
]  # fmt: skip
HARMLESS = [
    ("user.name", "x"), ("user.email", "x@y"), ("core.autocrlf", "input"),
    ("color.pager", "true"), ("core.quotePath", "false"), ("http.proxy", "http://p:3128"),
    ("diff.<driver>.cachetextconv", "true"), ("push.default", "current"),
    ("remote.<name>.url", "https://x/y.git"), ("remote.<name>.push", "refs/heads/main"),
    ("remote.<name>.push", ":"), ("remote.<name>.mirror", "false"),
    ("remote.<name>.fetch", "+refs/heads/*:refs/remotes/o/*"), ("imap.folder", "x"),
    ("core.repositoryFormatVersion", "1"), ("mergetool.prompt", "false"),
]  # fmt: skip
#: Names ``git help --config`` lists that look like a program but are none: a
#: reviewed list (a new key in a later git fails the last test until it is here
#: or in the catalog).
NOT_PROGRAMS = {
    "advice.ignoredhook",  # whether to print a hint
    "advice.waitingforeditor",  # whether to print a hint
    "color.pager",  # colour through the pager: a boolean
    "column.clean",  # layout of git clean's list
    "diff.x.cachetextconv",  # caches what textconv (a code key) printed
    "gitcvs.dbdriver",  # a Perl DBI driver name (DBD::x), no program
    "http.proxy",  # a proxy URL, no program
    "rebase.reschedulefailedexec",  # whether a failed exec line is retried
    "remote.x.partialclonefilter",  # an object filter spec
    "uploadpack.allowfilter",  # a server-side boolean
}
_LOOKS_LIKE_A_PROGRAM = re.compile(
    r".*(cmd|command|program|tunnel|helper|editor|pager|proxy|askpass|hook|hookspath"
    r"|textconv|driver|smudge|clean|process|\.path|browser|viewer|exec|filter)"
)


def _sample(key: str) -> str:
    """A real key for a documented one: ``<driver>`` and the like become ``x``."""
    return re.sub(r"<[^>]*>", "x", key)


def _findings(*argv: str) -> list[str]:
    reading = catalog.read(("git", *argv))
    assert reading is not None
    return list(reading.findings)


@pytest.mark.parametrize(("key", "where"), CODE_KEYS, ids=[k for k, _ in CODE_KEYS])
def test_setting_a_key_git_runs_is_a_finding(key: str, where: str) -> None:
    key = _sample(key)
    for argv in (("config", key, "touch x"), ("config", "--add", key, "x"),
                 ("config", "set", key.upper(), "x")):  # fmt: skip
        assert any("git runs" in f for f in _findings(*argv)), (argv, where)
    # On git's command line the value is a payload of its own (a rule on it meets it).
    reading = catalog.read(("git", "-c", f"{key}=touch x", "status"))
    assert reading is not None
    assert ("git -c " + key + " payload", "touch x") in reading.payloads


@pytest.mark.parametrize(("key", "value"), STATE_KEYS)
def test_a_key_that_changes_later_commands_is_a_finding(key: str, value: str) -> None:
    assert _findings("config", _sample(key), value)
    assert key_findings(_sample(key), value)


@pytest.mark.parametrize(("key", "value"), HARMLESS)
def test_ordinary_keys_stay_clean(key: str, value: str) -> None:
    assert _findings("config", _sample(key), value) == []
    assert _findings("config", "--get", _sample(key)) == []


def test_reading_a_code_key_stays_clean() -> None:
    assert _findings("config", "--get", "imap.tunnel") == []
    assert _findings("config", "imap.tunnel") == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_every_documented_key_that_names_a_program_is_in_the_list() -> None:
    listed = subprocess.run(
        ["git", "help", "--config"], capture_output=True, text=True, check=False
    ).stdout.split()
    if not listed:
        pytest.skip("this git lists no configuration names")
    suspects = {_sample(n).lower() for n in listed if _LOOKS_LIKE_A_PROGRAM.fullmatch(n.lower())}
    missing = sorted(k for k in suspects - NOT_PROGRAMS if not key_findings(k, None))
    assert missing == []
    assert "imap.tunnel" in suspects  # the check reads real names
