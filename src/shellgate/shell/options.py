"""Getopt-style option scanning of the knowledge modules not yet in the catalog.

GNU tools (``cp``, ``tee``…) permute, so every word that looks like an option is
one until ``--``. (Wrappers, which stop at their command, are read by the
catalog's engine: ``argv/engine.py``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

Option = tuple[str, str | None]  # ("-u", "root"), ("--user", "root"), ("-v", None)


@dataclass(frozen=True)
class Grammar:
    """Which options take an argument.

    ``short_arg``: single-letter options taking an argument (glued or next word).
    ``long_arg``: ``--long`` options taking an argument (``=value`` or next word).
    """

    short_arg: str = ""
    long_arg: frozenset[str] = field(default_factory=frozenset)
    #: ``--long`` options without an argument that matter to a caller
    #: (``--in-place``): named so their GNU abbreviations (``--in-pl``) resolve.
    long_flags: frozenset[str] = field(default_factory=frozenset)


def abbreviates(word: str, full: str, shortest: int) -> bool:
    """``word`` (``--name`` or ``--name=v``) is ``full`` or a getopt_long
    abbreviation of it at least ``shortest`` characters long (``--compress``)."""
    name = word.partition("=")[0]
    return len(name) >= shortest and full.startswith(name)


def _expand(name: str, grammar: Grammar) -> list[str]:
    """The long options ``name`` stands for: itself, or what it abbreviates.

    getopt_long (and argparse) accept any unambiguous prefix: ``--targ`` is
    ``--target-directory``, ``--sig`` is ``--signal``. A prefix of several known
    options is read as each of them (the tool would refuse it as ambiguous;
    reading more only adds findings and readings).
    """
    known = grammar.long_arg | grammar.long_flags
    if name in known or len(name) < 3:
        return [name]
    return sorted(full for full in known if full.startswith(name)) or [name]


def _arity(grammar: Grammar, names: Sequence[str]) -> int:
    """How many words follow the option as its arguments (the most of ``names``)."""
    return 1 if any(n in grammar.long_arg for n in names) else 0


def _one(
    args: Sequence[str], i: int, grammar: Grammar, options: list[Option], expand: bool = True
) -> int:
    """Consume the option at ``args[i]``; return the index after it and its arguments."""
    word = args[i]
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        names = _expand(name, grammar) if expand else [name]
        if eq:
            options.extend((full, value) for full in names)
            return i + 1
        count = _arity(grammar, names)
        argument = args[i + 1] if count and i + 1 < len(args) else None
        options.extend((full, argument) for full in names)
        return i + 1 + count
    for j in range(1, len(word)):
        letter = word[j]
        if letter in grammar.short_arg:
            if j + 1 < len(word):
                options.append(("-" + letter, word[j + 1 :]))
                return i + 1
            options.append(("-" + letter, args[i + 1] if i + 1 < len(args) else None))
            return i + 2
        options.append(("-" + letter, None))
    return i + 1


def scan_all(
    args: Sequence[str], grammar: Grammar, *, expand: bool = True
) -> tuple[list[Option], list[str]]:
    """GNU permuting scan of ``args[1:]``: (options, operands).

    ``expand``: read a long option that is a prefix of known ones as those
    (getopt_long's abbreviations). A grammar lists only some of a tool's
    options, so a real flag can look like a prefix of a known one (curl's
    ``--head`` of ``--header``) and would swallow the next word: callers that
    need every target take both readings (``writes.write_operands``).
    """
    options: list[Option] = []
    operands: list[str] = []
    i, n = 1, len(args)
    while i < n:
        word = args[i]
        if word == "--":
            operands.extend(args[i + 1 :])
            break
        if len(word) > 1 and word.startswith("-"):
            i = _one(args, i, grammar, options, expand)
            continue
        operands.append(word)
        i += 1
    return options, operands


def values(options: Sequence[Option], *names: str) -> list[str]:
    """Arguments given to any of ``names`` (``"-o"``, ``"--output"``), in order."""
    return [value for name, value in options if name in names and value is not None]


def has(options: Sequence[Option], *names: str) -> bool:
    return any(name in names for name, _ in options)
