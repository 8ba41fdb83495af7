"""The waterfall: run every layer over every segment and reduce to one verdict.

Invariants (held here and nowhere else):

* The answer is the strictest one given (deny > ask > allow), over all layers and
  all segments. Layer order only decides who may stop early (a ``deny`` veto ends
  the waterfall for the whole call) and what the audit log lists first.
* A layer that raises, overruns its time budget or returns something that is not a
  :class:`Decision` (or ``None``) is a ``deny`` naming that layer.
* A segment no layer decided gets the configured closing default (never ``allow``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pluggy

from shellgate.hookspecs import PROJECT
from shellgate.models import (
    STRICTNESS,
    Analysis,
    CallInfo,
    Decision,
    Effect,
    Segment,
    SegmentVerdict,
    Verdict,
)

CheckFn = Callable[..., object]


def strictest(decisions: Iterable[Decision]) -> Decision | None:
    """The strictest decision; among equals, the first given (stable, order-free effect)."""
    best: Decision | None = None
    for decision in decisions:
        if best is None or STRICTNESS[decision.effect] > STRICTNESS[best.effect]:
            best = decision
    return best


@dataclass(frozen=True)
class Layer:
    """A named check function (a pluggy hookimpl of ``shellgate_check``).

    ``argnames`` are the keyword arguments the implementation declared: hooks may
    take only the ones they use, so specs can grow without breaking plugins.
    """

    name: str
    check: CheckFn
    argnames: tuple[str, ...] = ("call", "segment")


def layers_of(pm: pluggy.PluginManager) -> list[Layer]:
    """The ``shellgate_check`` implementations in the documented call order.

    ``get_hookimpls()`` lists implementations in registration order (pluggy's own
    call loop walks that list backwards); the gate registers layers in the
    documented order, so this list *is* that order. The engine calls them itself
    so that a deny can stop the waterfall and a failing layer can be named.
    """
    impls = pm.hook.shellgate_check.get_hookimpls()
    return [
        Layer(name=impl.plugin_name, check=impl.function, argnames=tuple(impl.argnames))
        for impl in impls
    ]


def _ask_one(layer: Layer, call: CallInfo, segment: Segment, budget_s: float) -> Decision | None:
    start = time.monotonic()
    try:
        given = {"call": call, "segment": segment}
        result = layer.check(**{k: v for k, v in given.items() if k in layer.argnames})
    except Exception as exc:  # a broken layer must fail closed, whatever it raised
        return Decision(
            effect="deny",
            reason=f"policy layer '{layer.name}' failed ({type(exc).__name__}: {exc}); "
            "denied because a failing layer never allows",
            layer=layer.name,
        )
    elapsed = time.monotonic() - start
    if elapsed > budget_s:
        return Decision(
            effect="deny",
            reason=f"policy layer '{layer.name}' took {elapsed * 1000:.0f} ms, over its "
            f"{budget_s * 1000:.0f} ms budget; denied",
            layer=layer.name,
        )
    if result is None or isinstance(result, Decision):
        return result
    return Decision(
        effect="deny",
        reason=f"policy layer '{layer.name}' returned {type(result).__name__}, not a "
        "Decision; denied",
        layer=layer.name,
    )


def decide(
    call: CallInfo,
    analysis: Analysis,
    layers: Sequence[Layer],
    *,
    default: Effect,
    layer_budget_ms: int = 1000,
) -> Verdict:
    """Run ``layers`` over every segment of ``analysis`` and reduce.

    A ``deny`` from any layer on any segment stops the waterfall: the remaining
    segments are still listed in the verdict, undecided segments marked with the
    veto, so the audit log shows the whole command.
    """
    budget_s = layer_budget_ms / 1000
    verdicts: list[SegmentVerdict] = []
    veto: Decision | None = None
    require_sandbox = False
    for segment in analysis.segments:
        if veto is not None:
            verdicts.append(SegmentVerdict(segment=segment, decision=veto))
            continue
        given: list[Decision] = []
        for layer in layers:
            decision = _ask_one(layer, call, segment, budget_s)
            if decision is None:
                continue
            given.append(decision)
            require_sandbox = require_sandbox or decision.require_sandbox
            if decision.effect == "deny":
                veto = decision
                break
        chosen = strictest(given) or Decision(
            effect=default,
            reason=f"no rule decides '{segment.command or segment.text}'; "
            f"the closing default is {default}",
            layer="default",
        )
        verdicts.append(
            SegmentVerdict.model_construct(segment=segment, decision=chosen, decisions=tuple(given))
        )
    if not verdicts:
        # Nothing to run (an empty or comment-only command) still needs an answer:
        # the default, so that "no segments" can never mean "allowed".
        empty = Segment(text=analysis.command, argv=())
        chosen = Decision(
            effect=default,
            reason=f"the command runs no simple command; the closing default is {default}",
            layer="default",
        )
        verdicts.append(SegmentVerdict(segment=empty, decision=chosen))
    overall = strictest(v.decision for v in verdicts)
    assert overall is not None
    # model_construct: every value here is one this module built or checked
    # (isinstance Decision) with mypy-checked types; re-validating them cost the
    # hot path (pydantic does not re-validate nested model instances anyway).
    return Verdict.model_construct(
        decision=overall, segments=tuple(verdicts), require_sandbox=require_sandbox
    )


def new_plugin_manager() -> pluggy.PluginManager:
    from shellgate import hookspecs

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm
