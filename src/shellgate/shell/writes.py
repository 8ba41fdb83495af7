"""Which paths a command writes (or deletes), for the protected-paths layer.

``write_operands`` knows the operand grammar of common writing commands; the
walker adds output-redirection targets. ``resolve`` makes a target absolute
against the directory the shell will be in, lexically (``os.path.normpath``):
the file system is never consulted, so a symlink can still point elsewhere
(a documented limit; the sandbox is the backstop).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from shellgate.shell.options import Grammar, Option, has, scan_all

Argv = tuple[str, ...]


def _g(short: str = "", long: str = "", flags: str = "") -> Grammar:
    """``long``: long options taking an argument; ``flags``: those without one
    that decide what is written (named so their abbreviations resolve)."""
    return Grammar(short, frozenset(long.split()), long_flags=frozenset(flags.split()))


def _sed(options: list[Option], args: list[str]) -> list[str]:
    if not any(name in ("-i", "--in-place") for name, _ in options):
        return []
    scripted = has(options, "-e", "--expression", "-f", "--file")
    return args if scripted else args[1:]


_SED_GRAMMAR = _g("efl", "--expression --file --line-length", "--in-place")

WRITERS: dict[str, tuple[Grammar, Callable[[list[Option], list[str]], list[str]]]] = {
    "sed": (_SED_GRAMMAR, _sed),
    "gsed": (_SED_GRAMMAR, _sed),
}  # fmt: skip


def write_operands(form: Argv) -> list[str]:
    """Operands ``form`` writes to, as written (relative paths not yet resolved)."""
    if not form:
        return []
    name = form[0]
    writer = WRITERS.get(name)
    if writer is None:
        return []
    grammar, pick = writer
    # Both readings of every long option: as the abbreviation of a known one
    # (`cp --targ=D`) and as written (`sed --in-place` is no abbreviation).
    options, operands = scan_all(form, grammar)
    targets = pick(options, operands)
    if any(word.startswith("--") for word in form[1:]):
        options, operands = scan_all(form, grammar, expand=False)
        targets += pick(options, operands)
    return [target for target in dict.fromkeys(targets) if target]


def resolve(path: str, cwd: str) -> str:
    """Absolute, lexically normalised ``path`` as seen from ``cwd``."""
    joined = path if path.startswith("/") else os.path.join(cwd, path)
    normal = os.path.normpath(joined)
    # POSIX lets "//x" differ from "/x"; no Linux path does, and rules expect one slash.
    return "/" + normal.lstrip("/")
