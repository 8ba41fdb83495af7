"""The reducer and the waterfall runner: strictest wins, order never loosens, fail closed."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shellgate.hookspecs import hookimpl
from shellgate.models import STRICTNESS, Analysis, CallInfo, Decision, Segment
from shellgate.policy.engine import Layer, decide, strictest

CALL = CallInfo(
    tool="bash", command="x", subject="a", tenant="t", session="s", workdir="/", workspace="/"
)
EFFECTS = st.sampled_from(["allow", "ask", "deny", None])


def layer(name: str, answers: dict[str, str | None]) -> Layer:
    def check(call: CallInfo, segment: Segment) -> Decision | None:
        effect = answers.get(segment.command)
        return None if effect is None else Decision(effect=effect, reason=name, layer=name)

    return Layer(name=name, check=check)


def analysis(commands: list[str]) -> Analysis:
    return Analysis(
        command="; ".join(commands), segments=tuple(Segment(text=c, argv=(c,)) for c in commands)
    )


@given(
    st.lists(st.lists(EFFECTS, min_size=3, max_size=3), min_size=1, max_size=5),
    st.randoms(use_true_random=False),
)
def test_any_layer_order_gives_the_same_effect(matrix: list[list[str | None]], rnd: Any) -> None:
    commands = ["c0", "c1", "c2"]
    layers = [layer(f"L{i}", dict(zip(commands, row, strict=True))) for i, row in enumerate(matrix)]
    shuffled = layers[:]
    rnd.shuffle(shuffled)
    a = decide(CALL, analysis(commands), layers, default="ask")
    b = decide(CALL, analysis(commands), shuffled, default="ask")
    assert a.effect == b.effect
    given_effects = [e for row in matrix for e in row if e is not None]
    if "deny" in given_effects:
        assert a.effect == "deny"
    elif a.effect == "allow":
        # an allow overall means every segment was allowed by someone and nobody asked
        assert all(any(row[i] == "allow" for row in matrix) for i in range(3))
        assert "ask" not in given_effects


@given(st.lists(st.sampled_from(["allow", "ask", "deny"]), min_size=1))
def test_strictest_is_the_maximum(effects: list[str]) -> None:
    decisions = [Decision(effect=e, reason="", layer=str(i)) for i, e in enumerate(effects)]
    best = strictest(decisions)
    assert best is not None
    assert STRICTNESS[best.effect] == max(STRICTNESS[e] for e in effects)  # type: ignore[index]


def test_undecided_segment_gets_the_default_never_allow() -> None:
    verdict = decide(CALL, analysis(["a", "b"]), [layer("L", {"a": "allow"})], default="ask")
    assert [sv.decision.effect for sv in verdict.segments] == ["allow", "ask"]
    assert verdict.effect == "ask"
    assert verdict.segments[1].decision.layer == "default"


def test_no_segments_is_the_default() -> None:
    verdict = decide(CALL, analysis([]), [layer("L", {})], default="deny")
    assert verdict.effect == "deny"


def test_veto_stops_the_waterfall_but_lists_every_segment() -> None:
    seen: list[str] = []

    def spy(call: CallInfo, segment: Segment) -> None:
        seen.append(segment.command)

    layers = [layer("first", {"b": "deny"}), Layer(name="spy", check=spy)]
    verdict = decide(CALL, analysis(["a", "b", "c"]), layers, default="ask")
    assert verdict.effect == "deny"
    assert seen == ["a"]  # nothing below the veto ran, for b or after it
    assert [sv.segment.command for sv in verdict.segments] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("behaviour", "fragment"),
    [
        pytest.param(lambda **_: 1 / 0, "failed (ZeroDivisionError", id="raises"),
        pytest.param(lambda **_: "allow", "returned str, not a Decision", id="junk-string"),
        pytest.param(lambda **_: {"effect": "allow"}, "returned dict", id="junk-dict"),
    ],
)
def test_broken_layers_fail_closed(behaviour: Any, fragment: str) -> None:
    layers = [layer("ok", {"a": "allow"}), Layer(name="broken", check=behaviour)]
    verdict = decide(CALL, analysis(["a"]), layers, default="ask")
    assert verdict.effect == "deny"
    assert verdict.decision.layer == "broken"
    assert fragment in verdict.decision.reason


def test_slow_layer_fails_closed() -> None:
    import time

    def slow(**_: object) -> None:
        time.sleep(0.05)

    verdict = decide(
        CALL, analysis(["a"]), [Layer(name="slow", check=slow)], default="ask", layer_budget_ms=10
    )
    assert verdict.effect == "deny"
    assert "over its 10 ms budget" in verdict.decision.reason


def test_layers_may_declare_only_the_arguments_they_use() -> None:
    from shellgate.policy.engine import layers_of, new_plugin_manager

    class SegmentOnly:
        @hookimpl
        def shellgate_check(self, segment: Segment) -> Decision | None:
            return Decision(effect="ask", reason=segment.command, layer="seg-only")

    pm = new_plugin_manager()
    pm.register(SegmentOnly(), name="seg-only")
    verdict = decide(CALL, analysis(["a"]), layers_of(pm), default="deny")
    assert (verdict.effect, verdict.decision.reason) == ("ask", "a")


def test_require_sandbox_is_or_ed() -> None:
    def wants(**_: object) -> Decision:
        return Decision(effect="allow", reason="", layer="t", require_sandbox=True)

    verdict = decide(
        CALL,
        analysis(["a"]),
        [layer("x", {"a": "allow"}), Layer(name="t", check=wants)],
        default="ask",
    )
    assert verdict.require_sandbox


class ForceBwrap:
    """An around-execute wrapper that tightens the plan (and records what it saw)."""

    def __init__(self, plan_update: dict[str, str]) -> None:
        self.update = plan_update
        self.results: list[Any] = []

    @hookimpl(wrapper=True)
    def shellgate_execute(self, plan: dict[str, Any]) -> Generator[None, Any, Any]:
        plan.update(self.update)
        result = yield
        self.results.append(result)
        return result


async def test_execute_wrapper_sees_the_result(open_gate: Any) -> None:
    gate = await open_gate()
    spy = ForceBwrap({})
    gate.decider.pm.register(spy, name="spy")
    result = await gate.call("bash", {"command": "echo hi", "description": "d"})
    assert result.text == "hi\n"
    assert spy.results[0].stdout.text == "hi\n"


@pytest.mark.parametrize(
    ("update", "fragment"),
    [
        pytest.param({"sandbox_mode": "full-access"}, "widen the sandbox mode", id="widen-mode"),
        pytest.param({"executor": "docker"}, "unknown executor", id="unknown-executor"),
    ],
)
async def test_execute_wrapper_cannot_loosen(
    open_gate: Any, update: dict[str, str], fragment: str
) -> None:
    gate = await open_gate()
    gate.decider.pm.register(ForceBwrap(update), name="loosen")
    marker = gate.executor.workspace / "ran"
    result = await gate.call("bash", {"command": f"touch {marker}", "description": "d"})
    assert result.is_error
    assert fragment in result.text
    assert not marker.exists()


def test_layers_run_in_the_documented_order(tmp_path: Any) -> None:
    from shellgate.decider import Decider
    from tests.conftest import ROOT, make_config

    decider = Decider(make_config(tmp_path, policy={"paths": [str(ROOT / "policies" / "default")]}))
    assert decider.layer_names == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root"]
