"""Claude Code ``settings.json`` ``permissions`` → shellgate rules.

The format (https://code.claude.com/docs/en/permissions): ``permissions`` holds
``allow``, ``ask`` and ``deny`` lists of rule strings, ``Tool`` or
``Tool(specifier)``. Claude Code evaluates deny, then ask, then allow, and the
first list that matches decides: that is shellgate's strictest-wins, so the lists
map one to one. For the ``Bash`` tool the specifier is a command pattern:

* ``Bash`` and ``Bash(*)`` — every command: shellgate ``*``;
* ``Bash(npm run build)`` — exactly that command: ``npm run build``;
* ``Bash(git diff *)`` — a trailing `` *`` after a space, the only wildcard, is a
  word boundary and optional: ``git diff`` with any arguments or none. shellgate's
  ``git diff *`` means the same;
* ``Bash(git diff:*)`` — the legacy suffix form, documented as equivalent to
  ``git diff *`` (and only recognised at the end);
* ``*`` anywhere else — any run of characters, spaces included, as a shellgate
  glob (``Bash(ls*)`` also matches ``lsof`` in both). With several wildcards a
  trailing `` *`` is not optional in Claude Code, so such a pattern is written as
  a ``re:`` pattern that says exactly that; ``\\*`` is a literal star.

Not expressible: other tools (``Read(…)``, ``Edit(…)``, ``WebFetch``, MCP tools),
specifiers naming a compound command or a redirection (shellgate judges each
simple command on its own), and quoted arguments holding spaces.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from shellgate.models import Effect
from shellgate.policy.importers.common import (
    Imported,
    Matcher,
    SourceError,
    SourceRule,
    has_space,
    literal_regex,
    words_pattern,
)

LISTS: tuple[tuple[str, Effect], ...] = (("deny", "deny"), ("ask", "ask"), ("allow", "allow"))
_RULE = re.compile(r"([A-Za-z][\w.\-]*)(?:\((.*)\))?", re.DOTALL)
_OPERATORS = re.compile(r"\|\||&&|[|;&<>`]|\$\(")
_LITERAL_STAR = "\x00"


class Translation:
    """A Bash specifier read as shellgate sees it (see the module docstring)."""

    def __init__(self, pattern: str | None, matches: Matcher, problem: str = "",
                 broader: bool = False, derived: tuple[str, ...] | None = None) -> None:
        self.pattern = pattern
        self.matches = matches
        self.problem = problem
        self.broader = broader
        self.derived = derived


def _glob_regex(tokens: Sequence[str], *, optional_tail: bool) -> str:
    """Claude Code's reading of a wildcard pattern as a regex over the command."""
    text = " ".join(tokens)
    if optional_tail and text.endswith(" *"):
        return _glob_regex([text[:-2]], optional_tail=False) + "(?: .*)?"
    parts = (literal_regex(p).replace(_LITERAL_STAR, r"\*") for p in text.split("*"))
    return ".*".join(parts)


def _never(_argv: Sequence[str]) -> bool:
    return False


def translate(spec: str) -> Translation:
    """Read one ``Bash(…)`` specifier (the text between the parentheses)."""
    if spec.strip() in ("", "*"):
        return Translation("*", lambda _argv: True)
    if _OPERATORS.search(spec):
        return Translation(None, _never, "names a compound command, a pipe or a redirection: "
                           "shellgate judges each simple command on its own (write one "
                           "rule per command)")
    text = spec[:-2] + " *" if spec.endswith(":*") else spec
    try:
        tokens = shlex.split(text.replace("\\*", _LITERAL_STAR))
    except ValueError as exc:
        return Translation(None, _never, f"cannot be read as a command ({exc})")
    if not tokens:
        return Translation(None, _never, "names no command")
    stars = sum(t.count("*") for t in tokens)
    problem = ""
    if any(has_space(t) for t in tokens):
        problem = ("a quoted argument holds a space: shellgate matches the words after quote "
                   "removal, so the pattern also matches them as separate arguments")
    plain = [t.replace(_LITERAL_STAR, "*") for t in tokens]
    if stars == 0:
        want = " ".join(plain)
        return Translation(words_pattern(plain, prefix=False),
                           lambda argv: " ".join(argv) == want, problem, bool(problem),
                           tuple(plain))
    if stars == 1 and tokens[-1] == "*" and len(tokens) > 1:
        words = plain[:-1]
        head = " ".join(words)
        return Translation(words_pattern(words, prefix=True),
                           lambda argv: " ".join(argv) == head
                           or " ".join(argv).startswith(head + " "),
                           problem, bool(problem), tuple(words))
    regex = re.compile(_glob_regex(tokens, optional_tail=stars == 1), re.DOTALL)
    glob = " ".join(tokens)
    # shellgate reads a final " *" as optional whatever the other stars; Claude Code
    # only when it is the one wildcard, so several stars need the exact regex.
    if _LITERAL_STAR in glob or (glob.endswith(" *") and stars > 1):
        pattern = "re:" + regex.pattern
    else:
        pattern = glob
    return Translation(pattern, lambda argv: regex.fullmatch(" ".join(argv)) is not None,
                       problem, bool(problem))


