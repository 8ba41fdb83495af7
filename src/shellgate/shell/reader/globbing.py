"""Pathname expansion as bash 5.2 does it, read in a real directory.

Python's ``glob`` reads patterns otherwise than bash: it knows no POSIX classes
(``[[:alpha:]]``), takes ``[^x]`` for "``^`` or ``x``", and has no
``nocaseglob``, ``globstar`` or ``nullglob``. A word the analysis reads as no
match while bash matches ``.git`` (``cp x .gi[[:alpha:]]/hooks/``) writes where
the analysis did not look, so the matching here is bash's own, per component:

* ``*`` any run of characters, ``?`` one, ``[…]`` a bracket expression: ``!``
  or ``^`` negates, a leading ``]`` is literal, ``[:class:]``, ``[=c=]``,
  ``[.c.]``, ranges by code point (bash's default ``globasciiranges``), and a
  ``[`` without its ``]`` is literal. Quoted characters are literal everywhere;
* a name that begins with ``.`` is matched only by a literal ``.`` (``dotglob``
  lifts that; ``.`` and ``..`` are never matched: ``globskipdots``);
* ``**`` alone in a component, with ``globstar``, is any number of directories
  (not through symbolic links); ``nocaseglob`` ignores case; ``nullglob`` drops a
  word without matches; ``noglob`` (``set -f``) reads the word as written.

Matching is a two-pointer scan (no regular expression): linear backtracking to
the last ``*`` only, so a long pattern costs no more than its length times the
name's.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Matches past this and the glob is not read (a finding).
MAX_MATCHES = 1024
#: Directories ``**`` may walk through before the glob is not read.
MAX_WALK = 4096

_CLASSES: dict[str, Callable[[str], bool]] = {
    "alpha": str.isalpha, "digit": lambda c: c in "0123456789", "alnum": str.isalnum,
    "upper": str.isupper, "lower": str.islower, "space": str.isspace,
    "blank": lambda c: c in " \t", "punct": lambda c: c.isprintable() and not c.isalnum()
    and not c.isspace() and unicodedata.category(c).startswith(("P", "S")),
    "print": str.isprintable, "graph": lambda c: c.isprintable() and not c.isspace(),
    "cntrl": lambda c: unicodedata.category(c) == "Cc",
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "word": lambda c: c.isalnum() or c == "_",
}  # fmt: skip


class TooMany(Exception):
    """More matches (or directories to walk) than a decision reads."""


@dataclass(frozen=True)
class _Set:
    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[str, ...]

    def matches(self, char: str, fold: bool) -> bool:
        # nocaseglob folds the characters and ranges listed, not the classes.
        candidates = {char, char.lower(), char.upper()} if fold else {char}
        hit = any(
            c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges) for c in candidates
        ) or any(_CLASSES[name](char) for name in self.classes)
        return hit != self.negated


#: A pattern token: ``"*"``, ``"?"``, a literal character (``("lit", c)``) or a set.
Token = str | tuple[str, str] | _Set
STAR, ANY = "*", "?"


def _bracket(chars: Sequence[tuple[str, bool]], start: int) -> tuple[_Set, int] | None:
    """The bracket expression opening at ``start``, and the index after it
    (``None``: no closing ``]``, so the ``[`` is literal)."""
    i = start + 1
    negated = False
    if i < len(chars) and chars[i][0] in "!^" and not chars[i][1]:
        negated, i = True, i + 1
    members: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list[str] = []
    first = True
    while i < len(chars):
        char, quoted = chars[i]
        if char == "]" and not quoted and not first:
            return _Set(negated, frozenset(members), tuple(ranges), tuple(classes)), i + 1
        first = False
        if char == "[" and not quoted and i + 1 < len(chars) and chars[i + 1][0] in ":=." \
                and not chars[i + 1][1]:  # fmt: skip
            kind = chars[i + 1][0]
            end = next((j for j in range(i + 2, len(chars) - 1)
                        if chars[j][0] == kind and chars[j + 1][0] == "]"), None)  # fmt: skip
            if end is not None:
                inner = "".join(c for c, _ in chars[i + 2 : end])
                if kind == ":":
                    if inner not in _CLASSES:
                        return None  # bash: an unknown class matches nothing; read as no set
                    classes.append(inner)
                else:
                    members.update(inner[:1])
                i = end + 2
                continue
        if i + 2 < len(chars) and chars[i + 1] == ("-", False) and \
                not (chars[i + 2][0] == "]" and not chars[i + 2][1]):  # fmt: skip
            ranges.append((char, chars[i + 2][0]))
            i += 3
            continue
        members.add(char)
        i += 1
    return None


def _tokens(chars: Sequence[tuple[str, bool]]) -> tuple[list[Token], bool]:
    """A component's tokens, and whether it holds anything to match (a glob)."""
    tokens: list[Token] = []
    magic = False
    i = 0
    while i < len(chars):
        char, quoted = chars[i]
        if not quoted and char in "*?":
            if not (char == "*" and tokens and tokens[-1] == STAR):
                tokens.append(STAR if char == "*" else ANY)
            magic, i = True, i + 1
            continue
        if not quoted and char == "[":
            found = _bracket(chars, i)
            if found is not None:
                tokens.append(found[0])
                magic, i = True, found[1]
                continue
        tokens.append(("lit", char))
        i += 1
    return tokens, magic


