"""The decision step, shared by the gate and ``shellgate check``.

input guard → analyse → every layer over every segment → reduce. It never
executes anything, so ``shellgate check`` builds only this.

Built-in layers run inline; every plugin layer (configured or registered) runs on
a worker thread of its own under ``[policy] plugin_timeout_ms``
(:mod:`shellgate.policy.deadline`). :meth:`Decider.decide` blocks its caller for at
most that budget per plugin layer; :meth:`Decider.decide_async`, the gate's path,
awaits instead, so a hung plugin never stalls the event loop.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

from shellgate.config import Config
from shellgate.models import (
    Analysis,
    CallInfo,
    Decision,
    Segment,
    SegmentVerdict,
    Verdict,
    Write,
)
from shellgate.policy.builtin import INPUT_GUARD, input_guard
from shellgate.policy.casbin_layer import CasbinLayer, unavailable
from shellgate.policy.deadline import LayerRunner
from shellgate.policy.engine import Layer, decide, decide_async, layers_of, new_plugin_manager
from shellgate.policy.physical import one_decision
from shellgate.policy.plugins import register_plugin
from shellgate.policy.ruleset import PolicyState
from shellgate.policy.setup import register_layers
from shellgate.policy.write_rules import LAYER as WRITE_RULES
from shellgate.policy.write_rules import WriteRulesLayer


class Decider:
    """Owns one plugin manager with the configured layers (one per gate)."""

    def __init__(self, config: Config, *, env: Mapping[str, str] | None = None) -> None:
        """``env``: the caller entries the gate adds to every command's environment
        (``Gate(env=…)``), so ``$HOME`` and the like are read as the command will
        see them; ``None``, none."""
        self.config = config
        self.env: Mapping[str, str] = {} if env is None else env
        self.pm = new_plugin_manager()
        register_layers(self.pm, config)
        self.pm.check_pending()
        # What register_layers registered besides the configured plugins is ours.
        configured = set(config.policy.plugins)
        self._builtin = frozenset(n for n, _ in self.pm.list_name_plugin() if n not in configured)
        self._layers: list[Layer] = layers_of(self.pm, self._builtin)
        self._runner = LayerRunner()
        rules = self.pm.get_plugin(CasbinLayer.name)
        self.rules = rules if isinstance(rules, CasbinLayer) else None
        # Pinning costs a little; without a store the file sets change only on reload.
        self._pin = self.rules is not None and config.policy.store is not None
        self.closing_default = config.policy.closing_default  # resolved once: it stats paths
        _freeze_start_up()

    def register(self, plugin: object, *, name: str) -> None:
        """Add a layer (or execute wrapper) object after the configured ones.

        For embedding code and tests; deployments load plugins by name from
        config. The same checks as for a configured plugin apply: a misspelled or
        misdeclared hook raises :class:`~shellgate.errors.PluginError` naming the
        plugin, and the plugin is not registered.
        """
        register_plugin(self.pm, plugin, name)
        self._layers = layers_of(self.pm, self._builtin)

    def watch(self, gate: str) -> None:
        """Start live reload (``docs/fleet.md``): a thread that follows the policy
        store and the policy files; :meth:`close` stops it. Gates call this; a
        one-shot decision (``shellgate check``, a host hook) does not."""
        pol = self.config.policy
        if self.rules is not None and (
            pol.store is not None or (pol.reload_poll_ms > 0 and self.rules.paths)
        ):
            self._pin = True  # the files may now change under a running call
            self.rules.watch(gate=gate, poll_ms=self.config.policy.reload_poll_ms)

    def stop_watching(self) -> None:
        """Stop the live-reload thread and close the store (calls still decide)."""
        if self.rules is not None:
            self.rules.close()

    @property
    def policy_problem(self) -> str | None:
        """Why no good policy is in force (every call is then denied), or None."""
        if self.rules is None or self.rules.state.engine is not None:
            return None
        return self.rules.state.problem or "no policy loaded"

    def close(self) -> None:
        """Let the plugin layers' idle worker threads end (also done when collected),
        and stop the live-reload thread."""
        self.stop_watching()
        self._runner.close()

    @property
    def layers(self) -> tuple[Layer, ...]:
        """The layers in call order; plugin layers are ``guarded`` (run under a deadline)."""
        return tuple(self._layers)

    @property
    def layer_names(self) -> list[str]:
        return [layer.name for layer in self._layers]

    def analyse(self, call: CallInfo) -> Analysis:
        from shellgate.shell import analyse
        from shellgate.shell.analyse import FIXED_VARIABLES

        pol = self.config.policy
        scrub = self.config.executor.scrub_env
        env = None  # the command sees this process's environment (bar credentials)
        exported = None
        if self.env or scrub:
            from shellgate.command_env import exports, seen  # not on a hook's start-up

            env = seen(FIXED_VARIABLES, self.env, extra_scrub=scrub)
            exported = exports(self.env, extra_scrub=scrub)
        return analyse(
            call.command,
            workdir=call.workdir,
            workspace=call.workspace,
            max_segments=pol.max_segments,
            max_depth=pol.max_depth,
            max_nodes=pol.max_syntax_nodes,
            env=env,
            exported=exported,
        )

    def decide(self, call: CallInfo) -> Verdict:
        """The verdict for ``call``; blocks up to the budget per plugin layer."""
        early = self._before_layers(call)
        if isinstance(early, Verdict):
            return early
        if not self._pin:
            return self._decide(call, early)
        assert self.rules is not None
        state = self.rules.pin(call)  # every segment of this call sees one policy
        try:
            return _versioned(self._decide(call, early), state, early)
        finally:
            self.rules.unpin(call)

    def _decide(self, call: CallInfo, analysis: Analysis) -> Verdict:
        pol = self.config.policy
        with one_decision():  # the layers resolve each path once
            return decide(
                call,
                analysis,
                self._layers,
                default=self.closing_default,
                layer_budget_ms=pol.plugin_timeout_ms,
                runner=self._runner,
            )

    async def decide_async(self, call: CallInfo) -> Verdict:
        """The verdict for ``call``, awaiting plugin layers (the loop runs on meanwhile)."""
        early = self._before_layers(call)
        if isinstance(early, Verdict):
            return early
        pol = self.config.policy
        if not self._pin:
            with one_decision():
                return await decide_async(call, early, self._layers, default=self.closing_default,
                                          layer_budget_ms=pol.plugin_timeout_ms,
                                          runner=self._runner)
        assert self.rules is not None
        state = self.rules.pin(call)
        try:
            with one_decision():
                verdict = await decide_async(
                    call, early, self._layers, default=self.closing_default,
                    layer_budget_ms=pol.plugin_timeout_ms, runner=self._runner,
                )
        finally:
            self.rules.unpin(call)
        return _versioned(verdict, state, early)

    def write_decisions(
        self, call: CallInfo, verdict: Verdict
    ) -> list[list[tuple[Write, Decision]]]:
        """Each segment's writes with the decision of the ``write:`` rules on each
        (``shellgate check`` and the console's playground list them)."""
        layer = self.pm.get_plugin(WRITE_RULES)
        if not isinstance(layer, WriteRulesLayer):
            return [[] for _ in verdict.segments]
        with one_decision():
            return [layer.decisions(call, sv.segment) for sv in verdict.segments]

    def _before_layers(self, call: CallInfo) -> Verdict | Analysis:
        """Input guard and analysis: a final verdict, or the analysis for the layers."""
        pol = self.config.policy
        guard = input_guard(call.command, max_command_bytes=pol.max_command_bytes)
        if guard is not None:
            whole = Segment(text=call.command[:200], argv=())
            return Verdict(
                decision=guard, segments=(SegmentVerdict(segment=whole, decision=guard),)
            )
        try:
            analysis = self.analyse(call)
        except Exception as exc:  # the analyser failing must never let a command through
            failure = Decision(
                effect="deny",
                reason=f"command analysis failed ({type(exc).__name__}: {exc}); denied because "
                "what cannot be read cannot be allowed",
                layer="command-analysis",
            )
            whole = Segment(text=call.command[:200], argv=())
            return Verdict(
                decision=failure, segments=(SegmentVerdict(segment=whole, decision=failure),)
            )
        if analysis.refused is not None:
            refusal = Decision(effect="deny", reason=analysis.refused, layer=INPUT_GUARD)
            return Verdict(
                decision=refusal,
                segments=tuple(
                    SegmentVerdict(segment=s, decision=refusal) for s in analysis.segments
                ),
            )
        return analysis


_frozen = False


def _freeze_start_up() -> None:
    """Once per process, after the first decider is built: move what start-up made
    (modules, parsers, schemas: some 30,000 objects) out of the cyclic GC's sight.
    A full collection walks every tracked object; without this, one landing on a
    decision cost it ~30 ms. Later objects (the caches) are collected as ever."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


def _versioned(verdict: Verdict, state: PolicyState, analysis: Analysis) -> Verdict:
    """The verdict with the store version that decided it; without a good policy,
    a deny for the whole call, whatever the layers said (even with no segment)."""
    if state.engine is None:
        refusal = unavailable(state)
        segments = tuple(SegmentVerdict(segment=s, decision=refusal) for s in analysis.segments)
        return Verdict(decision=refusal, segments=segments or verdict.segments,
                       policy_version=state.version)
    if state.version is None:
        return verdict
    return verdict.model_copy(update={"policy_version": state.version})
