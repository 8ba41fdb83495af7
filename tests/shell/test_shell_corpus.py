"""The corpus, through the real analyser and the real decision engine."""

from __future__ import annotations

import pytest

from shellgate.shell import analyse
from tests.shell.shell_corpus import CASES, Case
from tests.shell.shell_policy_helpers import WORKDIR, decision


def test_corpus_is_large_enough_and_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 500
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_corpus_segments(case: Case) -> None:
    analysis = analyse(case.command, workdir=WORKDIR)
    segments = analysis.segments
    if case.argvs is not None:
        assert [s.argv for s in segments] == list(case.argvs)
    for form in case.forms:
        holders = [s for s in segments if form in s.all_forms()]
        assert holders, f"no segment has form {form}: {[s.all_forms() for s in segments]}"
        if case.context is not None and form == case.forms[0]:
            assert holders[0].context == case.context
    if case.finding is not None:
        found = [f for s in segments for f in s.findings]
        assert bool(found) is case.finding, found
    writes = {w for s in segments for w in s.write_paths}
    for target in case.writes:
        assert target in writes, sorted(writes)
    canonical = {text for s in segments for text in s.canonical}
    for text in case.canonical:
        assert text in canonical, sorted(canonical)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_corpus_decisions(case: Case) -> None:
    assert (decision(case.command, "allowlist"), decision(case.command, "denylist")) == (
        case.allow,
        case.deny,
    )
