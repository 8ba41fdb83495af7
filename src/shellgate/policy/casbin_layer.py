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

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellgate.errors import PolicyError
from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment
from shellgate.policy.index import PolicyIndex, rank
from shellgate.policy.loader import PolicySource, Rule, load_policy_set
from shellgate.shell.argv.canonical import shown

if TYPE_CHECKING:
    from shellgate.policy.live import PolicyLoader, PolicyWatcher

LAYER = "casbin"


@dataclass(frozen=True, slots=True)
class Match:
    """A rule that matched, and the command form it matched."""

    rule: Rule
    text: str
    canonical: bool = False  # ``text`` is a canonical form of the segment


def _key(directory: str | Path) -> str:
    return os.path.normpath(os.path.abspath(directory))


def set_names(directories: Sequence[Path]) -> dict[str, str]:
    """Each set's short name: its directory's name, with as many parent names as it
    takes to tell two sets apart (``a/default``, ``b/default``)."""
    parts = {key: key.strip("/").split("/") for key in dict.fromkeys(map(_key, directories))}
    names: dict[str, str] = {}
    for key, mine in parts.items():
        depth = 1
        while depth < len(mine) and any(
            other[-depth:] == mine[-depth:] for k, other in parts.items() if k != key
        ):
            depth += 1
        names[key] = "/".join(mine[-depth:])
    return names


#: Stands for "any program" in a runner's spelling (a NUL never reaches the rules
#: from a command): an allow rule matching it would allow every program there.
PROBE = "\x00any-program"


def segment_texts(segment: Segment) -> tuple[str, tuple[str, ...]]:
    """The allow form (argv joined) and the other deny/ask forms, without repeats
    (a runner's spelling of the program, ``python -m pip install x``, among them)."""
    command = segment.command
    others: list[str] = []
    spelled = (segment.via,) if segment.via else ()
    for form in (*segment.all_forms()[1:], *spelled):
        text = " ".join(form)
        if text != command and text not in others:
            others.append(text)
    return command, tuple(others)


def via_texts(segment: Segment) -> tuple[str, str] | None:
    """A runner's spelling of the program and the same with any program in its place."""
    if not segment.via or not 0 < segment.via_at < len(segment.via):
        return None
    probe = list(segment.via)
    probe[segment.via_at] = PROBE
    return " ".join(segment.via), " ".join(probe)


class RuleFinder(Protocol):
    """Finds the deciding rule of one set: :class:`PolicyIndex`, or casbin itself."""

    @property
    def source(self) -> PolicySource: ...

    def best(
        self, subject: str, tenant: str, text: str, *, allow: bool = True, canonical: bool = False
    ) -> Rule | None: ...

    def best_write(
        self, subject: str, tenant: str, text: str, *, allow: bool = True
    ) -> Rule | None: ...

    def best_naming(self, subject: str, tenant: str, text: str, probe: str) -> Rule | None: ...


#: Segments whose casbin decision an engine remembers (as many as the analysis
#: cache keeps analyses, each of which has a few).
_DECIDED_KEPT = 4096


