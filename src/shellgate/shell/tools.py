"""Options of everyday read-only tools that make them run programs or set variables.

Policies allow these tools by name (``printf *``, ``read``…), so an option that
assigns a shell variable (``printf -v PATH``) must be a finding: the allow rule
matched words, not effects. (``sort``, ``rg``, ``less``, ``file``: catalog
entries, ``catalog/coreutils.py``; ``fd``: ``catalog/findutils.py``.)

Invariant: checks are keyed on the command name (``TOOLS``), so a command that
is none of these tools costs one dict lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

Argv = tuple[str, ...]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Variables whose value changes what later commands run, read or trust.
SENSITIVE_NAMES = frozenset(
    {"PATH", "HOME", "IFS", "PS0", "PS1", "PS2", "PS3", "PS4", "ENV", "BASH_ENV",
     "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "FIGNORE",
     "HISTFILE", "HISTCONTROL", "MAIL", "MAILPATH", "TMPDIR", "PWD", "OLDPWD", "SHELL",
     "PAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER",
     "NODE_OPTIONS", "FUNCNEST", "POSIXLY_CORRECT", "TERMINFO", "INPUTRC", "OPTIND"}
)  # fmt: skip
_SENSITIVE_PREFIXES = ("LD_", "DYLD_", "BASH", "GIT_", "PYTHON", "PERL", "RUBY", "LESS",
                       "XDG_", "SSH_", "GCONV", "NODE_", "LC_", "COMP_")  # fmt: skip


class Out(Protocol):
    """Where findings and payloads go (``commands.Reading``)."""

    findings: list[str]
    payloads: list[tuple[str, str]]


def _short_letters(word: str) -> str:
    return word[1:] if len(word) > 1 and word[0] == "-" and word[1] != "-" else ""




def _printf(form: Argv, out: Out) -> None:
    """``printf -v NAME``: bash assigns NAME (and evaluates ``$(…)`` in a subscript)."""
    i, n = 1, len(form)
    while i < n:
        word = form[i]
        if word == "--" or not word.startswith("-v"):
            return  # the format: bash's printf has no other option
        name = word[2:] if len(word) > 2 else (form[i + 1] if i + 1 < n else "")
        i += 1 if len(word) > 2 else 2
        check_variable_name(name, "printf -v", out)


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


def check_variable_name(name: str, where: str, out: Out) -> None:
    """A finding unless ``name`` is a plain, non-sensitive identifier."""
    if check_subscript(name, where, out):
        return
    if not _IDENTIFIER.fullmatch(name):
        out.findings.append(f"'{where}' with an invalid or unknown variable name '{name[:40]}'")
    elif name in SENSITIVE_NAMES or name.startswith(_SENSITIVE_PREFIXES):
        out.findings.append(f"'{where} {name}' sets a variable that changes what commands do")


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _test(form: Argv, out: Out) -> None:
    """``[[ -v 'a[$(cmd)]' ]]``, ``[[ X -eq Y ]]``: names and operands bash evaluates."""
    for i, word in enumerate(form):
        if word == "-v" and i + 1 < len(form):
            check_subscript(form[i + 1], f"{form[0]} -v", out)
        elif word in _ARITHMETIC_TESTS:
            for operand in (form[i - 1], form[i + 1] if i + 1 < len(form) else ""):
                check_subscript(operand, f"{form[0]} {word}", out)


def _names_after_options(form: Argv, arg_letters: str) -> tuple[list[str], dict[str, str]]:
    """Operands and ``{letter: value}`` of a bash builtin's getopt-style options."""
    operands: list[str] = []
    given: dict[str, str] = {}
    i, n = 1, len(form)
    while i < n:
        word = form[i]
        if word == "--":
            operands.extend(form[i + 1 :])
            break
        if len(word) < 2 or word[0] != "-" or operands:
            operands.append(word)
            i += 1
            continue
        for j, letter in enumerate(word[1:], start=1):
            if letter in arg_letters:
                if j + 1 < len(word):
                    given[letter] = word[j + 1 :]
                elif i + 1 < n:
                    i += 1
                    given[letter] = form[i]
                break
        i += 1
    return operands, given


def _read(form: Argv, out: Out) -> None:
    operands, given = _names_after_options(form, "adinNptu")
    for name in [*operands, *([given["a"]] if "a" in given else [])]:
        check_variable_name(name, form[0], out)


def _mapfile(form: Argv, out: Out) -> None:
    operands, given = _names_after_options(form, "dnOsuCc")
    if "C" in given:
        # The callback is evaluated as a command with the index and line appended.
        out.findings.append(f"'{form[0]} -C' evaluates a callback command")
        out.payloads.append((f"{form[0]} -C callback", given["C"]))
    for name in operands[:1]:
        check_variable_name(name, form[0], out)


def _declare(form: Argv, out: Out) -> None:
    """``declare -i x='a[$(cmd)]'``: an integer variable's value is arithmetic."""
    flags = "".join(w[1:] for w in form[1:] if w.startswith("-") and "=" not in w)
    if "i" not in flags:
        return
    for word in form[1:]:
        name, eq, value = word.partition("=")
        if eq:
            check_subscript(value, f"{form[0]} -i {name}", out)


TOOLS: dict[str, Callable[[Argv, Out], None]] = {
    "[[": _test,
    "[": _test,
    "test": _test,
    "read": _read,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "declare": _declare,
    "typeset": _declare,
    "local": _declare,
    "printf": _printf,
}
