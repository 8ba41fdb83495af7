"""Gemini CLI policy-engine TOML → shellgate rules.

The format (https://geminicli.com/docs/reference/policy-engine/): ``[[rule]]``
tables with ``toolName``, ``decision`` (``allow``, ``deny``, ``ask_user``),
``priority`` (0–999) and conditions. For the shell tool, ``run_shell_command``:

* ``commandPrefix`` (a string or a list) matches a command that starts with the
  prefix followed by whitespace or the end (gemini-cli's ``buildArgsPatterns``):
  ``commandPrefix = "git status"`` is shellgate's ``git status *``;
* ``commandRegex`` is a regex matched from the start of the command (and not
  anchored at its end): a literal one is a prefix without a word boundary,
  shellgate ``git*``; any other is written as ``re:(?:REGEX).*`` with a warning,
  since Gemini CLI matches it against the JSON-encoded command line and shellgate
  against each simple command's words;
* ``argsPattern`` is a regex over the JSON of all the tool's arguments: only the
  form that starts with ``"command":"`` can be read as a command regex;
* no condition at all: every shell command, shellgate ``*``.

The precedence differs: Gemini CLI takes the **highest-priority** matching rule,
shellgate the strictest. Where a higher-priority ``allow`` (or ``ask``) overlaps
a lower-priority ``deny`` (or ``ask``), shellgate will answer with the stricter
one; each such rule gets a warning naming both lines. ``modes``, ``interactive``,
``subagent`` and ``toolAnnotations`` have no shellgate counterpart: such an
allow is not imported, a deny or ask is imported unconditionally (stricter).
Rules for other tools (``read_file``, MCP servers) and ``[[safety_checker]]``
tables are not imported.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shellgate.models import STRICTNESS, Effect
from shellgate.policy.importers.common import (
    Imported,
    Matcher,
    SourceError,
    SourceRule,
    literal_regex,
    words_pattern,
)

DECISIONS: dict[str, Effect] = {"allow": "allow", "ask_user": "ask", "deny": "deny"}
SHELL_TOOL = "run_shell_command"
ALL_MODES = frozenset({"default", "autoEdit", "plan", "yolo"})
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(rule|safety_checker)[ \t]*\]\]", re.MULTILINE)
_REGEX_META = set("\\^$.|?*+()[]{}")
_ODD = set("\"'\\`$")


def _headers(text: str, name: str, count: int) -> list[int | None]:
    """The line of each ``[[name]]`` table (TOML keeps no positions)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)
             if m.group(1) == name]
    return list(lines) if len(lines) == count else [None] * count


def read(file: Path, text: str) -> Imported:
    out = Imported("gemini", file, precedence="priority")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SourceError(f"not valid TOML: {exc}") from None
    rules = data.get("rule", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise SourceError("'rule' must be an array of tables ([[rule]])")
    for key in data:
        if key not in ("rule", "safety_checker"):
            out.warn(None, f"top-level key {key!r} is not part of a policy file: ignored")
    checkers = data.get("safety_checker", [])
    count = len(checkers) if isinstance(checkers, list) else 0
    for line in _headers(text, "safety_checker", count):
        out.warn(line, "[[safety_checker]] is not imported: shellgate has no safety checkers "
                 "(its own analysis and protected-path layers always run)")
    for index, (raw, line) in enumerate(zip(rules, _headers(text, "rule", len(rules)),
                                            strict=True), start=1):
        out.rules.append(_rule(raw, line, index, out))
    _under_dropped(out)
    _precedence_warnings(out)
    if not any(r.shell for r in out.rules):
        out.warn(None, "no run_shell_command rule in this file")
    return out


def _bad(index: int, line: int | None, message: str) -> SourceError:
    return SourceError(message if line else f"rule #{index}: {message}", line)


def _strings(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value))


def _check_types(raw: dict[str, Any], index: int, line: int | None) -> None:
    """The types gemini-cli's own schema requires; anything else is bad input."""
    for key in ("toolName", "commandPrefix"):
        if key in raw and not _strings(raw[key]):
            raise _bad(index, line, f"{key} must be a string or a list of strings")
    if "modes" in raw and (isinstance(raw["modes"], str) or not _strings(raw["modes"])):
        raise _bad(index, line, "modes must be a list of strings")
    for key in ("commandRegex", "argsPattern", "mcpName", "subagent", "deny_message",
                "denyMessage"):
        if key in raw and not isinstance(raw[key], str):
            raise _bad(index, line, f"{key} must be a string")


