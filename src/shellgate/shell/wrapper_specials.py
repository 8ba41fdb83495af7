"""Wrappers whose inner command no getopt grammar finds.

``sg GROUP [-c] CMD`` and ``gdb -ex 'shell CMD'`` run shell strings; ``capsh …
--`` hands the rest of its words to bash; ``setarch ARCH`` puts an operand
before its options; ``schedtool … -e CMD`` ends its options with the command;
``mpirun`` and ``srun`` take hundreds of options, so every word that could start
the command is tried. Each peeler returns the argvs it runs (best reading first)
and adds shell strings to ``out.payloads``. Like the grammars, they over-approximate:
an extra form can only make deny and ask rules match more.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Protocol

from shellgate.shell.options import Grammar, Option, scan_prefix
from shellgate.shell.wrapper_grammars import SETARCH

Argv = tuple[str, ...]

_NAME_LIKE = re.compile(r"[A-Za-z_./\\][\w.+/\\-]*")


class Payloads(Protocol):
    """Where shell strings go (``wrappers.Unwrapped``)."""

    payloads: list[tuple[str, str]]


def could_be_command(word: str) -> bool:
    return _NAME_LIKE.fullmatch(word) is not None and not word.isdigit()


def commands_after(form: Argv, grammar: Grammar) -> tuple[int, list[Option], list[Argv]]:
    """(index of the inner command, options, argvs it may run) under ``grammar``.

    The argvs are the command after the options, then the command starting at
    every word the grammar consumed, in case the grammar is wrong about it.
    """
    start, options, consumed = scan_prefix(form, grammar)
    inner = [form[start:]] if start < len(form) else []
    inner.extend(form[i:] for i in consumed if i < len(form) and could_be_command(form[i]))
    before = form[start - 1] if start > 1 else ""
    if before.startswith("--") and "=" not in before and _unknown(before, grammar):
        # `unshare --setgroups deny rm`: a long option the grammar does not know
        # may take the next word; the command may start one word later.
        inner.append(form[start + 1 :])
    return start, options, inner


def _unknown(option: str, grammar: Grammar) -> bool:
    known = grammar.long_arg | grammar.long_flags | grammar.long_nargs.keys()
    return not any(full.startswith(option) for full in known)


def peel_sg(form: Argv, out: Payloads) -> list[Argv]:
    """``sg [-] GROUP [-c] CMD``: shadow's sg runs CMD (one word) with ``sh -c``."""
    rest = form[1:]
    if rest[:1] == ("-",):
        rest = rest[1:]
    rest = rest[1:]  # the group
    if rest[:1] == ("-c",) and len(rest) > 1:
        out.payloads.append(("sg command", rest[1]))
        return []
    if not rest:
        return []
    out.payloads.append(("sg command", rest[0]))
    return [rest]  # sg drops the words after CMD; reading them too only adds matches


def peel_capsh(form: Argv, out: Payloads) -> list[Argv]:
    """``capsh [--caps=… --shell=SH] -- ARGS``: the shell runs ARGS (``-c 'CMD'``).

    ``-+`` launches the shell the same way; ``==`` and ``=+`` run capsh again.
    """
    del out
    shell = "/bin/bash"
    for i, word in enumerate(form[1:], start=1):
        if word.startswith("--shell="):
            shell = word.partition("=")[2] or shell
        elif word in ("--", "-+"):
            return [(shell, *form[i + 1 :])]
        elif word in ("==", "=+"):
            return [("capsh", *form[i + 1 :])]
    return []


def peel_setarch(form: Argv, out: Payloads) -> list[Argv]:
    """``setarch ARCH [-R …] CMD``: the architecture comes before the options."""
    del out
    if len(form) > 1 and not form[1].startswith("-"):
        found = commands_after((form[0], *form[2:]), SETARCH)[2]
        return [*found, form[1:]] if could_be_command(form[1]) else found
    return commands_after(form, SETARCH)[2]


def peel_schedtool(form: Argv, out: Payloads) -> list[Argv]:
    """``schedtool [-R -p 20 …] -e CMD ARGS``: ``-e`` ends the options."""
    del out
    return [
        form[i + 1 :]
        for i, word in enumerate(form[:-1])
        if i and word[:1] == "-" and word[1:2] != "-" and word.endswith("e")
    ]


#: Guesses a launcher with unknown options may produce (the forms cap is shared).
_LAUNCHER_GUESSES = 8


def peel_launcher(form: Argv, out: Payloads) -> list[Argv]:
    """``mpirun``/``srun``…: try every word that could start the command.

    No option takes more than two words (``mpirun --mca KEY VALUE``), so of three
    operands in a row the command starts at one of them: the scan stops there.
    ``:`` starts another program (``mpirun -n 1 A : -n 2 B``).
    """
    del out
    inner: list[Argv] = []
    run = 0
    for i, word in enumerate(form[1:], start=1):
        if word == "--":
            inner.append(form[i + 1 :])
            break
        if word == ":" or (len(word) > 1 and word.startswith("-")):
            run = 0
            continue
        run += 1
        if could_be_command(word):
            inner.append(form[i:])
        if len(inner) >= _LAUNCHER_GUESSES or (run >= 3 and ":" not in form[i:]):
            break
    return [argv for argv in inner if argv]


