"""Plain casbin over a loaded policy set: the reference the index must agree with.

This builds a real ``casbin.Enforcer`` from the shipped ``model.conf`` and the set's
validated rows, so ``enforce_ex`` is casbin's own evaluation of shellgate's model.
The gate does not call it per command (it scans every rule, and casbin's per-tenant
role manager is quadratic in role links); ``policy test`` cross-checks each row with
it, and the differential test and ``benchmarks/decide.py`` compare the index with it.

casbin is imported here only, lazily: a cold ``shellgate check`` never pays for it.
"""

from __future__ import annotations

from typing import Any

from shellgate.models import LOOSE, STRICTNESS
from shellgate.policy.loader import EVERYONE, SHIPPED_MODEL, PolicySource, Rule
from shellgate.policy.patterns import WRITE_MARK, Pattern

#: Marks a request as a canonical form (a NUL never reaches the rules: the input
#: guard denies it), so casbin's matcher calls ``Pattern.matches_canonical``.
CANONICAL_MARK = "\x00canonical:"


def _tenant_match(request_tenant: str, link_tenant: str) -> bool:
    # casbin asks (request domain, link domain): a link in "*" holds in every tenant.
    return link_tenant == "*" or request_tenant == link_tenant


class ReferenceEnforcer:
    """casbin's ``Enforcer`` over one policy set, answering with shellgate's rules."""

    def __init__(self, source: PolicySource) -> None:
        import casbin
        from casbin.persist.adapter import Adapter

        self.source = source
        ordered = sorted(source.rules, key=lambda r: (-STRICTNESS[r.effect], r.order))
        self._by_row: dict[tuple[str, ...], Rule] = {}
        rows: list[list[str]] = []
        for rule in ordered:
            row = [rule.subject, rule.tenant, rule.pattern.text, rule.effect, rule.reason]
            rows.append(row)
            self._by_row.setdefault(tuple(row), rule)
        links = [[lk.user, lk.role, lk.tenant] for lk in source.links]
        # The set's own compiled patterns, so casbin's matcher calls the very same
        # matching code as the index (and does not recompile per call).
        patterns: dict[str, Pattern] = {r.pattern.text: r.pattern for r in source.rules}

        def command_match(command: Any, pattern: Any) -> bool:
            compiled = patterns.get(str(pattern))  # "" when casbin evaluates an empty policy
            if compiled is None:
                return False
            text = str(command)
            if text.startswith(WRITE_MARK) != compiled.is_write:
                return False  # a write meets write rules only, a command command rules only
            if text.startswith(CANONICAL_MARK):
                return compiled.matches_canonical(text[len(CANONICAL_MARK) :])
            return compiled.matches(text)

        class _Rows(Adapter):  # type: ignore[misc]
            def load_policy(self, model: Any) -> None:
                # Append as casbin's own file adapter does: model.add_policy checks
                # for duplicates by a linear scan, quadratic over a large set.
                model.model["p"]["p"].policy.extend(rows)
                model.model["g"]["g"].policy.extend(links)

        enforcer = casbin.Enforcer(str(SHIPPED_MODEL), _Rows())
        enforcer.add_function("commandMatch", command_match)
        enforcer.add_named_domain_matching_func("g", _tenant_match)
        enforcer.build_role_links()
        self._enforcer = enforcer
        self._everyone: set[str] = set()  # subjects linked to EVERYONE (the baseline)

    def _holds_everyone(self, subject: str) -> None:
        """In the baseline every subject holds the role ``everyone``: casbin learns
        that link for each subject it is asked about."""
        if self.source.everyone and subject != EVERYONE and subject not in self._everyone:
            self._enforcer.add_named_grouping_policy("g", subject, EVERYONE, "*")
            self._everyone.add(subject)

    def best_naming(self, subject: str, tenant: str, text: str, probe: str) -> Rule | None:
        """The first allow or sandbox rule matching ``text`` but not ``probe`` (``Segment.via``):
        casbin's ``enforce`` reports one match only, so this walks the rules in
        casbin's order for the roles casbin's role manager gives the subject."""
        self._holds_everyone(subject)
        roles = {subject, *self._enforcer.get_implicit_roles_for_user(subject, tenant)}
        if tenant != "*":
            roles |= set(self._enforcer.get_implicit_roles_for_user(subject, "*"))
        ordered = sorted(self.source.rules, key=lambda r: (-STRICTNESS[r.effect], r.order))
        for rule in ordered:
            if (rule.effect in LOOSE and not rule.pattern.is_write and rule.subject in roles
                    and rule.tenant in (tenant, "*") and rule.pattern.matches(text)
                    and not rule.pattern.matches(probe)):
                return rule
        return None

    def source_rules(self, subject: str, tenant: str) -> list[Rule]:
        """The allow rules on ``source …`` for the roles casbin gives the subject."""
        roles = {subject, *self._enforcer.get_implicit_roles_for_user(subject, tenant)}
        if tenant != "*":
            roles |= set(self._enforcer.get_implicit_roles_for_user(subject, "*"))
        ordered = sorted(self.source.rules, key=lambda r: (-STRICTNESS[r.effect], r.order))
        return [r for r in ordered if r.effect == "allow" and not r.pattern.is_write
                and r.subject in roles and r.tenant in (tenant, "*")
                and r.pattern.text.startswith("source ")]  # fmt: skip

    def best_write(
        self, subject: str, tenant: str, text: str, *, allow: bool = True
    ) -> Rule | None:
        """The first ``write:`` rule casbin matches for a write text."""
        return self.best(subject, tenant, text, allow=allow)

    def best(
        self, subject: str, tenant: str, text: str, *, allow: bool = True, canonical: bool = False
    ) -> Rule | None:
        """The first rule casbin's ``enforce_ex`` matches, as :meth:`PolicyIndex.best`."""
        self._holds_everyone(subject)
        request = CANONICAL_MARK + text if canonical else text
        allowed, explain = self._enforcer.enforce_ex(subject, tenant, request)
        if not allowed or not explain:
            return None  # casbin's False here means "no rule matched"
        rule = self._by_row[tuple(explain)]
        if not allow and rule.effect in LOOSE:
            return None
        return rule