class PolicyEngine:
    """Every configured policy set, immutable once built.

    Built over indexes for the gate; over :class:`~shellgate.policy.reference.
    ReferenceEnforcer` objects it is plain casbin with the same combination logic,
    which is what ``policy test`` and the differential test compare against.
    """

    def __init__(self, indexes: Sequence[RuleFinder]) -> None:
        self.indexes = tuple(indexes)
        # The layer's decisions for recent segments (see CasbinLayer.shellgate_check).
        self.decided: dict[tuple[int, str, str], tuple[Segment, Decision | None]] = {}
        self._set_names = set_names(
            [i.source.directory for i in self.indexes if i.source.label is None]
        )
        # A set read from a store is named by its label (its name in the store).
        self._labels = {
            i.source.rule_file: i.source.label for i in self.indexes if i.source.label is not None
        }

    def ref(self, rule: Rule) -> str:
        """The rule's name in decisions: ``<set>/policy.csv:<line>``, the set named by
        its directory (``default/policy.csv:111``), never a host path, or by its name
        in the policy store."""
        label = self._labels.get(rule.file)
        if label is not None:
            return f"{label}/{os.path.basename(rule.file)}:{rule.line}"
        directory = os.path.dirname(rule.file)
        name = self._set_names.get(_key(directory), directory)
        return f"{name}/{os.path.basename(rule.file)}:{rule.line}"

    @classmethod
    def load(cls, paths: Sequence[Path]) -> PolicyEngine:
        """Load every set; raises :class:`~shellgate.errors.PolicyError` on the first bad one."""
        return cls([PolicyIndex(load_policy_set(Path(p))) for p in paths])

    @property
    def rule_count(self) -> int:
        return sum(len(i.source.rules) for i in self.indexes)

    def rules_for(self, subject: str, tenant: str) -> int:
        """How many rules of all sets apply to ``subject`` in ``tenant`` (its own and its
        roles'): 0 means only the built-in layers and the closing default decide for it."""
        return sum(
            (i if isinstance(i, PolicyIndex) else PolicyIndex(i.source)).rules_for(subject, tenant)
            for i in self.indexes
        )

    def match(self, subject: str, tenant: str, segment: Segment) -> Match | None:
        """The deciding rule for one segment over all sets, or ``None`` for "no rule".

        A fragment of a line that does not parse meets no rule: the parse error
        asks for the whole line (a rule matched against pieces of it, a heredoc
        body's ``def f(x):`` read as ``:``, would explain nothing right)."""
        if not segment.argv or segment.fragment:
            return None
        command, others = segment_texts(segment)
        # Matched in the canonical way even when the text is also a literal form:
        # `rm -f -r x` must meet `rm -rf *` (read as a command), not only itself.
        canonical = tuple(dict.fromkeys(segment.canonical))
        via = via_texts(segment)
        best: Match | None = None
        for index in self.indexes:
            found = self._match_one(index, subject, tenant, command, others, canonical)
            if via is not None:
                # An allow naming the program through its runner (`python -m pytest *`)
                # covers it; one that matches any program there (`python *`) does not.
                rule = index.best_naming(subject, tenant, via[0], via[1])
                if rule is not None and (found is None or rank(rule)[0] < rank(found.rule)[0]):
                    found = Match(rule, via[0])
            if found is not None and (
                best is None or rank(found.rule)[0] < rank(best.rule)[0]
            ):
                best = found
        return best

    def trusted_source(self, subject: str, tenant: str, names: Sequence[str]) -> Rule | None:
        """An allow rule naming ``source NAME`` (one of ``names``): a file the rules
        trust to run in the shell, whose writes therefore ask. A rule that would
        allow sourcing any file (``source *``, ``*``) names none."""
        for index in self.indexes:
            for name in names:
                rule = index.best_naming(subject, tenant, f"source {name}", f"source {PROBE}")
                if rule is not None:
                    return rule
        return None

    def match_write(
        self, subject: str, tenant: str, physical: Sequence[str], lexical: Sequence[str] = ()
    ) -> Rule | None:
        """The deciding ``write:`` rule over all sets for one write: ``physical`` texts
        (where it really lands) meet every rule, ``lexical`` ones (as written, when
        that differs) only deny and ask rules, as a command's other forms do."""
        best: Rule | None = None
        for index in self.indexes:
            for text, allow in (*((t, True) for t in physical), *((t, False) for t in lexical)):
                rule = index.best_write(subject, tenant, text, allow=allow)
                if rule is not None and (best is None or rank(rule)[0] < rank(best)[0]):
                    best = rule
        return best

    @staticmethod
    def _match_one(
        index: RuleFinder,
        subject: str,
        tenant: str,
        command: str,
        others: tuple[str, ...],
        canonical: tuple[str, ...],
    ) -> Match | None:
        rule = index.best(subject, tenant, command, allow=True)
        best = Match(rule, command) if rule is not None else None
        # Deny and ask rules: every other form, then every canonical form.
        for text, is_canonical in (*((t, False) for t in others), *((c, True) for c in canonical)):
            if best is not None and best.rule.effect == "deny":
                break
            rule = index.best(subject, tenant, text, allow=False, canonical=is_canonical)
            if rule is not None and (best is None or rank(rule)[0] < rank(best.rule)[0]):
                best = Match(rule, text, is_canonical)
        return best


#: Longest pattern a reason quotes; a longer one is named by its rule reference only
#: (cut, a regular expression reads as something else).
MAX_PATTERN_SHOWN = 60  # characters


def explain(match: Match, segment: Segment) -> str:
    """The decision's reason: the admin's own text if given, else what matched.

    The rule's ``<set>/policy.csv:<line>`` travels in ``Decision.rule`` and every
    renderer prints it beside this reason, so the reason says only what the rule
    is and what it matched. A pattern is quoted whole or not at all, and a rule
    with a reason never quotes a regular expression: the reason says it better.
    """
    rule = match.rule
    kind = "canonical form" if match.canonical else "read as"
    read = shown(match.text) if match.canonical else match.text
    how = "" if match.text == segment.command else f" ({kind} '{_cut(read)}')"
    what = f"'{_cut(segment.command)}'{how}"
    pattern = rule.pattern.text
    regex_with_reason = bool(rule.reason) and rule.pattern.kind == "regex"
    quoted = len(pattern) <= MAX_PATTERN_SHOWN and not regex_with_reason
    rule_text = f"{rule.effect} '{pattern}'" if quoted else f"{rule.effect} rule"
    if rule.reason:
        return f"{rule.reason} ({rule_text} matches {what})"
    return f"{rule_text} for {rule.subject} in tenant {rule.tenant} matches {what}"


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class PolicyState:
    """The rules in force, swapped whole: the engine, the store version it holds
    (``None`` without a store) and, when there is no good policy, why."""

    engine: PolicyEngine | None
    version: int | None = None
    problem: str | None = None


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
    ) -> None:
        self.paths = tuple(Path(p) for p in paths)
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

            self._loader = PolicyLoader(self.paths, self.store, self.store_sets)
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
