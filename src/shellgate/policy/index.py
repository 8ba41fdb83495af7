"""The index in front of casbin: the same answers as plain ``enforce``, without the scan.

Plain casbin evaluates its matcher against every rule for every check (tens of
milliseconds at 10,000 rules), and its per-tenant role manager is quadratic in a
tenant's role links on the first check after a load. This index answers the same
question — *the first rule, in casbin's order, whose subject the requester holds,
whose tenant is the request's or ``*``, and whose pattern matches* — by looking only
where such a rule can be:

1. the requester's names: the subject plus every role reachable through ``g`` links
   of the request's tenant or of ``*``, at most :data:`MAX_ROLE_HOPS` links deep
   (casbin's default role manager stops at the same depth);
2. for each name and each of (tenant, ``*``): the rules whose pattern key is the
   command's first word, and the rules whose pattern has no key.

Every bucket is sorted in casbin's order — strictness (deny, ask, sandbox, allow), then file
order — so the first match in a bucket is that bucket's best and a bucket stops as
soon as its next rule could not beat the best found so far. ``tests/policy`` holds
a hypothesis test that compares this index with casbin's own ``enforce_ex`` on
random policies and commands.

A :class:`PolicyIndex` never changes after construction; reloading builds a new one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from shellgate.models import LOOSE, STRICTNESS
from shellgate.policy.loader import EVERYONE, PolicySource, Rule
from shellgate.policy.patterns import first_word

#: casbin's default role manager checks the subject and 9 levels of roles (level 10).
MAX_ROLE_HOPS = 9
_NAMES_CACHE_MAX = 4096  # (subject, tenant) pairs; cleared when full


def rank(rule: Rule) -> tuple[int, int]:
    """casbin's order of the rules handed to it: stricter first, then file order."""
    return (-STRICTNESS[rule.effect], rule.order)


@dataclass(frozen=True, slots=True)
class _Bucket:
    by_word: dict[str, tuple[Rule, ...]]
    wild: tuple[Rule, ...]


def _first_match(
    rules: tuple[Rule, ...], text: str, best: Rule | None, *, allow: bool, canonical: bool
) -> Rule | None:
    """The first rule of sorted ``rules`` matching ``text`` that beats ``best``."""
    for rule in rules:
        if best is not None and rank(rule) >= rank(best):
            return None  # sorted: nothing later can beat ``best``
        if not allow and rule.effect in LOOSE:
            return None  # sorted: only sandbox and allow rules follow
        if canonical:
            if rule.pattern.matches_canonical(text):
                return rule
        elif rule.pattern.matches(text):
            return rule
    return None


