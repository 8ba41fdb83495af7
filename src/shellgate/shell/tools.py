"""Options of everyday read-only tools that make them run programs.

Policies allow these tools by name (``sort *``, ``rg *``, ``less *``…), so an
option that runs another program (``sort --compress-program``, ``rg --pre``,
``fd -x``) or loads key bindings that can (``less --lesskey-src``) must be a
finding: the allow rule matched words, not effects (``printf -v`` and the other
builtins that set variables are in ``catalog/builtins.py``). Each check follows
its tool's option grammar (bundled short letters, ``--opt=value`` and ``--opt
value``, GNU long-option abbreviations where the tool accepts them) and
over-approximates: a false finding costs a question.

Invariant: checks are keyed on the command name (``TOOLS``), so a command that
is none of these tools costs one dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from shellgate.shell import buildtools
from shellgate.shell.options import abbreviates

Argv = tuple[str, ...]

_FD_VALUE_LETTERS = frozenset("edtEcjSoC")


class Out(Protocol):
    """Where findings and payloads go (``commands.Reading``)."""

    findings: list[str]
    payloads: list[tuple[str, str]]


def _long_name(word: str) -> str:
    return word.partition("=")[0]


def _short_letters(word: str) -> str:
    return word[1:] if len(word) > 1 and word[0] == "-" and word[1] != "-" else ""


def _sort(form: Argv, out: Out) -> None:
    for word in form[1:]:
        if word.startswith("--") and abbreviates(word, "--compress-program", 4):
            out.findings.append(f"'{form[0]} --compress-program' runs a program")
            return


def _rg(form: Argv, out: Out) -> None:
    for word in form[1:]:
        name = _long_name(word)
        if name in ("--pre", "--hostname-bin"):
            out.findings.append(f"'{form[0]} {name}' runs a program")
            return


def _less(form: Argv, out: Out) -> None:
    for word in form[1:]:
        lowered = word.lower()
        if lowered.startswith("--lessk"):
            out.findings.append(f"'{form[0]} {_long_name(word)}' loads key bindings and settings")
            return
        if "k" in _short_letters(word):  # -k FILE, -kFILE, or bundled (-Nk FILE)
            out.findings.append(f"'{form[0]} -k' loads key bindings and settings")
            return
        # +CMD types less commands at start: ! and | run a shell, s and v write or
        # edit, - sets options (-o logs to a file). A one-line search runs nothing.
        search = word[1:2] in ("/", "?") and "\n" not in word
        if word.startswith("+") and not search and any(c in word for c in "!|sv-\n"):
            out.findings.append(f"'{form[0]} {word[:30]}' runs a less command at start")
            return


def fd_exec_command(form: Argv) -> tuple[str, Argv] | None:
    """(option, command) of fd's ``-x``/``-X``/``--exec``/``--exec-batch``, or None.

    The command runs to a ``;`` word or the end (clap's value terminator); a glued
    spelling (``--exec=CMD``, ``-xCMD``) gives the command's first word.
    """
    for i, word in enumerate(form[1:], start=1):
        glued: str | None = None
        option = ""
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if len(name) > 4 and ("--exec-batch".startswith(name) or name == "--exec"):
                option, glued = name, (value if eq else None)
        else:
            letters = _short_letters(word)
            for j, letter in enumerate(letters):
                if letter in "xX":
                    option, glued = "-" + letter, (letters[j + 1 :] or None)
                    break
                if letter in _FD_VALUE_LETTERS:
                    break  # the rest is this option's value (-tx: type executable)
        if option:
            rest = list(form[i + 1 :])
            if glued is not None:
                rest.insert(0, glued)
            end = rest.index(";") if ";" in rest else len(rest)
            return option, tuple(rest[:end])
    return None


def _fd(form: Argv, out: Out) -> None:
    found = fd_exec_command(form)
    if found is not None:
        out.findings.append(f"'{form[0]} {found[0]}' runs a command per file")


def _file(form: Argv, out: Out) -> None:
    for word in form[1:]:
        if "C" in _short_letters(word) or (
            word.startswith("--") and abbreviates(word, "--compile", 5)
        ):
            out.findings.append(f"'{form[0]} -C' compiles a magic file (writes NAME.mgc)")
            return


TOOLS: dict[str, Callable[[Argv, Out], None]] = {
    "sort": _sort,
    "rg": _rg,
    "less": _less,
    "fd": _fd,
    "fdfind": _fd,
    "file": _file,
}
TOOLS.update(buildtools.TOOLS)
