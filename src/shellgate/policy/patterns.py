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
WRITE_PREFIX = "write:"
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
    kind: str  # "exact" | "prefix" | "glob" | "regex" | "write" (a file, not a command)
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

    @property
    def is_write(self) -> bool:
        """A ``write:GLOB`` rule: it decides files written, never a command."""
        return self.kind == "write"

    def matches(self, command: str) -> bool:
        """Whether the whole of ``command`` matches (never a substring of it).

        A write pattern matches a write's text (:func:`write_texts`) only."""
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
    if text.startswith(WRITE_PREFIX):
        return Pattern(text, "write", None, write_regex(text[len(WRITE_PREFIX) :]), None)
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


#: What a write's text starts with when it is matched against the rules. A NUL
#: never reaches the rules from a command (the input guard denies it), so no
#: command can match a write rule, and no write a command rule.
WRITE_MARK = "\x00write:"


def write_texts(relative: str | None, absolute: str) -> tuple[str, ...]:
    """The texts a write is matched as: workspace-relative (when inside it) and absolute."""
    if relative is None:
        return (WRITE_MARK + absolute,)
    return (WRITE_MARK + relative, WRITE_MARK + absolute)


def write_regex(glob: str) -> re.Pattern[str]:
    """A gitignore-style GLOB as a regex over :func:`write_texts`.

    Relative to the workspace root unless it starts with ``/``; without a ``/``
    but a trailing one it matches at any depth (``*.lock``); ``**`` spans
    directories (``**/x``, ``a/**/b``, ``src/**``); ``*``, ``?`` and ``[…]`` stay
    within one name; a trailing ``/`` is a directory. Like gitignore, a pattern
    matching a directory matches everything below it. A relative pattern never
    matches an absolute text and the other way round.
    """
    if not glob or glob.strip() != glob:
        raise PatternError(f"write pattern {glob!r}: empty or with blanks around it")
    if glob.startswith("!"):
        raise PatternError(
            f"write pattern {glob!r}: negation is not supported (write a deny or ask rule)"
        )
    absolute = glob.startswith("/")
    body = glob.rstrip("/") or "/"
    if not absolute and "/" not in body:
        body = "**/" + body  # gitignore: a bare name matches at any depth
    elif not absolute:
        body = body.lstrip("/")
    if any(part in (".", "..") for part in body.split("/")):
        raise PatternError(f"write pattern {glob!r}: '.' and '..' are not path names here")
    source = _glob_path(body)
    tail = "" if body.endswith("**") else "(?:/.*)?"  # a directory matched: all below it
    head = re.escape(WRITE_MARK) + ("" if absolute else "(?!/)")
    try:
        return re.compile(head + source + tail, _FLAGS)
    except re.error as exc:
        raise PatternError(f"write pattern {glob!r}: {exc}") from exc


def _glob_path(glob: str) -> str:
    """The regex of a path glob: ``**`` spans names, ``*``/``?``/``[…]`` one name."""
    out: list[str] = []
    parts = glob.split("/")
    last = len(parts) - 1
    for index, part in enumerate(parts):
        if part == "**":
            if index == last:
                out.append("[^/].*" if index == 0 else ".+")  # everything below
            else:
                out.append("(?:[^/]+/)*")  # zero or more whole names
            continue
        out.append(_glob_name(part))
        if index != last:
            out.append("/")
    return "".join(out)


def _glob_name(part: str) -> str:
    out: list[str] = []
    i, n = 0, len(part)
    while i < n:
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                inner = part[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                out.append("(?<!/)")
                i = end
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(part[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