class PolicyIndex:
    """One loaded policy set, indexed by (tenant, subject or role) and first word."""

    def __init__(self, source: PolicySource) -> None:
        self.source = source
        grouped: dict[tuple[str, str], tuple[dict[str, list[Rule]], list[Rule]]] = {}
        writes: dict[tuple[str, str], list[Rule]] = defaultdict(list)
        for rule in sorted(source.rules, key=rank):
            if rule.pattern.is_write:
                writes[(rule.tenant, rule.subject)].append(rule)
                continue
            words, wild = grouped.setdefault((rule.tenant, rule.subject), (defaultdict(list), []))
            if rule.pattern.key is None:
                wild.append(rule)
            else:
                words[rule.pattern.key].append(rule)
        self._buckets = {
            where: _Bucket({w: tuple(rs) for w, rs in words.items()}, tuple(wild))
            for where, (words, wild) in grouped.items()
        }
        #: ``write:GLOB`` rules, apart: a command never meets them, nor a write a command rule.
        self._writes = {where: tuple(rules) for where, rules in writes.items()}
        roles: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for link in source.links:
            roles[link.tenant][link.user].append(link.role)
        self._roles = {t: {u: tuple(rs) for u, rs in users.items()} for t, users in roles.items()}
        self._names: dict[tuple[str, str], tuple[str, ...]] = {}

    def names(self, subject: str, tenant: str) -> tuple[str, ...]:
        """The subject and every role it holds in ``tenant`` (breadth first, capped depth)."""
        cached = self._names.get((subject, tenant))
        if cached is not None:
            return cached
        graphs = [self._roles.get(tenant, {})]
        if tenant != "*":
            graphs.append(self._roles.get("*", {}))
        seen = [subject]
        if self.source.everyone and subject != EVERYONE:
            seen.append(EVERYONE)  # the baseline binds whoever asks
        frontier = list(seen)
        for _ in range(MAX_ROLE_HOPS):
            nxt: list[str] = []
            for name in frontier:
                for graph in graphs:
                    for role in graph.get(name, ()):
                        if role not in seen:
                            seen.append(role)
                            nxt.append(role)
            if not nxt:
                break
            frontier = nxt
        found = tuple(seen)
        if len(self._names) >= _NAMES_CACHE_MAX:
            self._names.clear()
        self._names[(subject, tenant)] = found
        return found

    def rules_for(self, subject: str, tenant: str) -> int:
        """How many rules apply to ``subject`` in ``tenant``: its own and its roles'."""
        tenants = (tenant,) if tenant == "*" else (tenant, "*")
        count = 0
        for name in self.names(subject, tenant):
            for where in tenants:
                bucket = self._buckets.get((where, name))
                if bucket is not None:
                    count += len(bucket.wild) + sum(map(len, bucket.by_word.values()))
        return count

    def best(
        self, subject: str, tenant: str, text: str, *, allow: bool = True, canonical: bool = False
    ) -> Rule | None:
        """The rule plain casbin would report for ``(subject, tenant, text)``.

        With ``allow=False`` only a deny or ask rule is returned: the caller is
        matching a normalised form, which may never earn an allow. ``canonical``:
        ``text`` is a canonical form, matched with ``Pattern.matches_canonical``.
        """
        word = first_word(text)
        tenants = (tenant,) if tenant == "*" else (tenant, "*")
        best: Rule | None = None
        for name in self.names(subject, tenant):
            for where in tenants:
                bucket = self._buckets.get((where, name))
                if bucket is None:
                    continue
                for rules in (bucket.by_word.get(word, ()), bucket.wild):
                    found = _first_match(rules, text, best, allow=allow, canonical=canonical)
                    if found is not None:
                        best = found
        return best

    def best_naming(self, subject: str, tenant: str, text: str, probe: str) -> Rule | None:
        """The first allow or sandbox rule, in casbin's order, matching ``text`` but not
        ``probe``: one that names the program a runner runs (``Segment.via``)."""
        word = first_word(text)
        tenants = (tenant,) if tenant == "*" else (tenant, "*")
        best: Rule | None = None
        for name in self.names(subject, tenant):
            for where in tenants:
                bucket = self._buckets.get((where, name))
                if bucket is None:
                    continue
                for rules in (bucket.by_word.get(word, ()), bucket.wild):
                    for rule in rules:
                        if best is not None and rank(rule) >= rank(best):
                            break
                        if (rule.effect in LOOSE and rule.pattern.matches(text)
                                and not rule.pattern.matches(probe)):
                            best = rule
                            break
        return best

    def source_rules(self, subject: str, tenant: str) -> list[Rule]:
        """The allow rules on ``source …`` for the subject's roles, in casbin's order."""
        tenants = (tenant,) if tenant == "*" else (tenant, "*")
        found: list[Rule] = []
        for name in self.names(subject, tenant):
            for where in tenants:
                bucket = self._buckets.get((where, name))
                if bucket is not None:
                    found.extend(r for r in bucket.by_word.get("source", ()) if r.effect == "allow")
        return found

    def best_write(
        self, subject: str, tenant: str, text: str, *, allow: bool = True
    ) -> Rule | None:
        """The deciding ``write:`` rule for one write text (:func:`~shellgate.policy.
        patterns.write_texts`), in casbin's order as :meth:`best` finds command rules."""
        tenants = (tenant,) if tenant == "*" else (tenant, "*")
        best: Rule | None = None
        for name in self.names(subject, tenant):
            for where in tenants:
                rules = self._writes.get((where, name))
                if rules:
                    found = _first_match(rules, text, best, allow=allow, canonical=False)
                    if found is not None:
                        best = found
        return best