# -- gdb: shell, pipe and run commands given with -ex ----------------------------------

_GDB_EVAL = ("eval-command", "init-eval-command", "early-init-eval-command")
_GDB_VALUED = ("command", "init-command", "early-init-command", "pid", "core", "directory",
               "symbols", "exec", "data-directory", "tty", "interpreter", "baud")  # fmt: skip
_GDB_SHORT_VALUED = frozenset({"x", "ix", "eix", "p", "c", "d", "s", "e", "se", "cd", "b", "l",
                               "D", "t", "i"})  # fmt: skip
_GDB_RUN = frozenset({"r", "ru", "run", "start", "starti"})
_GDB_PYTHON = frozenset({"python", "py", "pi", "python-interactive"})
#: ``call system("CMD")``, ``print popen("CMD", "r")``: the debuggee runs CMD via sh -c.
_GDB_LIBC_SHELL = re.compile(r'\b(?:system|popen)\s*\(\s*"((?:[^"\\]|\\.)*)"')


def _abbreviates(name: str, fulls: Sequence[str]) -> bool:
    return len(name) >= 2 and any(full.startswith(name) for full in fulls)


def _gdb_option(name: str) -> str:
    """What a gdb option does (getopt_long_only: one dash or two, unique prefixes)."""
    if name in ("ex", "iex", "eiex") or _abbreviates(name, _GDB_EVAL):
        return "eval"
    if name in _GDB_SHORT_VALUED or _abbreviates(name, _GDB_VALUED):
        return "value"
    if _abbreviates(name, ("args",)):
        return "args"
    return "flag"


def peel_gdb(form: Argv, out: Payloads) -> list[Argv]:
    """``gdb -ex 'shell CMD'``, ``-ex '!CMD'``, ``-ex 'pipe P | CMD'``, ``--args CMD…``.

    ``call system("CMD")`` (or ``popen``, in any command) makes the debuggee run CMD.

    ``run ARGS`` (and ``set args``) start the program through ``sh -c``, so the
    program with its arguments is a shell string too; ``python CODE`` is read as
    ``python -c CODE``, which the interpreter check reports.
    """
    commands: list[str] = []
    positional: list[str] = []
    inferior: Argv = ()
    i, n = 1, len(form)
    while i < n:
        word = form[i]
        if word == "--":
            positional.extend(form[i + 1 :])
            break
        if len(word) < 2 or word[0] != "-":
            positional.append(word)
            i += 1
            continue
        name, eq, value = word.lstrip("-").partition("=")
        kind = _gdb_option(name)
        if kind == "args":
            inferior = form[i + 1 :]  # gdb stops reading options here
            break
        if kind != "flag" and not eq:
            value = form[i + 1] if i + 1 < n else ""
            i += 1
        if kind == "eval":
            commands.append(value)
        i += 1
    inner: list[Argv] = [inferior] if inferior else []
    program = inferior[0] if inferior else positional[0] if positional else None
    for command in commands:
        inner.extend(_gdb_command(command, program, out))
    return inner


def _head(text: str) -> tuple[str, str]:
    """The first word of a gdb command line and the rest."""
    parts = text.split(None, 1)
    return (parts[0], parts[1] if len(parts) > 1 else "") if parts else ("", "")


def _gdb_command(command: str, program: str | None, out: Payloads) -> list[Argv]:
    text = command.strip()
    for found in _GDB_LIBC_SHELL.finditer(text):
        out.payloads.append(("gdb shell command", re.sub(r"\\(.)", r"\1", found.group(1))))
    if text.startswith("!"):
        out.payloads.append(("gdb shell command", text[1:]))
        return []
    if text.startswith("|"):
        _gdb_pipe(text[1:], out)
        return []
    head, rest = _head(text)
    if head == "set":
        head, rest = _head(rest)
        head = "run" if head == "args" else ""
    if len(head) >= 3 and "shell".startswith(head):
        out.payloads.append(("gdb shell command", rest))
    elif len(head) >= 3 and "pipe".startswith(head):
        _gdb_pipe(rest, out)
    elif head in _GDB_RUN:
        line = f"{shlex.quote(program)} {rest}" if program else rest
        if line.strip():
            out.payloads.append(("gdb shell command", line))
    elif head in _GDB_PYTHON and rest:
        return [("python", "-c", rest)]
    return []


def _gdb_pipe(text: str, out: Payloads) -> None:
    """``pipe [COMMAND] | SHELL_COMMAND`` or ``pipe -d DELIM COMMAND DELIM SHELL_COMMAND``."""
    text = text.strip()
    delimiter = "|"
    if text.startswith("-d"):
        parts = text[2:].split(None, 1)
        if len(parts) == 2:
            delimiter, text = parts
    before, found, after = text.partition(delimiter)
    out.payloads.append(("gdb shell command", after if found else before))
