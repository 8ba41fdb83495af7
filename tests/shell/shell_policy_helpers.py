"""Two tiny test-only policies, decided through the real engine and analysis layer.

* ``allowlist``: a few read-only commands are allowed (matched on ``argv`` only,
  as allow rules are); everything else falls to the closing default ``ask``.
* ``denylist``: ``rm`` and ``curl`` are denied (matched on ``argv`` and every
  normalised form, at word boundaries); everything else is allowed, and so is
  every write inside the workdir (as ``write:**`` would), so only the analysis
  layer's findings and writes elsewhere can turn a command into ``ask``.

Writes are decided as the write-rules layer decides them (scope ``writes``):
under ``allowlist`` no write is allowed (each falls to the closing default).
"""

from __future__ import annotations

from shellgate.models import STRICTNESS, CallInfo, Decision, Effect, Segment
from shellgate.policy.builtin import AnalysisLayer
from shellgate.policy.engine import Layer, decide
from shellgate.shell import analyse

WORKDIR = "/work/project"

ALLOW_PATTERNS = (
    "ls *", "cat *", "git status", "git log *", "echo *", "grep *", "pwd", "wc *",
    "head *", "[ *", "[[ *", "true", "cd *",
)  # fmt: skip
DENY_PATTERNS = ("rm *", "curl *")


def matches(pattern: str, form: tuple[str, ...]) -> bool:
    """``"git log *"`` matches ``git log`` and ``git log -3``; words, not characters."""
    words = pattern.split()
    if words and words[-1] == "*":
        head = tuple(words[:-1])
        return form[: len(head)] == head
    return form == tuple(words)


class AllowList:
    name = "test-allowlist"

    def check(self, call: CallInfo, segment: Segment) -> Decision | None:
        del call
        for pattern in ALLOW_PATTERNS:
            if segment.argv and matches(pattern, segment.argv):
                return Decision(effect="allow", reason=f"allowed by {pattern}", layer=self.name)
        return None


class DenyList:
    name = "test-denylist"

    def check(self, call: CallInfo, segment: Segment) -> Decision | None:
        del call
        for form in segment.all_forms():
            for pattern in DENY_PATTERNS:
                if matches(pattern, form):
                    return Decision(effect="deny", reason=f"denied by {pattern}", layer=self.name)
        return Decision(effect="allow", reason="not on the deny list", layer=self.name)


class Writes:
    """``write:**`` for the deny-list policy, no write rule for the allow-list one."""

    name = "test-writes"

    def __init__(self, inside_allowed: bool) -> None:
        self.inside_allowed = inside_allowed

    def check(self, call: CallInfo, segment: Segment) -> Decision | None:
        del call
        if not segment.writes:
            return None
        # Inside the workdir, but never into a .git directory (the real gate's
        # protected-paths layer denies those; here they stay a question).
        inside = all(
            w.path.startswith(WORKDIR + "/") and "/.git/" not in w.path + "/"
            for w in segment.writes
        )
        effect: Effect = "allow" if inside and self.inside_allowed else "ask"
        return Decision(effect=effect, reason="writes", layer=self.name, scope="writes")


def _layers(policy: str) -> list[Layer]:
    analysis = AnalysisLayer()
    rules = AllowList() if policy == "allowlist" else DenyList()
    writes = Writes(inside_allowed=policy == "denylist")
    return [Layer(analysis.name, analysis.shellgate_check), Layer(rules.name, rules.check),
            Layer(writes.name, writes.check)]


LAYERS = {policy: _layers(policy) for policy in ("allowlist", "denylist")}


def call_for(command: str) -> CallInfo:
    return CallInfo(
        tool="bash",
        command=command,
        subject="agent",
        tenant="default",
        session="test",
        workdir=WORKDIR,
        workspace=WORKDIR,
    )


def decision(command: str, policy: str) -> Effect:
    """The real engine's effect for ``command`` under one of the two policies."""
    analysis = analyse(command, workdir=WORKDIR)
    verdict = decide(call_for(command), analysis, LAYERS[policy], default="ask")
    return verdict.effect


def at_least(effect: Effect, floor: Effect) -> bool:
    return STRICTNESS[effect] >= STRICTNESS[floor]
