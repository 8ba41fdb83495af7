"""git configuration: which settings make git run a program (for ``catalog/vcs.py``).

``git config`` of such a key is a finding; so is any write to the global or
system file, a section rename (it can move harmless keys into one git runs) and
``core.worktree`` (it moves where later commands write). ``git -c KEY=CMD`` of
such a key makes CMD a payload of its own, so a deny rule on CMD meets it.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Reading

#: Keys (lower case; ``.+`` a subsection) whose value git runs, or that load
#: more configuration, hooks or helpers that do.
_CODE_KEYS = re.compile(
    r"core\.(fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy|alternaterefscommand)"
    r"|sequence\.editor|diff\.external|interactive\.difffilter|init\.templatedir"
    r"|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process)"
    r"|alias\..+|credential(\..+)?\.helper|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand"
    r"|pager\..+|uploadpack\.packobjectshook|include\.path|includeif\..+"
    r"|protocol(\..+)?\.allow|remote\..+\.(uploadpack|receivepack|proxy|vcs)"
    r"|submodule\..+\.update|instaweb\..+|hook\..+|trailer\..+\.(command|cmd)"
    r"|(diff|merge)tool\..+\.(cmd|path)|browser\..+\.(cmd|path)|web\.browser"
    r"|man\.viewer|man\..+\.(cmd|path)|help\.browser|guitool\..+\.cmd|tar\..+\.command"
    r"|sendemail\.(.+\.)?(tocmd|cccmd|headercmd|sendmailcmd|smtpserver)"
)
#: Keys that move where later git commands write (``core.worktree``: every
#: checkout, reset and merge writes under it).
_STATE_KEYS = re.compile(r"core\.worktree")
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
    key = words[0].lower() if words and setting else ""
    if _CODE_KEYS.fullmatch(key):
        out.finding(f"'git {argv[0]} {words[0]}' sets a key whose value git runs")
    if _STATE_KEYS.fullmatch(key):
        out.finding(f"'git {argv[0]} {words[0]}' moves where later git commands write")
    if verb in ("rename-section", "rename") or parsed.has("--rename-section"):
        # `--rename-section x alias` turns harmless keys into ones git runs.
        out.finding(f"'git {argv[0]}' renames a section: it can move keys into one git runs")
    if parsed.has("--global", "--system"):
        out.finding(f"'git {argv[0]}' changes configuration every later git command reads")
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
