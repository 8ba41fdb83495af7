"""Broken policy sets stop start-up with file, line and reason; good ones load."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.errors import PolicyError
from shellgate.policy.loader import load_policy_set, read_policy_set
from tests.policy.policy_helpers import write_set


def _error(tmp_path: Path, rows: str) -> str:
    directory = write_set(tmp_path, rows)
    with pytest.raises(PolicyError) as info:
        load_policy_set(directory)
    return str(info.value)


def test_valid_set_loads_rules_and_links_with_lines(tmp_path: Path) -> None:
    directory = write_set(tmp_path, """
        # a comment
        p, dev, *, git *, allow

        p, dev, t1, "re:a{1,3}", deny, quoted regex with a comma
        g, alice, dev, t1
    """)
    source = load_policy_set(directory)
    assert [(r.line, r.pattern.text, r.effect) for r in source.rules] == [
        (2, "git *", "allow"), (4, "re:a{1,3}", "deny")]
    assert source.rules[1].reason == "quoted regex with a comma"
    assert source.rules[0].ref == f"{directory / 'policy.csv'}:2"
    assert [(lk.user, lk.role, lk.tenant, lk.line) for lk in source.links] == [
        ("alice", "dev", "t1", 5)]


@pytest.mark.parametrize(
    ("rows", "line", "needle"),
    [
        pytest.param("p, a, *, ls, alow\n", 1, "unknown effect 'alow'", id="misspelled-effect"),
        pytest.param("p, a, *, ls, Deny\n", 1, "did you mean 'deny'", id="effect-suggestion"),
        pytest.param("p, a, *, ls, allow\np, a, *, re:(x, deny\n", 2, "bad regular expression",
                     id="bad-regex"),
        pytest.param("p, a, *, re:a{1,3}, deny\n", 1, "quote the field", id="comma-in-regex"),
        pytest.param("p, a, *, ls\n", 1, "4 or 5 fields", id="too-few-columns"),
        pytest.param("p, a, *, ls, allow, why, extra\n", 1, "got 6", id="too-many-columns"),
        pytest.param('p, a, *, "ls, allow\n', 1, "not a valid CSV row", id="bad-quoting"),
        pytest.param("g, alice, dev\n", 1, "3 fields after 'g'", id="short-g-row"),
        pytest.param("x, a, *, ls, allow\n", 1, "unknown row type 'x'", id="unknown-row"),
        pytest.param("p, *, *, ls, allow\n", 1, "no wildcard subject", id="wildcard-subject"),
        pytest.param("p, a, t*, ls, allow\n", 1, "tenant 't*'", id="glob-tenant"),
        pytest.param("p, a, *, , allow\n", 1, "empty pattern", id="empty-pattern"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, rows: str, line: int, needle: str) -> None:
    message = _error(tmp_path, rows)
    assert message.startswith(f"{tmp_path / 'set' / 'policy.csv'}:{line}: ")
    assert needle in message


def test_missing_model_is_an_error(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, a, *, ls, allow\n")
    (directory / "model.conf").unlink()
    with pytest.raises(PolicyError, match=r"model\.conf: missing model\.conf"):
        load_policy_set(directory)


def test_a_model_that_differs_from_the_shipped_one_is_refused(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, a, *, ls, allow\n")
    text = (directory / "model.conf").read_text()
    (directory / "model.conf").write_text(text.replace("priority(p.eft) || deny",
                                                       "!some(where (p.eft == deny))"))
    with pytest.raises(PolicyError, match=r"model\.conf:\d+: \[policy_effect\] e differs"):
        load_policy_set(directory)


def test_model_whitespace_and_comments_do_not_matter(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, a, *, ls, allow\n")
    text = (directory / "model.conf").read_text()
    (directory / "model.conf").write_text("; casbin comment\n" + text.replace(" = ", "="))
    assert len(load_policy_set(directory).rules) == 1


def test_missing_directory_and_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="policy set directory not found"):
        load_policy_set(tmp_path / "nope")
    directory = write_set(tmp_path, "")
    (directory / "policy.csv").unlink()
    with pytest.raises(PolicyError, match=r"missing policy\.csv"):
        load_policy_set(directory)


def test_every_problem_is_collected_for_lint(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, a, *, ls, alow\np, a, *, re:(, deny\n")
    source, problems = read_policy_set(directory)
    assert source is None
    assert [p.line for p in problems] == [1, 2]


def test_a_broken_set_stops_the_decider_at_start_up(tmp_path: Path) -> None:
    good = write_set(tmp_path, "p, a, *, ls, allow\n", name="good")
    bad = write_set(tmp_path, "p, a, *, ls, allow\np, a, *, rm, nope\n", name="bad")
    config = Config().model_copy(update={"policy": Config().policy.model_copy(
        update={"paths": (good, bad)})})
    with pytest.raises(PolicyError, match=r"bad/policy\.csv:2: unknown effect 'nope'"):
        Decider(config)
