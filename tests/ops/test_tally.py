"""Label values stay bounded, and every result record maps to one outcome."""

from __future__ import annotations

import pytest

from shellgate.ops._tally import MAX_LABEL_CHARS, MAX_RULES, OTHER, AuditTally, result_outcome


@pytest.mark.parametrize(
    ("record", "outcome"),
    [
        pytest.param({"exit_code": 0, "signal": None, "timed_out": False}, "exit_0", id="exit-0"),
        pytest.param({"exit_code": 3, "signal": None, "timed_out": False}, "exit_nonzero", id="exit-3"),
        pytest.param({"exit_code": None, "signal": 9, "timed_out": False}, "signal", id="signal"),
        pytest.param({"exit_code": None, "signal": 15, "timed_out": True}, "timed_out", id="timeout"),
        pytest.param({"is_error": True, "outcome": "denied"}, "denied", id="denied"),
        pytest.param({"is_error": True, "outcome": "not approved"}, "not_approved", id="not-approved"),
        pytest.param({"is_error": True, "outcome": "execution error"}, "error", id="exec-error"),
        pytest.param({"exit_code": 0, "outcome": "wrapper error"}, "error", id="wrapper-error"),
        pytest.param({"is_error": True, "outcome": "task failed"}, "error", id="task-failed"),
        pytest.param({"is_error": True, "outcome": "aborted"}, "aborted", id="aborted"),
        pytest.param({}, "error", id="nothing-known"),
    ],
)
def test_result_outcomes(record: dict[str, object], outcome: str) -> None:
    assert result_outcome({"type": "result", **record}) == outcome


def test_rules_are_cut_and_capped() -> None:
    tally = AuditTally()
    for i in range(MAX_RULES + 50):
        tally.add({"type": "decision", "decision": "allow", "layer": "casbin", "rule": f"r:{i}"})
    long_rule = "x" * 5000
    tally.add({"type": "decision", "decision": "deny", "layer": "casbin", "rule": long_rule})
    rules = {rule for (_, _, rule) in tally.decisions}
    assert len(rules) == MAX_RULES + 1  # the first MAX_RULES, then "_other"
    assert tally.decisions[("allow", "casbin", OTHER)] == 50
    assert tally.decisions[("deny", "casbin", OTHER)] == 1  # new after the cap
    assert max(len(r) for r in rules) <= MAX_LABEL_CHARS


def test_a_long_rule_before_the_cap_is_cut() -> None:
    tally = AuditTally()
    tally.add({"type": "decision", "decision": "deny", "layer": "casbin", "rule": "y" * 5000})
    ((_, _, rule),) = tally.decisions
    assert len(rule) == MAX_LABEL_CHARS
    assert rule.endswith("…")


def test_unknown_values_do_not_make_new_labels() -> None:
    tally = AuditTally()
    tally.add({"type": "decision", "decision": "maybe", "layer": "x", "rule": None,
               "call_id": "c1", "executor": "docker"})
    tally.add({"type": "result", "call_id": "c1", "is_error": True, "outcome": "denied"})
    tally.add({"type": "approval", "answer": "perhaps"})
    tally.add({"type": "whatever-comes-next"})
    assert tally.decisions == {(OTHER, "x", ""): 1}
    assert tally.results == {(OTHER, "denied"): 1}  # the decision's executor, bounded
    assert tally.approvals == {(OTHER,): 1}
    assert tally.records[(OTHER,)] == 1


def test_a_refused_result_takes_its_decisions_executor() -> None:
    tally = AuditTally()
    tally.add({"type": "decision", "decision": "deny", "layer": "casbin", "rule": "r",
               "call_id": "c2", "executor": "bwrap"})
    tally.add({"type": "result", "call_id": "c2", "is_error": True, "outcome": "denied"})
    tally.add({"type": "result", "call_id": "unknown", "is_error": True, "outcome": "denied"})
    assert tally.results == {("bwrap", "denied"): 1, ("", "denied"): 1}


def test_sandbox_is_an_effect_of_its_own() -> None:
    tally = AuditTally()
    tally.add({"type": "decision", "decision": "sandbox", "layer": "default", "rule": None})
    tally.add({"type": "decision", "decision": "ask", "layer": "sandbox", "rule": None})
    tally.add({"type": "decision", "decision": "confined", "layer": "x", "rule": None})
    assert tally.decisions[("sandbox", "default", "")] == 1
    assert tally.decisions[("ask", "sandbox", "")] == 1  # one that could not be confined
    assert tally.decisions[(OTHER, "x", "")] == 1  # an unknown effect stays bounded