def _rule(raw: dict[str, Any], line: int | None, index: int, out: Imported) -> SourceRule:
    decision, priority = raw.get("decision"), raw.get("priority")
    _check_types(raw, index, line)
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise _bad(index, line, f"decision {decision!r} must be allow, deny or ask_user")
    if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 999:
        raise _bad(index, line, "priority must be an integer from 0 to 999")
    effect = DECISIONS[decision]
    where = line if line else None
    tag = "" if line else f"rule #{index}: "
    tools = raw.get("toolName")
    names = [tools] if isinstance(tools, str) else list(tools or [])
    conditions = [f"{k}={raw[k]!r}" for k in ("commandPrefix", "commandRegex", "argsPattern")
                  if k in raw] or [f"toolName={tools!r}"]
    label = f"{decision} {' '.join(conditions)} priority={priority}"
    shell = "mcpName" not in raw and (not names or "*" in names or SHELL_TOOL in names)
    if not shell:
        server = f" on MCP server {raw['mcpName']!r}" if "mcpName" in raw else ""
        why = f"a rule for {tools!r}{server}"
        out.warn(where, f"{tag}{why}, not the shell: not imported (shellgate gates shell "
                 "commands)")
        return SourceRule(line, label, effect, lambda _a: False, priority=priority,
                          write=False, why_not=why, shell=False)
    others = [n for n in names if n not in (SHELL_TOOL, "*")]
    if others or "*" in names or not names:
        out.warn(where, f"{tag}applies to {others if others else 'every tool'!r} too: "
                 "only its shell part is imported")
    reason = raw.get("deny_message", raw.get("denyMessage", ""))
    rule = SourceRule(line, label, effect, lambda _a: False, reason=str(reason),
                      priority=priority)
    problems: list[tuple[str, bool]] = []  # (what differs, whether shellgate matches more)
    _condition(raw, rule, problems)
    _conditions_unsupported(raw, problems)
    broader = any(b for _, b in problems)
    if not rule.patterns or (broader and effect == "allow"):
        rule.write = False
        rule.why_not = "; ".join(p for p, _ in problems) or "no shellgate pattern"
    for problem, wider in problems:
        if rule.write:
            shown = ", ".join(repr(p) for p in rule.patterns)
            out.warn(where, f"{tag}{problem}; imported as {shown}")
        else:
            out.warn(where, f"{tag}{problem}; not imported"
                     + (" (an allow that may match more than the source)" if wider and
                        effect == "allow" else ""))
    return rule


def _conditions_unsupported(raw: dict[str, Any], problems: list[tuple[str, bool]]) -> None:
    modes = raw.get("modes") or []
    if set(modes) and not set(modes) >= ALL_MODES:
        problems.append((f"applies only in approval modes {sorted(modes)}: shellgate has no "
                         "modes", True))
    for key in ("interactive", "subagent", "toolAnnotations"):
        if key in raw:
            problems.append((f"{key} = {raw[key]!r} has no shellgate counterpart", True))
    if raw.get("allow_redirection", raw.get("allowRedirection")):
        problems.append(("allowRedirection: shellgate still asks for a redirection to a "
                         "file", False))


def _prefix_matcher(prefix: str) -> Matcher:
    def matches(argv: Sequence[str]) -> bool:
        line = " ".join(argv)
        rest = line[len(prefix):]
        return line.startswith(prefix) and (rest == "" or rest[0].isspace() or rest[0] == '"')
    return matches


def _regex_matcher(source: str) -> Matcher:
    try:
        regex = re.compile(source)
    except re.error:
        return lambda _a: False
    return lambda argv: regex.match(json.dumps(" ".join(argv))[1:-1]) is not None


def _condition(raw: dict[str, Any], rule: SourceRule,
               problems: list[tuple[str, bool]]) -> None:
    prefix, regex, args = raw.get("commandPrefix"), raw.get("commandRegex"), raw.get("argsPattern")
    if sum(x is not None for x in (prefix, regex, args)) > 1:
        raise SourceError("commandPrefix, commandRegex and argsPattern exclude each other",
                          rule.line)
    if isinstance(args, str) and args.startswith('"command":"'):
        regex = args[len('"command":"'):]
    elif args is not None:
        problems.append(("argsPattern matches the JSON of all the tool's arguments: it has "
                         "no shellgate counterpart", True))
        return
    if prefix is not None:
        _prefixes([prefix] if isinstance(prefix, str) else list(prefix), rule, problems)
    elif regex is not None:
        _regex(str(regex), rule, problems)
    else:
        rule.patterns, rule.matches = ("*",), lambda _a: True


