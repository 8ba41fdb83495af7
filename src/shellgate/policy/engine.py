"""The waterfall: run every layer over every segment and reduce to one verdict.

Invariants (held here and nowhere else):

* The answer is the strictest one given (deny > ask > sandbox > allow), over all
  layers and all segments. Layer order only decides who may stop early (a ``deny`` veto ends
  the waterfall for the whole call) and what the audit log lists first.
* A layer that raises, overruns its time budget or returns something that is not a
  :class:`Decision` (or ``None``) is a ``deny`` naming that layer.
* A *guarded* layer (every third-party plugin) runs on a worker thread and is
  abandoned at its deadline (:mod:`shellgate.policy.deadline`): a hung plugin
  never holds up the caller, nor the event loop with :func:`decide_async`.
  Built-in layers are ours and bounded: they run inline on the caller's thread,
  their budget checked after they return.
* A segment no layer decided gets the configured closing default (never ``allow``;
  ``sandbox`` runs it confined). A finding is the analysis layer's ``ask``: it
  decides its segment, so no closing default, not even ``sandbox``, applies there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Generator, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

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
from shellgate.policy.deadline import LayerRunner, Overrun

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
    ``guarded`` layers run on their own worker thread under a deadline.
    """

    name: str
    check: CheckFn
    argnames: tuple[str, ...] = ("call", "segment")
    guarded: bool = False


def layers_of(pm: pluggy.PluginManager, builtin: Collection[str] | None = None) -> list[Layer]:
    """The ``shellgate_check`` implementations in the documented call order.

    ``get_hookimpls()`` lists implementations in registration order (pluggy's own
    call loop walks that list backwards); the gate registers layers in the
    documented order, so this list *is* that order. The engine calls them itself
    so that a deny can stop the waterfall and a failing layer can be named.
    Every layer whose plugin is not named in ``builtin`` is guarded (``None``:
    none is).
    """
    impls = pm.hook.shellgate_check.get_hookimpls()
    return [
        Layer(
            name=impl.plugin_name,
            check=impl.function,
            argnames=tuple(impl.argnames),
            guarded=builtin is not None and impl.plugin_name not in builtin,
        )
        for impl in impls
    ]


def _shown(segment: Segment) -> str:
    """The segment as written, in a code span (its text; the argv joined drops quotes)."""
    from shellgate.tools.render import code

    text = segment.text or segment.command
    return code(text[:200]) + ("…" if len(text) > 200 else "")


def _deny(layer: str, reason: str) -> Decision:
    return Decision(effect="deny", reason=f"policy layer '{layer}' {reason}", layer=layer)


def _judge(layer: Layer, result: object) -> Decision | None:
    if result is None or isinstance(result, Decision):
        return result
    return _deny(layer.name, f"returned {type(result).__name__}, not a Decision; denied")


def _failed(layer: Layer, exc: BaseException) -> Decision:
    # A broken layer must fail closed, whatever it raised.
    return _deny(layer.name, f"failed ({type(exc).__name__}: {exc}); denied because a "
                 "failing layer never allows")


def _overran(layer: Layer, exc: Overrun, budget_s: float) -> Decision:
    budget = f"{budget_s * 1000:.0f} ms"
    if exc.busy:
        return _deny(layer.name, f"is still running an earlier check that overran its {budget} "
                     "budget; denied")
    return _deny(layer.name, f"did not answer within its {budget} budget; denied")


_BOTH = ("call", "segment")


def _arguments(layer: Layer, call: CallInfo, segment: Segment) -> dict[str, object]:
    if layer.argnames == _BOTH:  # every built-in layer: no filtering on the hot path
        return {"call": call, "segment": segment}
    given = {"call": call, "segment": segment}
    return {k: v for k, v in given.items() if k in layer.argnames}


def _ask_one(layer: Layer, call: CallInfo, segment: Segment, budget_s: float) -> Decision | None:
    """Ask an inline (built-in) layer; its budget is checked when it returns."""
    start = time.monotonic()
    try:
        result = layer.check(**_arguments(layer, call, segment))
    except Exception as exc:
        return _failed(layer, exc)
    elapsed = time.monotonic() - start
    if elapsed > budget_s:
        return _deny(layer.name, f"took {elapsed * 1000:.0f} ms, over its "
                     f"{budget_s * 1000:.0f} ms budget; denied")
    return _judge(layer, result)


def _ask_guarded(layer: Layer, call: CallInfo, segment: Segment,
                 budget_s: float) -> Decision | None:
    """Ask a guarded layer (on a worker thread: whatever it raises is its failure)."""
    try:
        return _ask_one(layer, call, segment, budget_s)
    except BaseException as exc:  # SystemExit & co. from a plugin, on a worker thread
        return _failed(layer, exc)


# The waterfall yields each guarded ask as (layer name, ask) and is sent its answer
# (or an Overrun): the caller runs it inline up to the first guarded ask, and a
# LayerRunner runs the rest on a worker thread under the layers' deadlines.
Steps = Generator[
    tuple[str, Callable[[], "Decision | None"]], "Decision | Overrun | None", Verdict
]