def suggest(pattern: str) -> str | None:
    """The shellgate pattern for a Claude Code rule written into ``policy.csv``.

    ``Bash(git diff:*)`` and ``git diff:*`` → ``git diff *``; ``None`` when the
    text is neither form or has no shellgate equivalent.
    """
    match = _RULE.fullmatch(pattern)
    if match and match.group(1) == "Bash" and match.group(2) is not None:
        spec = match.group(2)
    elif pattern.endswith(":*") and not pattern.startswith("re:"):
        spec = pattern
    else:
        return None
    return translate(spec).pattern


def _entry_lines(text: str, entries: list[str], key: str) -> list[int | None]:
    """Each entry's line in the file (the JSON module keeps no positions).

    Searches for each entry's JSON spelling after the list's key, in order; an
    entry written with other escapes falls back to the key's line.
    """
    found = re.search(rf'"{key}"\s*:', text)
    start = found.start() if found else -1
    key_line = text.count("\n", 0, start) + 1 if start >= 0 else None
    lines: list[int | None] = []
    cursor = max(start, 0)
    for entry in entries:
        hit = -1
        for spelling in (json.dumps(entry), json.dumps(entry, ensure_ascii=False)):
            hit = text.find(spelling, cursor)
            if hit >= 0:
                break
        if hit < 0:
            lines.append(key_line)
            continue
        lines.append(text.count("\n", 0, hit) + 1)
        cursor = hit + 1
    return lines


def _permissions(text: str) -> dict[str, object]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"not valid JSON: {exc.msg}", exc.lineno) from None
    if not isinstance(data, dict):
        raise SourceError("a settings file is a JSON object")
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SourceError("'permissions' must be an object")
    return permissions


def read(file: Path, text: str) -> Imported:
    """Read a Claude Code settings file (``settings.json``, ``settings.local.json``,
    ``managed-settings.json``)."""
    out = Imported("claude-code", file)
    permissions = _permissions(text)
    if not permissions:
        out.warn(None, "no 'permissions' rules in this file")
    mode = permissions.get("defaultMode")
    if mode not in (None, "default", "acceptEdits"):
        out.warn(None, f"defaultMode {mode!r} is not imported: the answer for commands no "
                 "rule decides is shellgate's closing default, [policy] default in the "
                 "config (ask or deny, never allow)")
    for key, effect in LISTS:
        entries = permissions.get(key, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise SourceError(f"'permissions.{key}' must be a list of strings")
        for entry, line in zip(entries, _entry_lines(text, entries, key), strict=True):
            out.rules.append(_rule(entry, effect, line, out))
    out.rules.sort(key=lambda r: r.line or 0)
    return out


def _rule(entry: str, effect: Effect, line: int | None, out: Imported) -> SourceRule:
    label = f"{effect} {entry}"
    match = _RULE.fullmatch(entry.strip())
    if not match or match.group(1) != "Bash":
        tool = match.group(1) if match else ""
        why = f"'{entry}' is not a Bash rule"
        hint = ""
        if tool == "Read" and effect != "allow":
            hint = ("; to keep the agent from reading that path through the shell, add it "
                    "to [policy] secret_paths")
        out.warn(line, f"{why}: not imported (shellgate gates shell commands){hint}")
        return SourceRule(line, label, effect, _never, write=False, why_not=why, shell=False)
    tr = translate(match.group(2) if match.group(2) is not None else "*")
    rule = SourceRule(line, label, effect, tr.matches,
                      patterns=(tr.pattern,) if tr.pattern else (),
                      derived=(tr.derived,) if tr.derived else ())
    if tr.pattern is None:
        rule.write, rule.why_not = False, tr.problem
        out.warn(line, f"'{entry}' {tr.problem}: not imported")
    elif tr.problem and effect == "allow" and tr.broader:
        rule.write, rule.why_not = False, tr.problem
        out.warn(line, f"'{entry}': {tr.problem}; an allow that may match more than the "
                 "source is not imported")
    elif tr.problem:
        out.warn(line, f"'{entry}': {tr.problem}; imported as '{tr.pattern}'")
    return rule


__all__ = ["read", "suggest", "translate"]
