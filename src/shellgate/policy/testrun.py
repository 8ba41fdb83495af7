"""Policy sets tested like code: the rows of ``tests.csv`` / ``*.test.csv``.

A row is ``<subject>, <tenant>, <expected decision>, <command>``. Everything after
the third comma is the command, so commands with commas need no quoting (a command
in double quotes is unquoted CSV-style). Each row runs through the full
:class:`~shellgate.decider.Decider` — input guard, analysis, protected paths, the
set's rules, the closing default — and, for every segment, the index's deciding
rule is compared with plain casbin's ``enforce_ex`` on the same set: a difference
is a failure too (it would be a shellgate bug, and admins should see it).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from shellgate.config import Config
from shellgate.errors import PolicyError
from shellgate.models import CallInfo, Effect, Verdict
from shellgate.policy.loader import EFFECTS

MAX_TEST_ROWS = 100_000
#: A tests.csv line naming the closing default its rows are written for.
_DECLARED = re.compile(r"#\s*default:\s*(\S+)")


@dataclass(frozen=True)
class Case:
    file: str
    line: int
    subject: str
    tenant: str
    expected: Effect
    command: str


@dataclass(frozen=True)
class Outcome:
    case: Case
    verdict: Verdict
    disagreement: str | None = None  # index vs casbin, if they differed

    @property
    def passed(self) -> bool:
        return self.disagreement is None and self.verdict.effect == self.case.expected


def case_files(directory: Path) -> list[Path]:
    """``tests.csv`` then every ``*.test.csv`` of the set, sorted."""
    found = [directory / "tests.csv"] if (directory / "tests.csv").is_file() else []
    return found + sorted(directory.glob("*.test.csv"))


def _parse_row(raw: str, file: Path, line: int) -> Case:
    parts = raw.split(",", 3)
    if len(parts) != 4:
        raise PolicyError(f"{file}:{line}: a test row is '<subject>, <tenant>, <expected "
                          "decision>, <command>'")
    subject, tenant, expected = (p.strip() for p in parts[:3])
    command = parts[3].strip()
    if len(command) >= 2 and command[0] == '"' and command[-1] == '"':
        command = next(csv.reader([command]))[0]
    if expected not in EFFECTS:
        raise PolicyError(f"{file}:{line}: unknown expected decision {expected!r} "
                          "(expected allow, sandbox, ask or deny)")
    if not subject or not tenant or not command:
        raise PolicyError(f"{file}:{line}: empty subject, tenant or command")
    effect: Effect = expected  # checked against EFFECTS above
    return Case(str(file), line, subject, tenant, effect, command)


def read_cases(directory: Path) -> list[Case]:
    """Every test row of the set; raises :class:`PolicyError` naming a bad row."""
    files = case_files(directory)
    if not files:
        raise PolicyError(f"{directory}: no tests.csv or *.test.csv")
    cases: list[Case] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError(f"{file}: cannot read: {exc}") from exc
        for line, raw in enumerate(text.splitlines(), start=1):
            if raw.strip() and not raw.strip().startswith("#"):
                cases.append(_parse_row(raw, file, line))
                if len(cases) > MAX_TEST_ROWS:
                    raise PolicyError(f"{file}:{line}: more than {MAX_TEST_ROWS} test rows")
    return cases


def declared_default(directory: Path) -> Effect | None:
    """The closing default a set's ``tests.csv`` says its rows are written for: a
    ``# default: sandbox|ask|deny`` line; ``None`` without one. Any other value is
    a :class:`PolicyError` naming the line (``allow`` is never a closing default)."""
    file = directory / "tests.csv"
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # read_cases reports an unreadable file
    for line, raw in enumerate(text.splitlines(), start=1):
        found = _DECLARED.match(raw)
        if found is None:
            continue
        value = found.group(1)
        if value not in ("sandbox", "ask", "deny"):
            raise PolicyError(f"{file}:{line}: '# default: {value}': the closing default "
                              "must be 'sandbox', 'ask' or 'deny'")
        return cast("Effect", value)
    return None


def run_cases(directory: Path, config: Config, cases: list[Case]) -> list[Outcome]:
    """Run every case against the set at ``directory`` (and only that set)."""
    from shellgate.decider import Decider
    from shellgate.policy.casbin_layer import CasbinLayer
    from shellgate.policy.reference import ReferenceEnforcer
    from shellgate.policy.ruleset import PolicyEngine
    from shellgate.policy.write_rules import texts

    paths = (directory,)
    policy = config.policy.model_copy(update={"paths": paths, "store": None})  # the set alone
    if policy.default is None:  # the default the set's tests are written for, if they say
        named = declared_default(directory)
        if named is not None:
            policy = policy.model_copy(update={"default": named})
    config = config.model_copy(update={"policy": policy})
    decider = Decider(config)
    layer = decider.pm.get_plugin("casbin")
    assert isinstance(layer, CasbinLayer)
    engine = layer.engine
    reference = PolicyEngine([ReferenceEnforcer(i.source) for i in engine.indexes])
    # Decided from the workspace root, wherever `policy test` runs: a row's answer
    # must not depend on the directory (and the repository) it is run from.
    workspace = os.path.realpath(config.executor.workspace)
    workdir = workspace
    outcomes: list[Outcome] = []
    for case in cases:
        call = CallInfo(tool="bash", command=case.command, subject=case.subject,
                        tenant=case.tenant, session="policy-test", workdir=workdir,
                        workspace=workspace)
        verdict = decider.decide(call)
        disagreement = None
        for sv in verdict.segments:
            ours = engine.match(case.subject, case.tenant, sv.segment)
            theirs = reference.match(case.subject, case.tenant, sv.segment)
            mine = ours.rule.ref if ours else None
            casbin = theirs.rule.ref if theirs else None
            if mine != casbin:
                disagreement = (f"the index decided '{sv.segment.command}' by {mine} but "
                                f"casbin's enforce by {casbin} (a shellgate bug: please report)")
            for write in sv.segment.writes:
                shown, physical, lexical = texts(call, write)
                ours_w = engine.match_write(case.subject, case.tenant, physical, lexical)
                theirs_w = reference.match_write(case.subject, case.tenant, physical, lexical)
                if ours_w != theirs_w:
                    disagreement = (
                        f"the index decided writing '{shown}' by "
                        f"{ours_w.ref if ours_w else None} but casbin's enforce by "
                        f"{theirs_w.ref if theirs_w else None} (a shellgate bug: please report)"
                    )
        outcomes.append(Outcome(case, verdict, disagreement))
    return outcomes


def check_pushed(copy: Path, shown: Path, config: Config | None) -> None:
    """The policy store's :class:`~shellgate.store.policy_push.SetTester`: every row
    of the set at ``copy`` passes, or :class:`PolicyError` naming the first failure
    as ``shown`` (the pushed tests.csv) and its line, with how many failed."""
    cfg = config if config is not None else Config()
    try:
        cases = read_cases(copy)
    except PolicyError as exc:
        raise PolicyError(str(exc).replace(str(copy / "tests.csv"), str(shown))) from None
    if not cases:
        raise PolicyError(f"{shown}: no test rows (a pushed set carries its tests)")
    failed = [o for o in run_cases(copy, cfg, cases) if not o.passed]
    if failed:
        first = failed[0]
        case, top = first.case, first.verdict.decision
        rule = f" rule {top.rule}" if top.rule else ""
        why = first.disagreement or (f"expected {case.expected}, got {top.effect} (decided by "
                                     f"{top.layer}{rule}: {top.reason})")
        more = f"; {len(failed)} of {len(cases)} tests failed" if len(failed) > 1 else ""
        raise PolicyError(f"{shown}:{case.line}: test failed: {case.subject} in {case.tenant}: "
                          f"{case.command!r}: {why}{more}")
