"""What every importer produces, and the pattern text they share.

An importer reads one source file and returns an :class:`Imported`: the source's
rules in file order (each with the shellgate patterns that express it, or none),
the source's own examples, and a :class:`Note` for everything that cannot be
expressed faithfully. It never writes anything; :mod:`.writer` does.

Each :class:`SourceRule` also carries ``matches``: the *source's* reading of the
rule, used to say what the source itself would decide for an example, so a test
row states the source's answer and a difference from shellgate's is a warning,
never a silently rewritten expectation.

The writing principle (fail closed): an ``allow`` is written only when its
shellgate pattern matches nothing the source's rule would not (up to quoting:
shellgate matches a command's words after quote removal). A deny or ask is
always written, even when the translation is only close, because a deny that
matches a little more or less is still better than none; a warning says how it
differs. A rule that is not written appears in ``policy.csv`` as a
``# not imported`` comment, so nothing is dropped silently.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shellgate.models import STRICTNESS, Effect

#: How many patterns one rule's alternatives may expand into before a regex is
#: written instead (Codex ``["git", ["push", "fetch"]]`` is two patterns).
MAX_EXPANSION = 64

Matcher = Callable[[Sequence[str]], bool]


class SourceError(ValueError):
    """The source file cannot be read or is not valid in its own format (exit 2)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Note:
    """One warning: ``line`` in the source file (``None``: the file as a whole)."""

    line: int | None
    message: str


@dataclass
class SourceRule:
    """One rule of the source, and how (or whether) shellgate expresses it.

    ``patterns`` empty, or ``write`` false, means the rule is written as a
    ``# not imported`` comment; ``why_not`` says why. ``shell`` false means the
    rule is not about shell commands at all (it never decides an example).
    """

    line: int | None
    label: str
    effect: Effect
    matches: Matcher
    patterns: tuple[str, ...] = ()
    reason: str = ""
    priority: int = 0
    write: bool = True
    why_not: str = ""
    shell: bool = True
    derived: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Example:
    """A command the source itself gives as an example (Codex ``match``/``not_match``)."""

    line: int | None
    argv: tuple[str, ...]
    origin: str


@dataclass
class Imported:
    """Everything read from one source file."""

    source: str
    file: Path
    rules: list[SourceRule] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    #: The source's precedence: ``"strictest"`` (deny > ask > allow, as shellgate)
    #: or ``"priority"`` (Gemini CLI: the highest-priority matching rule wins).
    precedence: str = "strictest"

    def warn(self, line: int | None, message: str) -> None:
        self.notes.append(Note(line, message))

    def decide(self, argv: Sequence[str]) -> SourceRule | None:
        """The source's own deciding rule for ``argv``, or ``None`` when no rule matches."""
        hits = [r for r in self.rules if r.shell and r.matches(argv)]
        if not hits:
            return None
        if self.precedence == "priority":
            # Highest priority; among equals, the first in the file (a stable sort).
            return max(hits, key=lambda r: (r.priority, -self.rules.index(r)))
        return max(hits, key=lambda r: STRICTNESS[r.effect])


_META = re.compile(r"([.^$*+?{}\[\]\\|()])")


def literal_regex(text: str) -> str:
    """``text`` as a regex matching exactly it (only metacharacters escaped, unlike
    :func:`re.escape`, so the pattern stays readable in ``policy.csv``)."""
    return _META.sub(r"\\\1", text)


def words_pattern(words: Sequence[str], *, prefix: bool) -> str:
    """The shellgate pattern for exactly ``words`` (``prefix``: with any arguments after).

    Plain text when every word is plain (``git diff *``; a word holding single
    spaces is plain too, since shellgate matches the words joined by spaces);
    otherwise a ``re:`` pattern that reads each word literally (a word with ``*``,
    an empty word, other whitespace, a first word that would read as ``re:``).
    """
    plain = all(w and "*" not in w and w == " ".join(w.split(" ")) and w.strip() == w
                and not any(c.isspace() and c != " " for c in w) and "  " not in w
                for w in words)
    if plain and words and not words[0].startswith("re:"):
        return " ".join(words) + (" *" if prefix else "")
    source = " ".join(literal_regex(w) for w in words)
    return "re:" + source + ("(?: .*)?" if prefix else "")


def prefix_matcher(words: Sequence[str]) -> Matcher:
    """argv starts with exactly these words (token-wise)."""
    want = tuple(words)
    return lambda argv: tuple(argv[: len(want)]) == want


def has_space(word: str) -> bool:
    return any(c.isspace() for c in word)


def command_line(argv: Sequence[str]) -> str:
    """The shell line a test row runs for ``argv`` (quoted where needed)."""
    return shlex.join(argv)


def one_line(text: str) -> str:
    """``text`` with every line break the policy loader reads lines at made a space.

    The loader splits ``policy.csv`` with :meth:`str.splitlines`, which also breaks at
    ``\\u2028``, ``\\x85``, ``\\x0b`` and the like: source text quoted in a comment
    or a field must not end that line, or the rest of it would be read as a row.
    """
    return " ".join(text.splitlines()) if text else text


def csv_field(text: str) -> str:
    """One ``policy.csv`` field, double-quoted when it holds a comma or a quote."""
    text = " ".join(text.split()) if one_line(text) != text else text
    if any(c in text for c in ',"') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


__all__ = [
    "MAX_EXPANSION",
    "Example",
    "Imported",
    "Matcher",
    "Note",
    "SourceError",
    "SourceRule",
    "command_line",
    "csv_field",
    "has_space",
    "literal_regex",
    "one_line",
    "prefix_matcher",
    "words_pattern",
]
