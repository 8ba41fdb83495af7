"""The casbin rules layer: the admin's ``policy.csv`` rules over every segment.

Semantics (``docs/policies.md``):

* deny and ask rules match the segment's argv joined by single spaces *and* every
  normalised form (wrappers peeled, ``/bin/rm`` read as ``rm``…); allow rules match
  only the argv form, so a wrapper can never earn an allow meant for its payload;
* among the matching rules of every loaded set, the strictest effect wins; among
  equals, the first set in config order and, within a set, the first line;
* no matching rule means the layer abstains (``None``), never "allow".

Reload builds a complete new :class:`PolicyEngine` and then swaps one reference:
a check reads that reference once, so it sees either the old rules or the new ones
whole, never a half-loaded set, and never waits for a reload.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shellgate.errors import PolicyError
from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment
from shellgate.policy.ruleset import (
    PolicyEngine,
    PolicyState,
    explain,
)

if TYPE_CHECKING:
    from shellgate.policy.live import PolicyLoader, PolicyWatcher

LAYER = "casbin"

#: Segments whose casbin decision an engine remembers (as many as the analysis
#: cache keeps analyses, each of which has a few).
_DECIDED_KEPT = 4096


class CasbinLayer:
    """The ``casbin`` waterfall layer over ``paths`` (strictest answer across all sets),
    then the sets of a policy store (``docs/fleet.md``).

    Broken file sets raise at start-up as always. A store that cannot give a good
    policy at start-up (unreachable, empty, broken) does not stop the gate: every
    call is then denied naming the problem, until a good policy loads.
    """

    name = LAYER

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        store: str | None = None,
        store_sets: Sequence[str] = (),
        after: Sequence[Path] = (),
    ) -> None:
        # ``after``: file sets loaded after everything else, a store's sets included
        # (the packaged baseline: where another set denies too, that one is reported).
        self.paths = tuple(Path(p) for p in (*paths, *after))
        self.after = len(after)
        self.store = store
        self.store_sets = tuple(store_sets)
        self._pins: dict[int, PolicyState] = {}
        self._loader: PolicyLoader | None = None
        self._watcher: PolicyWatcher | None = None
        if store is None:
            self._state = PolicyState(PolicyEngine.load(self.paths))
        else:
            self._state = self.loader().first()

    def loader(self) -> PolicyLoader:
        """What builds new states (files with their fingerprints, the store's head)."""
        if self._loader is None:
            from shellgate.policy.live import PolicyLoader

            self._loader = PolicyLoader(self.paths, self.store, self.store_sets, after=self.after)
        return self._loader

    @property
    def state(self) -> PolicyState:
        return self._state

    @property
    def engine(self) -> PolicyEngine:
        """The engine in force; :class:`PolicyError` when there is no good policy."""
        engine = self._state.engine
        if engine is None:
            raise PolicyError(self._state.problem or "no policy loaded")
        return engine

    def swap(self, state: PolicyState) -> None:
        """Put ``state`` in force: one reference assignment, atomic for readers."""
        self._state = state

    def reload(self) -> None:
        """Re-read every set; on a load error the old rules stay and the error is raised."""
        if self.store is None:
            self._state = PolicyState(PolicyEngine.load(self.paths))  # one reference swap
            return
        self.loader().build(force=True, apply=self.swap)

    def watch(self, *, gate: str, poll_ms: int) -> None:
        """Start the reload watcher thread (stopped by :meth:`close`)."""
        from shellgate.policy.live import PolicyWatcher

        if self._watcher is None:
            self._watcher = PolicyWatcher(self, gate=gate, poll_ms=poll_ms)
            self._watcher.start()

    def close(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
        if self._loader is not None:
            self._loader.close()

    def pin(self, call: CallInfo) -> PolicyState:
        """Hold the current state for every segment of ``call`` (see :meth:`unpin`)."""
        state = self._state
        self._pins[id(call)] = state
        return state

    def unpin(self, call: CallInfo) -> None:
        self._pins.pop(id(call), None)

    def state_for(self, call: CallInfo) -> PolicyState:
        """The state ``call`` pinned (the one in force when it is not pinned)."""
        return self._pins.get(id(call)) or self._state

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        state = self._pins.get(id(call)) or self._state
        engine = state.engine
        if engine is None:
            return unavailable(state)
        # The decision is a pure function of the engine (immutable: a reload
        # swaps it whole), the subject, the tenant and the segment (frozen), and
        # a repeated command brings back the very same Segment from the analysis
        # cache: remembered by identity, kept alive by the entry itself so that
        # its id cannot be reused while the entry stands.
        key = (id(segment), call.subject, call.tenant)
        hit = engine.decided.get(key)
        if hit is not None and hit[0] is segment:
            return hit[1]
        match = engine.match(call.subject, call.tenant, segment)
        decision = None if match is None else Decision(
            effect=match.rule.effect,
            reason=explain(match, segment),
            layer=LAYER,
            rule=engine.ref(match.rule),
        )
        if len(engine.decided) >= _DECIDED_KEPT:
            engine.decided.clear()
        engine.decided[key] = (segment, decision)
        return decision


def unavailable(state: PolicyState) -> Decision:
    """The deny of a gate without a good policy."""
    return Decision(
        effect="deny",
        reason=f"no policy in force: {state.problem or 'not loaded'}; every command is denied "
        "until a good policy loads",
        layer=LAYER,
    )
