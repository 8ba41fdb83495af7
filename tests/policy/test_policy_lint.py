"""`policy lint` findings: each kind found, and no finding where none is certain."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.lint import covers, lint_policy_set
from shellgate.policy.patterns import compile_pattern
from tests.policy.policy_helpers import write_set


def findings(tmp_path: Path, rows: str) -> list[str]:
    return [f"{p.line}: {p.message}" for p in lint_policy_set(write_set(tmp_path, rows))]


def test_shadowed_by_a_stricter_rule(tmp_path: Path) -> None:
    got = findings(tmp_path, "p, agent, *, git push *, allow\np, agent, *, git *, deny\n")
    assert len(got) == 1
    assert got[0].startswith("1: shadowed")
    assert "line 2" in got[0]


def test_shadowing_through_a_role_the_subject_always_holds(tmp_path: Path) -> None:
    got = findings(tmp_path, "g, bob, dev, *\np, bob, web, make, allow\np, dev, *, make *, ask\n")
    assert [g.split(":")[0] for g in got] == ["2"]


def test_no_shadow_when_the_stricter_rule_is_narrower_or_elsewhere(tmp_path: Path) -> None:
    assert findings(tmp_path, """
        p, agent, *, git *, allow
        p, agent, *, git push *, ask
        p, agent, web, ls *, deny
        p, agent, *, ls *, allow
        p, other, *, cat *, deny
        p, agent, *, cat *, allow
    """) == []


def test_duplicates_and_misspelled_effects(tmp_path: Path) -> None:
    assert findings(tmp_path, "p, a, *, ls, allow\np, a, *, ls, allow\n") == [
        "2: duplicate of line 1"]
    (bad,) = findings(tmp_path / "b", "p, a, *, ls, alow\n")
    assert "unknown effect 'alow'" in bad
    assert "did you mean 'allow'" in bad


def test_unreachable_role_rule(tmp_path: Path) -> None:
    got = findings(tmp_path, "g, bob, dev, web\np, dev, data, make, allow\np, dev, web, ls, allow\n")
    assert got == ["2: unreachable: no g row grants role 'dev' in tenant 'data' (or '*')"]


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        pytest.param("p, a, *, git  status, allow", "two spaces", id="double-space"),
        pytest.param("p, a, *, git*, allow", "glues '*'", id="glued-star"),
        pytest.param("p, a, *, * x, allow", "allows commands of any name", id="allow-any-name"),
    ],
)
def test_pattern_findings(tmp_path: Path, row: str, needle: str) -> None:
    (got,) = findings(tmp_path, row + "\n")
    assert needle in got


@pytest.mark.parametrize(
    ("wide", "narrow", "expected"),
    [
        pytest.param("git *", "git push *", True, id="prefix-covers-prefix"),
        pytest.param("git push *", "git *", False, id="narrow-does-not-cover-wide"),
        pytest.param("git push *", "git push", True, id="prefix-covers-bare"),
        pytest.param("git * x", "git *", False, id="bare-variant-not-covered"),
        pytest.param("*", "re:anything", False, id="regex-never-judged"),
        pytest.param("re:git (a|b)", "git a", True, id="regex-over-exact"),
        pytest.param("re:git .*", "git *", False, id="regex-over-glob-unknown"),
    ],
)
def test_covers_is_only_claimed_when_certain(wide: str, narrow: str, expected: bool) -> None:
    assert covers(compile_pattern(wide), compile_pattern(narrow)) is expected
