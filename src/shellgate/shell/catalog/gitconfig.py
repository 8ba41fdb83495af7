"""git configuration: which settings make git run a program (for ``catalog/vcs.py``).

``git config`` of such a key is a finding; so is any write to the global or
system file, a section rename (it can move harmless keys into one git runs),
``core.worktree`` (it moves where later commands write), a key that makes a
mistyped command run another one (``help.autocorrect``), and a remote's push
refspec that forces or deletes (``remote.NAME.push +…``) or its ``mirror``
(a later plain ``git push`` force-updates and deletes refs: no rule on
``git push --force`` could see it). ``git -c KEY=CMD`` of a code key makes CMD
a payload of its own, so a deny rule on CMD meets it.

The code keys were audited against ``git help config`` of git 2.39 (every key
whose value git runs, hands to a shell, or that loads more configuration or
code), plus ``filter.*.process`` (gitattributes(5)), ``tar.*.command``
(git-archive(1)) and ``svn.authorsProg`` (git-svn(1));
``tests/shell/test_gitconfig_keys.py`` holds the table and checks the list
against the machine's own ``git help --config``.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Reading

#: Keys (lower case; ``.+`` a subsection) whose value git runs, or that load
#: more configuration, hooks or helpers that do. ``extensions.*`` switch on
#: more of them (``worktreeConfig`` makes ``.git/config.worktree`` live,
#: ``partialClone`` names a remote git fetches from on its own).
_CODE_KEYS = re.compile(
    r"core\.(fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy|alternaterefscommand)"
    r"|sequence\.editor|diff\.external|interactive\.difffilter|init\.templatedir"
    r"|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process)"
    r"|alias\..+|credential(\..+)?\.helper|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand"
    r"|pager\..+|uploadpack\.packobjectshook|include\.path|includeif\..+|extensions\..+"
    r"|protocol(\..+)?\.allow|remote\..+\.(uploadpack|receivepack|proxy|vcs)"
    r"|submodule\..+\.update|instaweb\..+|hook\..+|trailer\..+\.(command|cmd)"
    r"|(diff|merge)tool\..+\.(cmd|path)|browser\..+\.(cmd|path)|web\.browser"
    r"|man\.viewer|man\..+\.(cmd|path)|help\.browser|guitool\..+\.cmd|tar\..+\.command"
    r"|sendemail\.(.+\.)?(tocmd|cccmd|headercmd|sendmailcmd|smtpserver)|imap\.tunnel"
    r"|svn\.authorsprog"
)
#: Keys that change what a later git command does beyond what its words say,
#: with the finding each raises (values are checked by :func:`_pushes`).
_STATE_KEYS: tuple[tuple[re.Pattern[str], str], ...] = (
    # core.worktree: every checkout, reset and merge writes under it; a cookie
    # file is written by every later fetch over http (with http.saveCookies).
    (re.compile(r"core\.worktree|http(\..+)?\.cookiefile"),
     "moves where later git commands write"),
    (re.compile(r"help\.autocorrect"),
     "makes a mistyped git command run another one (not the one rules saw)"),
)  # fmt: skip
_REMOTE_PUSH = re.compile(r"remote\..+\.push")
_REMOTE_MIRROR = re.compile(r"remote\..+\.mirror")
_FALSE = frozenset({"false", "no", "off", "0"})
_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                 "--get-colorbool")  # fmt: skip
_CONFIG_SETS = ("--add", "--replace-all")  # name value: a key is set
_CONFIG_CHANGES = ("--unset", "--unset-all", "--rename-section", "--remove-section")
#: The verbs of git 2.46's ``git config VERB``, and whether each writes.
_CONFIG_VERBS = {"get": False, "list": False, "set": True, "unset": True,
                 "rename-section": True, "rename": True, "remove-section": True,
                 "edit": True}  # fmt: skip


#: Every option of ``git config`` that reads, sets or changes keys (flags).
CONFIG_FLAGS = (*_CONFIG_READS, *_CONFIG_SETS, *_CONFIG_CHANGES)
#: What ``git config`` of a code key, ``git maintenance register`` and the
#: like are told (a global write reaches every later git command).
GLOBAL_CONFIG = "changes configuration every later git command reads"
#: A push that force-updates or deletes refs no ``git push`` rule sees.
FORCES_PUSHES = "makes a later plain 'git push' force-update or delete remote refs"


def forcing_refspec(value: str) -> bool:
    """A push refspec that force-updates (``+src:dst``) or deletes (``:dst``)."""
    value = value.strip()
    return value.startswith("+") or (value.startswith(":") and len(value) > 1)


def _pushes(key: str, value: str) -> bool:
    """``remote.R.push`` with a forcing refspec, or ``remote.R.mirror`` switched on."""
    if _REMOTE_PUSH.fullmatch(key):
        return forcing_refspec(value)
    return bool(_REMOTE_MIRROR.fullmatch(key)) and value.strip().lower() not in _FALSE


def key_findings(key: str, value: str | None) -> list[str]:
    """Why setting ``key`` (to ``value``, when known) is a finding, if it is."""
    key = key.lower()
    found = []
    if _CODE_KEYS.fullmatch(key):
        found.append("sets a key whose value git runs, or that loads configuration or code")
    found.extend(why for keys, why in _STATE_KEYS if keys.fullmatch(key))
    if value is not None and _pushes(key, value):
        found.append(FORCES_PUSHES)
    return found


def config_hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Setting a key git runs is a finding; so is any write to the global or
    system file, which every later git command reads. Reading stays clean."""
    words = parsed.words
    verb = words[0] if words and words[0] in _CONFIG_VERBS else ""
    if verb:
        writes, words = _CONFIG_VERBS[verb], words[1:]
    elif parsed.has(*_CONFIG_SETS, *_CONFIG_CHANGES, "-e"):
        writes = True
    else:
        writes = not parsed.has(*_CONFIG_READS, "-l") and len(words) >= 2
    if not writes:
        return
    setting = verb == "set" or (not verb and not parsed.has(*_CONFIG_CHANGES, "-e"))
    if words and setting:
        value = words[1] if len(words) > 1 else None
        for why in key_findings(words[0], value):
            out.finding(f"'git {argv[0]} {words[0]}' {why}")
    if verb in ("rename-section", "rename") or parsed.has("--rename-section"):
        # `--rename-section x alias` turns harmless keys into ones git runs.
        out.finding(f"'git {argv[0]}' renames a section: it can move keys into one git runs")
    if parsed.has("--global", "--system"):
        out.finding(f"'git {argv[0]}' {GLOBAL_CONFIG}")
    if verb == "edit" or parsed.has("-e"):
        out.finding(f"'git {argv[0]} --edit' can change any key")
    out.writes.extend(parsed.values("-f"))


def command_line_config(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``git -c core.pager='CMD' log``: git runs the value of a code key through
    the shell, so it is a payload of its own (a deny rule on CMD meets it)."""
    del argv
    for setting in parsed.values("-c"):
        key, eq, value = setting.partition("=")
        if eq and value and _CODE_KEYS.fullmatch(key.lower()):
            out.payloads.append((f"git -c {key} payload", value))
