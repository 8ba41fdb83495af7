"""Allows of programs that can run, load or write what the analysis cannot see.

A program in the capability table (:mod:`shellgate.shell.catalog.capabilities`)
without a catalog entry is matched as written: what its options run, load or
write is not read. An admin who allows it should know that when writing the
rule, not after: ``policy lint`` warns on every allow pattern that names such
a program (:func:`lint_message`), and ``check`` notes it when such an allow
decides a segment (:func:`check_notes`).
"""

from __future__ import annotations

from shellgate.models import Verdict
from shellgate.policy.loader import Rule
from shellgate.shell.catalog.capabilities import Capability, unmodelled
from shellgate.shell.catalog.read import basename


def message(pattern: str, row: Capability) -> str:
    """``allow 'julia *' lets the agent run any program: julia -e runs code; …``."""
    how = f": {row.how}" if row.how else ""
    return (f"allow {pattern!r} lets the agent {row.risk()}{how}; shellgate has no entry "
            f"for {row.program}, so what it runs through its options is not checked")


def lint_message(rule: Rule) -> str | None:
    """The warning for an allow rule naming an unmodelled program (glob patterns:
    an exact command is the admin's own reading of it)."""
    if rule.effect != "allow" or rule.pattern.kind not in ("prefix", "glob"):
        return None
    words = rule.pattern.text.split(" ")
    row = unmodelled(basename(words[0])) if words and "*" not in words[0] else None
    return message(rule.pattern.text, row) if row is not None else None


def check_notes(verdict: Verdict) -> list[str]:
    """One note per segment an allow rule decided for an unmodelled program."""
    notes: list[str] = []
    for seg in verdict.segments:
        decision, argv = seg.decision, seg.segment.argv
        if decision.effect != "allow" or decision.layer != "casbin" or not argv:
            continue
        row = unmodelled(basename(argv[0]))
        if row is not None:
            rule = decision.rule or "an allow rule"
            notes.append(f"{rule} allowed '{seg.segment.command[:80]}': it lets the agent "
                         f"{row.risk()}{': ' + row.how if row.how else ''}; shellgate has no "
                         f"entry for {row.program}, so what it runs through its options is "
                         "not checked")
    return notes
