"""The write-rules layer: ``write:GLOB`` rules decide the files a segment writes.

A segment's writes (``Segment.writes``: redirections, heredocs written to a
file, ``tee``, ``sed -i``, ``cp``/``mv`` destinations, option writes) are
decided here, each on its own, by the admin's ``write:`` rules of every loaded
set (docs/policies.md):

* a write is matched where it really lands: its path with existing symlinks
  resolved (``os.path.realpath``), relative to the workspace root when it lies
  inside it, and always as an absolute path. Its lexical path, when that
  differs, meets deny and ask rules only (as a command's other readings do), so
  ``write:**`` covers only what really lies in the workspace;
* a file with other hard links may be another file under another name: no
  rule allows writing it (ask);
* a write no rule decides gets the closing default (never ``allow``);
* the segment gets the strictest of its writes, as a decision of *scope*
  ``writes``: it never decides the command itself, whose closing default
  applies when no layer decides it.

Protected paths (deny) and secrets (ask) are other layers, earlier in the
waterfall; since the strictest answer wins, no ``write:`` rule can allow them.
"""

from __future__ import annotations

import os

from shellgate.hookspecs import hookimpl
from shellgate.models import STRICTNESS, CallInfo, Decision, Effect, Segment, Write
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.patterns import write_texts
from shellgate.policy.physical import realpath
from shellgate.policy.ruleset import PolicyEngine

LAYER = "write-rules"


def relative_to(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` when strictly inside it, else ``None``."""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) and len(path) > len(prefix) else None


def _hard_links(path: str) -> int:
    try:
        info = os.lstat(path)
    except OSError:
        return 1
    return info.st_nlink if not os.path.isdir(path) else 1


def texts(call: CallInfo, write: Write) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """How one write is matched: the path shown, the texts of where it really lands
    (every rule), and those of its lexical path when that differs (deny and ask)."""
    physical = realpath(write.path)
    inside = relative_to(physical, call.workspace)
    lexical: tuple[str, ...] = ()
    if physical != write.path:
        lexical = write_texts(relative_to(write.path, call.workspace), write.path)
    shown = inside if inside is not None else physical
    return shown, write_texts(inside, physical), lexical


class WriteRulesLayer:
    """Decide every write of a segment by the ``write:`` rules (see the module doc)."""

    name = LAYER

    def __init__(self, rules: CasbinLayer, default: Effect) -> None:
        self.rules = rules
        self.default = default

    def decide_write(self, engine: PolicyEngine, call: CallInfo, write: Write) -> Decision:
        """One write's decision (``scope="writes"``)."""
        shown, physical_texts, lexical = texts(call, write)
        links = _hard_links(realpath(write.path))
        if links > 1:
            return Decision(
                effect="ask",
                reason=f"writes '{shown}' ({write.how}), a file with {links} hard links: "
                "another name of it may be a file no rule allows writing",
                layer=LAYER,
                scope="writes",
            )
        real = realpath(write.path)
        names = [shown] if shown == real else [shown, real]
        trusted = engine.trusted_source(call.subject, call.tenant, names)
        if trusted is None:
            trusted = engine.trusted_below(call.subject, call.tenant, names)
        if trusted is not None:
            return Decision(
                effect="ask",
                reason=f"writes '{shown}' ({write.how}), a file the rule '{trusted.pattern.text}' "
                "trusts to run in the shell: changing it needs a person's approval, whatever "
                "the write: rules say",
                layer=LAYER,
                rule=engine.ref(trusted),
                scope="writes",
            )
        rule = engine.match_write(call.subject, call.tenant, physical_texts, lexical)
        if rule is None:
            return Decision(
                effect=self.default,
                reason=f"no write: rule decides writing '{shown}' ({write.how}); "
                f"the closing default is {self.default}",
                layer=LAYER,
                scope="writes",
            )
        said = f"{rule.reason} (" if rule.reason else ""
        return Decision(
            effect=rule.effect,
            reason=f"{said}{rule.effect} '{rule.pattern.text}' matches writing '{shown}' "
            f"({write.how}){')' if rule.reason else ''}",
            layer=LAYER,
            rule=engine.ref(rule),
            scope="writes",
        )

    def decisions(self, call: CallInfo, segment: Segment) -> list[tuple[Write, Decision]]:
        """Each write of ``segment`` with its decision (``shellgate check`` lists them)."""
        engine = self.rules.state_for(call).engine
        if engine is None:
            return []  # no good policy: the rules layer denies every call
        return [(w, self.decide_write(engine, call, w)) for w in segment.writes]

    def mentioned_source(self, call: CallInfo, segment: Segment) -> Decision | None:
        """Code the segment runs names a file a ``source`` rule trusts (``python -c
        "open('.venv/bin/activate', 'w')"``): it may rewrite it, so a person decides."""
        if not segment.mentions:
            return None
        engine = self.rules.state_for(call).engine
        if engine is None:
            return None
        base = segment.cwd or call.workdir
        for word in segment.mentions:
            path = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
            real = realpath(path)
            inside = relative_to(real, call.workspace)
            names = [inside, real] if inside is not None else [real]
            trusted = engine.trusted_source(call.subject, call.tenant, names)
            if trusted is not None:
                return Decision(
                    effect="ask",
                    reason=f"code it runs names '{word}', a file the rule "
                    f"'{trusted.pattern.text}' trusts to run in the shell: it may change "
                    "it, so a person must approve this, whatever the rules say",
                    layer=LAYER,
                    rule=engine.ref(trusted),
                )
        return None

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        worst = self.mentioned_source(call, segment)
        for _, decision in self.decisions(call, segment):
            if worst is None or STRICTNESS[decision.effect] > STRICTNESS[worst.effect]:
                worst = decision
        return worst
