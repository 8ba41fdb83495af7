"""Shell variables: which assignments are known-safe, which names are sensitive,
and the subscripts bash evaluates when a name or a number is an array element.

Shared by the builtins family (``printf -v``, ``read``, ``mapfile``, ``declare
-i``, ``test -v``) and by ``finish.py`` (prefix assignments ``NAME=value cmd``).
"""

from __future__ import annotations

import re
from typing import Protocol

from shellgate.shell.catalog.entry import Reading

#: Environment variables whose assignment cannot change what a command runs.
SAFE_ASSIGNMENTS = frozenset(
    {"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC",
     "LC_TIME", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS",
     "LINES", "TERM", "CI", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
     "RUST_BACKTRACE", "RUST_LOG", "DEBIAN_FRONTEND", "GIT_TERMINAL_PROMPT"}
)  # fmt: skip

#: Variables whose value changes what later commands run, read or trust.
SENSITIVE_NAMES = frozenset(
    {"PATH", "HOME", "IFS", "PS0", "PS1", "PS2", "PS3", "PS4", "ENV", "BASH_ENV",
     "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "FIGNORE",
     "HISTFILE", "HISTCONTROL", "MAIL", "MAILPATH", "TMPDIR", "PWD", "OLDPWD", "SHELL",
     "PAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER",
     "NODE_OPTIONS", "FUNCNEST", "POSIXLY_CORRECT", "TERMINFO", "INPUTRC", "OPTIND",
     "EXECIGNORE", "GLOBSORT", "TIMEFORMAT", "HOSTFILE"}
)  # fmt: skip
_SENSITIVE_PREFIXES = ("LD_", "DYLD_", "BASH", "GIT_", "PYTHON", "PERL", "RUBY", "LESS",
                       "XDG_", "SSH_", "GCONV", "NODE_", "LC_", "COMP_")  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Out(Protocol):
    """Where findings and payloads go (a catalog ``Reading``)."""

    findings: list[str]
    payloads: list[tuple[str, str]]


def check_subscript(word: str, where: str, out: Out) -> bool:
    """``a[$(cmd)]``: bash evaluates the subscript as arithmetic, running the
    substitutions in it; it is a finding and is parsed as a payload so deny rules
    see those commands. True when ``word`` has a subscript."""
    if "[" not in word:
        return False
    out.findings.append(f"'{where} {word[:40]}' has an array subscript bash evaluates")
    subscript = word[word.index("[") + 1 :]
    subscript = subscript[: subscript.rindex("]")] if "]" in subscript else subscript
    if subscript:
        out.payloads.append((f"{where} subscript", subscript))
    return True


def is_identifier(name: str) -> bool:
    """A plain variable name (no subscript, nothing bash would read otherwise)."""
    return _IDENTIFIER.fullmatch(name) is not None


def is_sensitive_name(name: str) -> bool:
    """A variable whose value changes what later commands run, read or trust."""
    return name in SENSITIVE_NAMES or name.startswith(_SENSITIVE_PREFIXES)


def check_variable_name(name: str, where: str, out: Out) -> None:
    """A finding unless ``name`` is a plain, non-sensitive identifier."""
    if check_subscript(name, where, out):
        return
    if not _IDENTIFIER.fullmatch(name):
        out.findings.append(f"'{where}' with an invalid or unknown variable name '{name[:40]}'")
    elif is_sensitive_name(name):
        out.findings.append(f"'{where} {name}' sets a variable that changes what commands do")


def loop_variable_findings(keyword: str, name: str) -> list[str]:
    """The findings of ``for``/``select`` assigning ``name`` (``for PATH in DIR``
    makes the body run ``DIR/ls``; ``for IFS in …`` changes word splitting)."""
    out = Reading()
    check_variable_name(name, f"{keyword} loop variable", out)
    return out.findings
