"""The question an approver is asked: the exact command, then why it needs a person.

The command is shown as the agent sent it, whole (redirections, quotes and all), as
a Markdown code span (:func:`shellgate.tools.render.code`) so its own quotes never
nest ambiguously with the question's. With several simple commands, each one that
needs approval is named by its exact key (:func:`~shellgate.approval.scope.
segment_key`: argv shell-quoted, assignments and redirections included).
"""

from __future__ import annotations

from shellgate.approval.scope import segment_key
from shellgate.models import SandboxMode, Segment, Verdict
from shellgate.tools.render import code


def segment_shown(segment: Segment) -> str:
    """One simple command as a person should read it: its exact key, with redirections."""
    return segment_key(segment) if segment.argv else segment.text


def approval_question(
    command: str, verdict: Verdict, escalation: SandboxMode | None, current: SandboxMode
) -> str:
    """``Allow this command? `CMD` — it needs approval: REASON`` (see the module docstring)."""
    whole = len(verdict.segments) == 1
    parts: list[str] = []
    for item in verdict.segments:
        if item.decision.effect != "ask":
            continue
        who = "it" if whole else code(segment_shown(item.segment))
        parts.append(f"{who} needs approval: {item.decision.reason}")
    if escalation is not None:
        parts.append(
            f"it asks to run under the wider '{escalation}' sandbox mode instead of '{current}'"
        )
    head = f"Allow this command? {code(command)}"
    return f"{head} — {'; '.join(parts)}" if parts else head