def _prefixes(prefixes: list[str], rule: SourceRule, problems: list[tuple[str, bool]]) -> None:
    matchers = [_prefix_matcher(p) for p in prefixes]
    rule.matches = lambda argv: any(m(argv) for m in matchers)
    patterns, derived = [], []
    for prefix in prefixes:
        words = prefix.split()
        if not words:
            problems.append(("an empty commandPrefix", True))
            continue
        patterns.append(words_pattern(words, prefix=True))
        derived.append(tuple(words))
        if " ".join(words) != prefix:
            problems.append((f"commandPrefix {prefix!r} has leading, trailing or repeated "
                             "spaces: Gemini CLI matches it only before more whitespace; "
                             f"shellgate reads it as {' '.join(words)!r}", True))
        if _ODD & set(prefix):
            problems.append((f"commandPrefix {prefix!r} holds quotes, a backslash or '$': "
                             "shellgate matches the words after quote removal", True))
    rule.patterns, rule.derived = tuple(patterns), tuple(derived)


def _regex(source: str, rule: SourceRule, problems: list[tuple[str, bool]]) -> None:
    try:
        re.compile(source)
    except re.error as exc:
        problems.append((f"commandRegex {source!r} is not a regex Python reads ({exc})", True))
        return
    rule.matches = _regex_matcher(source)
    if source and not (_REGEX_META & set(source)) and not (_ODD & set(source)):
        # A literal regex is a prefix with no word boundary: "git" also matches "github".
        rule.patterns = (source + "*",) if not source.endswith(" ") else (
            "re:" + literal_regex(source) + ".*",)
        return
    rule.patterns = ("re:(?:" + source + ").*",)
    problems.append((f"commandRegex {source!r} is not a plain prefix: Gemini CLI matches it "
                     "against the JSON-encoded command line, shellgate against each simple "
                     "command's words after quote removal, so review it", False))


def _overlap(a: SourceRule, b: SourceRule) -> str:
    """``"yes"`` when two rules certainly share commands, ``"may"`` when a regex makes
    it uncertain, ``""`` when they certainly do not."""
    answer = ""
    for p in a.patterns:
        for q in b.patterns:
            if p == "*" or q == "*":
                return "yes"
            if p.startswith("re:") or q.startswith("re:"):
                answer = "may"
                continue
            x, y = p.removesuffix(" *").rstrip("*"), q.removesuffix(" *").rstrip("*")
            if x.startswith(y) or y.startswith(x):
                return "yes"
    return answer


def _under_dropped(out: Imported) -> None:
    """Do not write a rule that a stricter rule the import could not write overrides.

    In Gemini CLI a higher-priority deny (or ask) decides every command it matches;
    dropped, it leaves a lower-priority allow deciding them in shellgate, which
    would then allow what the source refused. What a dropped rule matches is not
    known (that is why it was dropped), so every less strict rule under it goes too.
    """
    rules = list(out.rules)
    for i, high in enumerate(rules):
        if not high.shell or high.write or high.effect == "allow":
            continue
        for j, low in enumerate(rules):
            ahead = high.priority > low.priority or (high.priority == low.priority and i < j)
            if (ahead and low.shell and low.write and low.patterns
                    and STRICTNESS[low.effect] < STRICTNESS[high.effect]):
                low.write = False
                low.why_not = (f"the {high.effect} at {_where(high)} (priority {high.priority}) "
                               "takes precedence over it in Gemini CLI and shellgate cannot "
                               "express that rule")
                out.warn(low.line, f"{'' if low.line else _where(low) + ': '}{low.effect} "
                         f"(priority {low.priority}) is not imported: {low.why_not}, so "
                         f"written alone this {low.effect} would let through what the source "
                         "refuses")


def _precedence_warnings(out: Imported) -> None:
    written = [r for r in out.rules if r.shell and r.write and r.patterns]
    for i, high in enumerate(written):
        beaten: list[tuple[SourceRule, str]] = []
        for j, low in enumerate(written):
            ahead = high.priority > low.priority or (high.priority == low.priority and i < j)
            if ahead and STRICTNESS[high.effect] < STRICTNESS[low.effect]:
                overlap = _overlap(high, low)
                if overlap:
                    beaten.append((low, overlap))
        if beaten:
            lows = ", ".join(f"the {low.effect} at {_where(low)} (priority {low.priority}"
                             f"{', if they overlap' if how == 'may' else ''})"
                             for low, how in beaten)
            out.warn(high.line, f"{'' if high.line else _where(high) + ': '}{high.effect} "
                     f"(priority {high.priority}) takes precedence over {lows} in Gemini CLI; "
                     "shellgate's strictest-wins cannot express that, so commands both match "
                     f"get the stricter answer: {_fix([low for low, _ in beaten])}")


def _fix(beaten: list[SourceRule]) -> str:
    if any(low.patterns == ("*",) for low in beaten):
        return ("a catch-all is shellgate's closing default: drop it and set [policy] "
                'default = "deny" (or "ask") in the config')
    return f"write a narrower {beaten[0].effect} rule"


def _where(rule: SourceRule) -> str:
    return f"line {rule.line}" if rule.line else rule.label


__all__ = ["DECISIONS", "read"]
