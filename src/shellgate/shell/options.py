"""Getopt-style option scanning shared by the wrapper and writer grammars.

Two modes, because commands differ: wrappers (``sudo``, ``timeout``…) stop at the
first operand, which is the inner command; GNU tools (``cp``, ``tee``…) permute,
so every word that looks like an option is one until ``--``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

Option = tuple[str, str | None]  # ("-u", "root"), ("--user", "root"), ("-v", None)


@dataclass(frozen=True)
class Grammar:
    """Which options take an argument, and what precedes the inner command.

    ``short_arg``: single-letter options taking an argument (glued or next word).
    ``long_arg``: ``--long`` options taking an argument (``=value`` or next word).
    ``positionals``: operands before the inner command (``timeout DURATION``).
    ``assignments``: ``NAME=value`` words may precede the command (``env``, ``sudo``).
    ``long_nargs``: ``--long`` options taking more than one argument, with their
    count (``bwrap --bind SRC DEST``); the first is recorded as the option's value.
    """

    short_arg: str = ""
    long_arg: frozenset[str] = field(default_factory=frozenset)
    positionals: int = 0
    assignments: bool = False
    long_nargs: Mapping[str, int] = field(default_factory=dict)
    #: ``--long`` options without an argument that matter to a caller
    #: (``--in-place``): named so their GNU abbreviations (``--in-pl``) resolve.
    long_flags: frozenset[str] = field(default_factory=frozenset)


def abbreviates(word: str, full: str, shortest: int) -> bool:
    """``word`` (``--name`` or ``--name=v``) is ``full`` or a getopt_long
    abbreviation of it at least ``shortest`` characters long (``--compress``)."""
    name = word.partition("=")[0]
    return len(name) >= shortest and full.startswith(name)


def is_assignment(word: str) -> bool:
    """``NAME=value`` with a valid shell name (what ``env`` and ``sudo`` accept)."""
    name, eq, _ = word.partition("=")
    return (
        bool(eq)
        and bool(name)
        and (name[0].isalpha() or name[0] == "_")
        and (name.replace("_", "a").isalnum())
    )


def _expand(name: str, grammar: Grammar) -> list[str]:
    """The long options ``name`` stands for: itself, or what it abbreviates.

    getopt_long (and argparse) accept any unambiguous prefix: ``--targ`` is
    ``--target-directory``, ``--sig`` is ``--signal``. A prefix of several known
    options is read as each of them (the tool would refuse it as ambiguous;
    reading more only adds findings and readings).
    """
    known = grammar.long_arg | grammar.long_flags | grammar.long_nargs.keys()
    if name in known or len(name) < 3:
        return [name]
    return sorted(full for full in known if full.startswith(name)) or [name]


def _arity(grammar: Grammar, names: Sequence[str]) -> int:
    """How many words follow the option as its arguments (the most of ``names``)."""
    counts = [grammar.long_nargs.get(n, 1 if n in grammar.long_arg else 0) for n in names]
    return max(counts, default=0)


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


def scan_prefix(args: Sequence[str], grammar: Grammar) -> tuple[int, list[Option], list[int]]:
    """Options before the first operand (``args[0]`` is the command itself).

    Returns the index of the inner command, the options seen, and the indices of
    words consumed as option arguments or positionals: a grammar mistake there
    could hide the real command, so callers also try the command starting at each.
    That is also why long options are read with getopt_long abbreviations here,
    even for a wrapper that takes none: a word wrongly read as an argument is
    still tried as the inner command.
    """
    options: list[Option] = []
    consumed: list[int] = []
    i, n = 1, len(args)
    while i < n:
        word = args[i]
        if word == "--":
            i += 1
            break
        if len(word) > 1 and word.startswith("-"):
            after = _one(args, i, grammar, options)
            consumed.extend(range(i + 1, min(after, n)))
            i = after
            continue
        if grammar.assignments and is_assignment(word):
            i += 1
            continue
        break
    for _ in range(grammar.positionals):
        if i < n:
            consumed.append(i)
            i += 1
    return i, options, consumed


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