def _runs_nothing(segment: Segment) -> bool:
    """A segment the analysis read completely that runs no program: a bare
    assignment of shell variables (``X=1``) or redirections alone (``> out.txt``)."""
    return not segment.argv and not segment.findings and not segment.fragment and (
        bool(segment.assignments) or bool(segment.redirects)
    )


def _waterfall(call: CallInfo, analysis: Analysis, layers: Sequence[Layer], default: Effect,
               budget_s: float) -> Steps:
    """Every layer over every segment, as if each segment asked all its layers in turn.

    The inline layers before the first guarded one (the built-ins) are asked first,
    for every segment up to their first deny, on the caller's thread; the guarded
    rest is then asked segment by segment (through the runner, on a worker). The
    layers asked, their order within a segment, the veto and the verdict are those
    of the one-segment-at-a-time order: built-in layers are pure, so asking them
    for segments that a plugin's veto then makes moot costs time, nothing else.
    """
    split = next((i for i, layer in enumerate(layers) if layer.guarded), len(layers))
    segments = analysis.segments
    given: list[list[Decision]] = []
    veto_at = len(segments)  # the segment whose deny vetoes the rest (none: past the end)
    for index, segment in enumerate(segments):
        found: list[Decision] = []
        given.append(found)
        for layer in layers[:split]:
            decision = _ask_one(layer, call, segment, budget_s)
            if decision is not None:
                found.append(decision)
                if decision.effect == "deny":
                    break
        if found and found[-1].effect == "deny":
            veto_at = index
            break
    for index in range(veto_at if split < len(layers) else 0):
        segment = segments[index]
        for layer in layers[split:]:
            if layer.guarded:
                answer = yield layer.name, partial(_ask_guarded, layer, call, segment, budget_s)
                decision = _overran(layer, answer, budget_s) if isinstance(answer, Overrun) \
                    else answer
            else:  # an inline layer listed after a guarded one runs where the rest runs
                decision = _ask_one(layer, call, segment, budget_s)
            if decision is not None:
                given[index].append(decision)
                if decision.effect == "deny":
                    veto_at = index
                    break
        if veto_at == index:
            break
    veto = given[veto_at][-1] if veto_at < len(segments) else None
    verdicts: list[SegmentVerdict] = []
    require_sandbox = False
    for index, segment in enumerate(segments):
        if index > veto_at:
            assert veto is not None
            verdicts.append(SegmentVerdict(segment=segment, decision=veto))
            continue
        found = given[index]
        require_sandbox = require_sandbox or any(d.require_sandbox for d in found)
        chosen = strictest(found)
        if _runs_nothing(segment) and not any(d.scope == "segment" for d in found):
            # `X=1`, `> out.txt`: no program to decide; its writes decide it, if any.
            inert = Decision(
                effect="allow",
                reason=f"{_shown(segment)} runs no program: it only sets shell variables "
                "or opens files, which are decided on their own",
                layer="command-analysis",
            )
            chosen = strictest([inert, *found])
            assert chosen is not None
        elif chosen is None or not any(d.scope == "segment" for d in found):
            # No layer decided the command itself (its writes alone never allow it).
            closing = Decision(
                effect=default,
                reason=f"no rule decides {_shown(segment)} for subject '{call.subject}' in "
                f"tenant '{call.tenant}'; the closing default is {default}",
                layer="default",
            )
            chosen = strictest([closing, *found])
            assert chosen is not None
        verdicts.append(
            SegmentVerdict.model_construct(segment=segment, decision=chosen, decisions=tuple(found))
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


def decide(
    call: CallInfo,
    analysis: Analysis,
    layers: Sequence[Layer],
    *,
    default: Effect,
    layer_budget_ms: int = 1000,
    runner: LayerRunner | None = None,
) -> Verdict:
    """Run ``layers`` over every segment of ``analysis`` and reduce.

    A ``deny`` from any layer on any segment stops the waterfall: the remaining
    segments are still listed in the verdict, undecided segments marked with the
    veto, so the audit log shows the whole command. From the first guarded ask on,
    the waterfall runs through ``runner`` (a private one when none is given): this
    blocks the calling thread for at most a budget per guarded ask.
    """
    budget_s = layer_budget_ms / 1000
    steps = _waterfall(call, analysis, layers, default, budget_s)
    try:
        first = next(steps)
    except StopIteration as done:  # no guarded layer was reached: no thread at all
        verdict: Verdict = done.value
        return verdict
    if runner is not None:
        return runner.run(steps, first, budget_s)
    own = LayerRunner()
    try:
        return own.run(steps, first, budget_s)
    finally:
        own.close()


async def decide_async(
    call: CallInfo,
    analysis: Analysis,
    layers: Sequence[Layer],
    *,
    default: Effect,
    layer_budget_ms: int,
    runner: LayerRunner,
) -> Verdict:
    """:func:`decide` for the event loop: guarded layers are awaited, never waited for.

    Up to the first guarded ask it runs inline, as :func:`decide` does; with no
    guarded layer it never leaves the loop's thread.
    """
    budget_s = layer_budget_ms / 1000
    steps = _waterfall(call, analysis, layers, default, budget_s)
    try:
        first = next(steps)
    except StopIteration as done:
        verdict: Verdict = done.value
        return verdict
    return await runner.run_async(steps, first, budget_s)


def new_plugin_manager() -> pluggy.PluginManager:
    from shellgate import hookspecs

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm
