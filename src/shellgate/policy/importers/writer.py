"""Write an :class:`~.common.Imported` source as a complete shellgate policy set.

The set is ``model.conf`` (the shipped model), ``policy.csv`` (one ``p`` row per
pattern, each rule headed by a comment naming its source line; a rule that is
not imported is a ``# not imported`` comment) and ``tests.csv``.

``tests.csv`` rows come from the source's own examples (Codex ``match`` and
``not_match``) and from each rule where the command is certain (the words of an
exact or prefix rule). Every row states the answer **the source** gives — its
deciding rule read with the source's precedence — and is run through the real
decision of the written set before anything is written:

* same answer → a row;
* no source rule decides the command and no imported rule does either → a row
  expecting shellgate's answer (the closing default, or a built-in layer), with a
  comment saying so;
* a different answer → the row is written commented out, with both answers, and
  a warning: the set differs from the source there, and ``policy test`` passing
  must not hide it.

So ``shellgate policy test DIR`` passes on the written set, with the config (and
``--default``) the import ran with.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from shellgate.config import Config
from shellgate.policy.importers.common import (
    Imported,
    Note,
    SourceRule,
    command_line,
    csv_field,
    one_line,
)
from shellgate.policy.loader import MODEL_FILE, POLICY_FILE, SHIPPED_MODEL
from shellgate.policy.testrun import Case, read_cases, run_cases

TESTS_FILE = "tests.csv"
FILES = (MODEL_FILE, POLICY_FILE, TESTS_FILE)
SUBJECT = "agent"


@dataclass(frozen=True)
class Written:
    """What was written: counts for the summary, and the warnings about test rows."""

    rules: int
    not_imported: int
    tests: int
    commented_tests: int
    notes: tuple[Note, ...]


def _where(imported: Imported, line: int | None) -> str:
    return f"{imported.file.name}:{line}" if line else imported.file.name


def policy_text(imported: Imported) -> str:
    lines = [
        f"# Imported by `shellgate policy import --from {imported.source}` from "
        f"{imported.file.name}.",
        "# Each rule is headed by its source line. A '# not imported' line is a source rule",
        "# shellgate cannot express faithfully (the import printed a warning for it).",
        f"# Rules are for the subject {SUBJECT!r} in every tenant: edit the first two fields",
        "# (or add `g` rows) to give them to your roles. docs/import.md explains each mapping.",
        "",
    ]
    for rule in imported.rules:
        where = _where(imported, rule.line)
        if not rule.write or not rule.patterns:
            # The label and the reason quote the source: one line, or a row could follow.
            lines.append(one_line(f"# not imported: {where}: {rule.label}: {rule.why_not}"))
            continue
        lines.append(one_line(f"# {where}: {rule.label}"))
        for pattern in rule.patterns:
            fields = ["p", SUBJECT, "*", csv_field(pattern), rule.effect]
            if rule.reason:
                fields.append(csv_field(rule.reason))
            lines.append(", ".join(fields))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Candidate:
    argv: tuple[str, ...]
    line: int | None
    origin: str


def _candidates(imported: Imported, notes: list[Note]) -> list[_Candidate]:
    found = [_Candidate(e.argv, e.line, e.origin) for e in imported.examples]
    for rule in imported.rules:
        if rule.write and rule.patterns:
            found += [_Candidate(argv, rule.line, f"derived from line {rule.line}")
                      for argv in rule.derived]
    seen: set[str] = set()
    out: list[_Candidate] = []
    for cand in found:
        command = command_line(cand.argv)
        if "\n" in command or "\r" in command:
            notes.append(Note(cand.line, f"{cand.origin} {command!r} spans lines: a tests.csv "
                              "row is one line, so it is not written"))
        elif cand.argv and command not in seen:
            seen.add(command)
            out.append(cand)
    return out


def _tests(imported: Imported, directory: Path, config: Config,
           subject: str, tenant: str) -> tuple[list[str], int, int, list[Note]]:
    notes: list[Note] = []
    candidates = _candidates(imported, notes)
    cases = [Case("import", i, subject, tenant, "deny", command_line(c.argv))
             for i, c in enumerate(candidates, start=1)]
    outcomes = run_cases(directory, config, cases) if cases else []
    rows = ["# <subject>, <tenant>, <expected decision>, <command>",
            f"# From {imported.file.name}: the source's examples and one command per rule.",
            "# Run: shellgate policy test DIR"]
    written = commented = 0
    for cand, outcome in zip(candidates, outcomes, strict=True):
        top = outcome.verdict.decision
        ours = f"{top.effect} ({top.layer}{' ' + top.rule if top.rule else ''})"
        source: SourceRule | None = imported.decide(cand.argv)
        row = f"{subject}, {tenant}, {{}}, {command_line(cand.argv)}"
        if outcome.disagreement is None and source is None and top.layer != "casbin":
            rows.append(f"# {cand.origin}: no source rule decides it: shellgate's {top.layer}")
            rows.append(row.format(top.effect))
            written += 1
        elif outcome.disagreement is None and source and source.effect == top.effect:
            rows.append(f"# {cand.origin}")
            rows.append(row.format(top.effect))
            written += 1
        else:
            theirs = (f"{source.effect} (line {source.line})" if source and source.line
                      else source.effect if source else "no rule (its own default)")
            rows.append(f"# {cand.origin}: the source decides {theirs}, shellgate {ours}:")
            rows.append("# " + row.format(source.effect if source else top.effect))
            commented += 1
            notes.append(Note(cand.line, f"{cand.origin} {command_line(cand.argv)!r}: the "
                              f"source decides {theirs}, the imported set {ours}; the "
                              "tests.csv row is commented out"))
    return rows, written, commented, notes


def write_set(imported: Imported, directory: Path, config: Config) -> Written:
    """Write the set into ``directory`` (which the caller checked may be written)."""
    subject, tenant = SUBJECT, config.policy.tenant
    with tempfile.TemporaryDirectory(prefix="shellgate-import-") as tmp:
        stage = Path(tmp) / (directory.name or "imported")
        stage.mkdir()
        shutil.copyfile(SHIPPED_MODEL, stage / MODEL_FILE)
        (stage / POLICY_FILE).write_text(policy_text(imported), encoding="utf-8")
        rows, count, commented, notes = _tests(imported, stage, config, subject, tenant)
        (stage / TESTS_FILE).write_text("\n".join(rows) + "\n", encoding="utf-8")
        # The promise is that `policy test` passes: check it on the staged set.
        failed = [o for o in run_cases(stage, config, read_cases(stage)) if not o.passed]
        if failed:
            raise RuntimeError(f"imported set fails its own test {failed[0].case.command!r}")
        directory.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.copyfile(stage / name, directory / name)
    rules = sum(len(r.patterns) for r in imported.rules if r.write)
    skipped = sum(1 for r in imported.rules if not r.write or not r.patterns)
    return Written(rules, skipped, count, commented, tuple(notes))


__all__ = ["FILES", "Written", "policy_text", "write_set"]
