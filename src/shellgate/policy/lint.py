"""``shellgate policy lint``: rules that load but cannot mean what their author wants.

Findings, each naming ``<file>:<line>``:

* every load problem (bad CSV, misspelled effect, bad regex, wrong column count),
  all of them rather than only the first;
* a rule **shadowed** by a stricter one: whenever it matches, a stricter rule for
  the same subject (or a role the subject always holds there) and tenant matches
  too, so it can never decide;
* **duplicates**: the same subject, tenant and pattern twice;
* **unreachable** rules: a rule for a role that no ``g`` row grants in its tenant;
* patterns that **can never match** as written, or match far more than they seem to
  (two spaces in a row, a ``*`` glued to a word, an allow for every command);
* a **Claude Code rule** pasted as a pattern (``Bash(git diff:*)``, ``git diff:*``):
  the finding names the shellgate pattern that means the same (``git diff *``);
* an allow of a program that can run, load or write through its options and
  that the command catalog has no entry for (the capability table,
  :mod:`shellgate.policy.unmodelled`): what it runs is not checked.

Subsumption is decided only where it is certain (exact and glob patterns, and a
regex over an exact pattern); anything else is not reported, so a finding is
always real.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from shellgate.models import STRICTNESS
from shellgate.policy.index import PolicyIndex
from shellgate.policy.loader import PolicySource, Problem, Rule, claude_pattern, read_policy_set
from shellgate.policy.patterns import Pattern
from shellgate.policy.unmodelled import lint_message


def covers(wide: Pattern, narrow: Pattern) -> bool:
    """Whether ``wide`` certainly matches every command ``narrow`` matches.

    For a glob ``wide`` this reads ``narrow``'s ``*`` as a literal character: glob
    literals never contain ``*``, so that character can only be consumed by one of
    ``wide``'s own wildcards, which would consume any replacement of it as well.
    """
    if narrow.is_write or wide.is_write:
        return False  # gitignore globs: not compared (a finding must be certain)
    if narrow.kind == "exact":
        return wide.matches(narrow.text)
    if narrow.kind == "regex" or wide.kind in ("exact", "regex"):
        return False
    variants = [narrow.text]
    if narrow.text.endswith(" *"):
        variants.append(narrow.text[:-2])  # "cmd *" also matches the bare command
    return all(wide.matches(v) for v in variants)


def _write_findings(rule: Rule) -> list[str]:
    """``write:`` rules that mean more, or something else, than they seem to."""
    glob = rule.pattern.text[len("write:") :]
    out: list[str] = []
    if rule.effect == "allow" and glob.startswith("/") and glob.strip("/*") == "":
        out.append(f"allow rule {rule.pattern.text!r} allows writing anywhere on the machine "
                   "(protected paths aside); 'write:**' is the workspace")
    if glob.startswith("~"):
        out.append(f"write pattern {rule.pattern.text!r}: '~' is not expanded here, so it "
                   "names a directory '~' in the workspace; write the home's absolute path")
    if " " in glob and glob.split(" ")[0] in ("", "*"):
        out.append(f"write pattern {rule.pattern.text!r} has a blank: paths are matched whole")
    return out


def _pattern_findings(rule: Rule) -> list[str]:
    text, out = rule.pattern.text, []
    if rule.pattern.is_write:
        return _write_findings(rule)
    claude = claude_pattern(text) if rule.pattern.kind != "regex" else None
    if claude is not None:
        return [claude]
    if rule.pattern.kind != "regex":
        if "  " in text:
            out.append(f"pattern {text!r} has two spaces in a row: commands are argv joined "
                       "by single spaces, so it only matches arguments that contain spaces")
        for word in text.split(" "):
            if "*" in word and word != "*":
                out.append(f"pattern {text!r}: '{word}' glues '*' to a word, so it also "
                           f"matches longer words (write '{word.replace('*', ' *')}' for "
                           "a word boundary)")
                break
        if rule.effect == "allow" and rule.pattern.kind == "glob" and text.split(" ")[0] == "*":
            out.append(f"allow rule {text!r} starts with '*': it allows commands of any name")
    unchecked = lint_message(rule)
    if unchecked is not None:
        out.append(unchecked)
    return out


def _subject_holds(index: PolicyIndex, rule: Rule) -> set[str]:
    return set(index.names(rule.subject, rule.tenant))


def _shadow_findings(source: PolicySource) -> list[Problem]:
    index = PolicyIndex(source)
    by_key: dict[str | None, list[Rule]] = defaultdict(list)
    for rule in source.rules:
        by_key[rule.pattern.key].append(rule)
    out: list[Problem] = []
    for rule in source.rules:
        held = _subject_holds(index, rule)
        tenants = {rule.tenant, "*"}
        candidates = by_key.get(None, []) + (by_key.get(rule.pattern.key, [])
                                            if rule.pattern.key is not None else [])
        for other in candidates:
            if other is rule or other.subject not in held or other.tenant not in tenants:
                continue
            if other.pattern.is_write != rule.pattern.is_write:
                continue  # a write rule never decides a command, nor the other way round
            same = (other.subject, other.tenant, other.pattern.text) == (
                rule.subject, rule.tenant, rule.pattern.text)
            if same and other.effect == rule.effect and other.order < rule.order:
                out.append(Problem(rule.file, rule.line, f"duplicate of line {other.line}"))
                break
            if STRICTNESS[other.effect] > STRICTNESS[rule.effect] and covers(
                other.pattern, rule.pattern
            ):
                out.append(Problem(rule.file, rule.line, f"shadowed: {rule.effect} "
                           f"{rule.pattern.text!r} can never decide, because line {other.line} "
                           f"({other.effect} {other.pattern.text!r}) always matches too and "
                           "is stricter"))
                break
    return out


def _reach_findings(source: PolicySource) -> list[Problem]:
    # Only names that are roles (granted by some g row) are judged: a plain subject
    # such as "agent" needs no grant.
    granted = {(link.role, link.tenant) for link in source.links}
    roles = {role for role, _ in granted}
    out: list[Problem] = []
    for rule in source.rules:
        if rule.subject not in roles or rule.tenant == "*":
            continue
        if (rule.subject, rule.tenant) not in granted and (rule.subject, "*") not in granted:
            out.append(Problem(rule.file, rule.line, f"unreachable: no g row grants role "
                       f"{rule.subject!r} in tenant {rule.tenant!r} (or '*')"))
    return out


def lint_policy_set(directory: Path) -> list[Problem]:
    """Every finding for the set at ``directory`` (an empty list means clean)."""
    source, problems = read_policy_set(directory)
    if source is None:
        return problems
    findings: list[Problem] = []
    for rule in source.rules:
        findings.extend(Problem(rule.file, rule.line, m) for m in _pattern_findings(rule))
    findings.extend(_shadow_findings(source))
    findings.extend(_reach_findings(source))
    return sorted(findings, key=lambda p: (p.file, p.line or 0))
