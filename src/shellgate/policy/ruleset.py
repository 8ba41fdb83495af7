"""The rules in force: a :class:`PolicyEngine` over every loaded set's index, the
:class:`PolicyState` that reload swaps whole, and how a match is explained.

The casbin layer (:mod:`shellgate.policy.casbin_layer`) decides with it; live
reload (:mod:`shellgate.policy.live`) builds new ones. Semantics are in that
layer's docstring and ``docs/policies.md``.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shellgate.models import Decision, Segment
from shellgate.policy.index import PolicyIndex, rank
from shellgate.policy.loader import PolicySource, Rule, load_policy_set
from shellgate.shell.argv.canonical import shown


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

    def source_rules(self, subject: str, tenant: str) -> list[Rule]: ...


class PolicyEngine:
    """Every configured policy set, immutable once built.

    Built over indexes for the gate; over :class:`~shellgate.policy.reference.
    ReferenceEnforcer` objects it is plain casbin with the same combination logic,
    which is what ``policy test`` and the differential test compare against.
    """

    def __init__(self, indexes: Sequence[RuleFinder]) -> None:
        self.indexes = tuple(indexes)
        # The casbin layer's decisions for recent segments (CasbinLayer.shellgate_check).
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

    @functools.cached_property
    def sandboxes(self) -> bool:
        """Whether any rule of any set has the effect ``sandbox`` (an engine never
        changes, so this is computed once)."""
        return any(rule.effect == "sandbox" for i in self.indexes for rule in i.source.rules)

    def rules_for(self, subject: str, tenant: str) -> int:
        """How many rules of all sets apply to ``subject`` in ``tenant`` (its own and its
        roles'): 0 means only the built-in layers and the closing default decide for it."""
        return sum(
            (i if isinstance(i, PolicyIndex) else PolicyIndex(i.source)).rules_for(subject, tenant)
            for i in self.indexes
            if not i.source.everyone  # the baseline binds everyone: it names nobody
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

    def trusted_below(self, subject: str, tenant: str, names: Sequence[str]) -> Rule | None:
        """An allow rule naming ``source FILE`` for a FILE below one of the directories
        ``names`` (``mv mine .venv``, ``cp -t .venv/bin x`` replace what
        ``source .venv/bin/activate`` trusts): writing the directory may change it."""
        for index in self.indexes:
            for rule in index.source_rules(subject, tenant):
                if rule.pattern.matches(f"source {PROBE}"):
                    continue  # `source *` names no file
                words = rule.pattern.text.split(" ", 1)
                file = words[1].removesuffix(" *") if len(words) == 2 else ""
                parts = file.split("/")
                for name in names:
                    here = name.rstrip("/").split("/")
                    if len(parts) > len(here) and all(
                        fnmatch.fnmatchcase(d, p) for d, p in zip(here, parts, strict=False)
                    ):
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
