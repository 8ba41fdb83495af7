"""The question an approver is asked: the exact command, then why it needs a person.

The command is shown as the agent sent it, whole (redirections, quotes and all), as
a Markdown code span (:func:`shellgate.tools.render.code`) so its own quotes never
nest ambiguously with the question's. With several simple commands, each one that
needs approval is named by its exact key (:func:`~shellgate.approval.scope.
segment_key`: argv shell-quoted, assignments and redirections included).
"""

from __future__ import annotations

import unicodedata

from shellgate.approval.scope import segment_key
from shellgate.models import SandboxMode, Segment, Verdict
from shellgate.tools.render import code


def visible(text: str) -> str:
    """``text`` with every non-printing code point (except newline) escaped.

    Control characters, bidi overrides and other invisible code points become
    ``\\x1b``/``\\u202e`` escapes, so text shown to a person (on the terminal
    prompt, or in an MCP client's approval question) cannot repaint what is
    around it.
    """
    out: list[str] = []
    for char in text:
        if char == "\n" or (char.isprintable() and unicodedata.category(char) != "Cf"):
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return "".join(out)


def one_line(text: str) -> str:
    """:func:`visible`, with newlines escaped too: free text that must not start a line."""
    return visible(text).replace("\n", "\\n")


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
    confined = [item for item in verdict.segments if item.decision.effect == "sandbox"]
    if confined and verdict.effect == "ask":
        # Approved, the whole command runs as the deployment runs an allowed one.
        shown = ", ".join(code(segment_shown(item.segment)) for item in confined)
        parts.append(f"approving also runs {shown} outside the sandbox the policy puts it in")
    if escalation is not None:
        parts.append(
            f"it asks to run under the wider '{escalation}' sandbox mode instead of '{current}'"
        )
    head = f"Allow this command? {code(command)}"
    return f"{head} — {'; '.join(parts)}" if parts else head