def _one(token: Token, char: str, fold: bool) -> bool:
    if token == ANY:
        return True
    if isinstance(token, _Set):
        return token.matches(char, fold)
    assert isinstance(token, tuple)
    return token[1] == char or (fold and token[1].casefold() == char.casefold())


def matches(tokens: Sequence[Token], name: str, *, fold: bool = False, dots: bool = False) -> bool:
    """``name`` matched by a component's ``tokens`` (a leading ``.`` only by a literal one)."""
    if name in (".", ".."):
        return False
    if name.startswith(".") and not dots and tokens[:1] != [("lit", ".")]:
        return False
    t = n = 0
    star_t, star_n = -1, 0
    while n < len(name):
        if t < len(tokens) and tokens[t] == STAR:
            star_t, star_n, t = t, n, t + 1
        elif t < len(tokens) and _one(tokens[t], name[n], fold):
            t, n = t + 1, n + 1
        elif star_t >= 0:
            star_n += 1
            t, n = star_t + 1, star_n
        else:
            return False
    while t < len(tokens) and tokens[t] == STAR:
        t += 1
    return t == len(tokens)


def _entries(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as found:
            return [entry.name for entry in found]
    except OSError:
        return []


def _subdirectories(root: str, base: str, walked: list[int]) -> list[str]:
    """``base`` and every directory below it, not through links, not hidden (``**``)."""
    out = [base]
    stack = [base]
    while stack:
        current = stack.pop()
        walked[0] += 1
        if walked[0] > MAX_WALK:
            raise TooMany
        try:
            with os.scandir(os.path.join(root, current) if current else root or ".") as found:
                for entry in found:
                    if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        path = f"{current}{entry.name}/"
                        out.append(path)
                        stack.append(path)
        except OSError:
            continue
    return out


def expand(
    value: str, mask: str, root: str, options: frozenset[str] = frozenset()
) -> list[str] | None:
    """The words bash makes of the unquoted glob ``value`` in directory ``root``,
    sorted as the C locale sorts (``mask`` holds ``_`` for each quoted character):
    the word itself when nothing matches (``[]`` with ``nullglob``); ``None`` when
    there are too many to read."""
    if "noglob" in options:
        return [value]
    chars = [(c, m == "_") for c, m in zip(value, mask, strict=True)]
    components: list[list[tuple[str, bool]]] = [[]]
    for char, quoted in chars:
        if char == "/":
            components.append([])
        else:
            components[-1].append((char, quoted))
    fold, dots = "nocaseglob" in options, "dotglob" in options
    star = "globstar" in options
    partial: list[str]
    # Each partial match: the text so far ("" or ending in "/"), read from root.
    partial = [""]
    walked = [0]
    try:
        for index, component in enumerate(components):
            last = index == len(components) - 1
            tokens, magic = _tokens(component)
            literal = "".join(c for c, _ in component)
            nxt: list[str] = []
            if last and not component:  # a trailing slash: directories only
                nxt = [p for p in partial if os.path.isdir(os.path.join(root, p) or "/")]
            elif not magic:
                for p in partial:
                    path = p + literal
                    if last:
                        if os.path.lexists(os.path.join(root, path)):
                            nxt.append(path)
                    elif not literal or os.path.isdir(os.path.join(root, path) or "/"):
                        nxt.append(path + "/")
            elif star and not last and component == [("*", False), ("*", False)]:
                for p in partial:
                    nxt.extend(_subdirectories(root, p, walked))
            else:
                for p in partial:
                    where = os.path.join(root, p) if p else root
                    for name in sorted(_entries(where)):
                        if not matches(tokens, name, fold=fold, dots=dots):
                            continue
                        path = p + name
                        if last:
                            nxt.append(path)
                        elif os.path.isdir(os.path.join(root, path)):
                            nxt.append(path + "/")
                        if len(nxt) > MAX_MATCHES:
                            raise TooMany
            partial = nxt
            if not partial:
                break
    except TooMany:
        return None
    if not any(_tokens(c)[1] for c in components):
        return [value]  # nothing to match after all (`[` without its `]`)
    found = [p for p in partial if p]  # `**/` matching no directory is no word
    if not found:
        return [] if "nullglob" in options else [value]
    return sorted(found)


@dataclass(frozen=True, slots=True)
class WordRead:
    """An unquoted glob word as the command will see it: its ``words`` (the matches,
    or the word itself when none match), the ``matched`` names (empty when none),
    the ``directory`` they were read in, and a ``finding`` when a match begins with
    ``-`` (the command would read it as an option)."""

    words: tuple[str, ...]
    matched: tuple[str, ...]
    directory: str
    finding: str | None


def read_word(
    value: str, mask: str, shown: str, cwd: str, options: frozenset[str] = frozenset()
) -> WordRead | None:
    """:func:`expand` of ``value`` in ``cwd``, with what the analysis needs of it;
    ``None`` where the matches are too many to read (a finding for the caller)."""
    found = expand(value, mask, cwd, options)
    if found is None:
        return None
    unquoted = [i for i, m in enumerate(mask) if m in "*?["]
    base = value[: unquoted[0]] if unquoted else value
    directory = os.path.normpath(os.path.join(cwd, os.path.dirname(base)))
    matched = tuple(found) if found != [value] else ()
    dashed = next((m for m in matched if m.startswith("-")), None)
    finding = None if dashed is None else \
        f"glob '{shown}' matches '{dashed[:40]}', which the command would read as an option"
    return WordRead(tuple(found), matched, directory, finding)
