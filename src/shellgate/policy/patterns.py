"""The pattern language of ``policy.csv`` rules, compiled once at load time.

A pattern matches one *whole* normalised simple command (argv joined by single
spaces), never a part of it:

* ``git status`` — exactly that string.
* ``git status *`` — that command with any arguments or none; the space before the
  final ``*`` is a word boundary (``ls *`` matches ``ls`` and ``ls -la``, never ``lsof``).
* ``*`` anywhere else — any run of characters, newlines included.
* ``re:<regex>`` — a Python regular expression that must match the *whole* command.

Anchoring is the security invariant here (casbin's ``keyMatch``/``regexMatch`` are
unanchored, so ``^git status`` also matches ``git status\\nrm -rf /``). Every pattern
is compiled to a :func:`re.fullmatch` with ``DOTALL``:

* ``fullmatch`` leaves no unmatched tail, so a newline inside an argument cannot end
  a match early (``$`` before a trailing ``\\n`` still leaves the ``\\n`` unconsumed,
  and a ``(?m)`` flag only changes what the zero-width ``^``/``$`` assert);
* ``DOTALL`` makes ``.`` and ``*`` run over newlines, so a deny rule such as
  ``rm -rf *`` cannot be dodged by putting a newline into an argument.

Each compiled pattern also knows its *key*: the first word every matching command
must start with, or ``None`` when it cannot be known. The policy index buckets rules
by that key; a wrong key would make the index disagree with plain casbin, so a key is
only derived from text that every match provably begins with.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

REGEX_PREFIX = "re:"
_FLAGS = re.DOTALL


class PatternError(ValueError):
    """A pattern that cannot be compiled; the message is for the policy author."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """One compiled pattern.

    ``exact`` is set for star-free patterns (a string compare) and ``prefix`` for the
    plain ``cmd *`` form (the command alone or followed by a space); both are the
    same test as their regex, only cheaper. Everything else uses ``regex``.
    """

    text: str
    kind: str  # "exact" | "prefix" | "glob" | "regex"
    exact: str | None
    regex: re.Pattern[str] | None
    key: str | None
    prefix: str | None = None

    def matches_canonical(self, canonical: str) -> bool:
        """Whether a segment's canonical form (``rm -f -r x``) matches this pattern
        read as a command by the same catalog (``rm -rf *``): its options required,
        in any order and spelling, among others. A ``re:`` pattern, or one whose
        command has no catalog entry, matches the canonical text as it is."""
        if self.kind != "regex":
            regex = canonical_regex(self.text)
            if regex is not None:
                return regex.fullmatch(canonical) is not None
        return self.matches(canonical)

    def matches(self, command: str) -> bool:
        """Whether the whole of ``command`` matches (never a substring of it)."""
        if self.exact is not None:
            return command == self.exact
        if self.prefix is not None:
            return command == self.prefix or command.startswith(self.prefix + " ")
        assert self.regex is not None
        return self.regex.fullmatch(command) is not None


def first_word(command: str) -> str:
    """The index key of a command: everything before its first space."""
    return command.split(" ", 1)[0]


def glob_to_regex(text: str) -> str:
    """Translate the glob forms (``cmd *`` and ``*``) to an equivalent regex source."""
    if text.endswith(" *"):
        # "cmd *": the command alone, or the command, one space and anything.
        return glob_to_regex(text[:-2]) + "(?: .*)?"
    return ".*".join(re.escape(part) for part in text.split("*"))


def _literal_prefix(source: str) -> str:
    """The literal text every full match of ``source`` begins with ("" if unknown).

    Reads the parsed regex (the stdlib's own parser, so the answer is the one ``re``
    itself compiles) and collects top-level ``LITERAL`` items until the first other
    item. A quantifier binds to the item before it, so a collected literal is always
    mandatory. Case-insensitive patterns give no prefix: their literals are not exact.
    """
    try:
        parser: Any = importlib.import_module("re._parser")
        parsed = parser.parse(source, _FLAGS)
    except Exception:  # any surprise in a private module only costs indexing, not safety
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    literal = parser.LITERAL
    chars: list[str] = []
    for op, arg in parsed:
        if op is not literal:
            break
        chars.append(chr(arg))
    return "".join(chars)


def _key_from_prefix(prefix: str) -> str | None:
    return first_word(prefix) if " " in prefix else None


@lru_cache(maxsize=65536)
def canonical_regex(text: str) -> re.Pattern[str] | None:
    """The canonical reading of a plain pattern, compiled on first use (cached):
    policy load does not pay for it, and only deny and ask rules ever ask."""
    from shellgate.shell.catalog.patterns import pattern_source

    source = pattern_source(text)
    return re.compile(source, _FLAGS) if source is not None else None


@lru_cache(maxsize=65536)
def compile_pattern(text: str) -> Pattern:
    """Compile one rule pattern; raises :class:`PatternError` with a readable reason.

    Cached by text: large sets repeat patterns across roles and tenants, and a
    :class:`Pattern` is immutable, so sharing one is safe.
    """
    if text == "":
        raise PatternError("empty pattern (use '*' to match every command)")
    if text.startswith(REGEX_PREFIX):
        source = text[len(REGEX_PREFIX) :]
        if source == "":
            raise PatternError("empty regular expression after 're:'")
        try:
            regex = re.compile(source, _FLAGS)
        except re.error as exc:
            raise PatternError(f"bad regular expression {source!r}: {exc}") from exc
        return Pattern(text, "regex", None, regex, _key_from_prefix(_literal_prefix(source)))
    if "*" not in text:
        return Pattern(text, "exact", text, None, first_word(text))
    key = _key_from_prefix(text.split("*", 1)[0])
    if text.endswith(" *") and "*" not in text[:-2]:
        return Pattern(text, "prefix", None, None, key, prefix=text[:-2])
    return Pattern(text, "glob", None, re.compile(glob_to_regex(text), _FLAGS), key)
