"""The only place that writes model-facing text (tools.md is its contract).

Every string here is an API: clients parse them and models learn them. Change
one only on purpose, with a test in ``tests/tools/test_render.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shellgate.models import Decision, OutputView, RunResult

ESCALATION_HINT = (
    "[sandbox: escalation available — retry this exact command once with "
    "sandbox_permissions (the narrowest wider mode that suffices) + justification; "
    "the approval prompt asks the user]"
)


def code(text: str) -> str:
    """``text`` (shell source) as a Markdown code span, never confused with its quotes.

    The fence is one backtick longer than the longest run inside, with a space of
    padding when the text starts or ends with a backtick (CommonMark's rule), so
    ``printf 'hello\n' > hello.txt`` reads back exactly, quotes and all.
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def error(message: str) -> str:
    return f"Error: {message}"


def _with_notice(view: OutputView) -> str:
    if not view.truncated:
        return view.text
    where = view.spill_path if view.spill_path is not None else "(unavailable)"
    return f"{view.text}\n[output truncated; full output: {where}]"


def _body(stdout: str, stderr: str, empty: str) -> str:
    body = stdout
    if stderr:
        if body and not body.endswith("\n"):
            body += "\n"
        body += "[stderr]\n" + stderr
    return body or empty


def _join(body: str, markers: Sequence[str]) -> str:
    if not markers:
        return body
    if not body.endswith("\n"):
        body += "\n"
    return body + "\n".join(markers)


def run_result(result: RunResult) -> str:
    """A foreground ``bash`` result (tools.md, "Result text")."""
    body = _body(_with_notice(result.stdout), _with_notice(result.stderr), "(no output)")
    markers: list[str] = []
    if result.sandbox_denied:
        markers.append(f"[sandbox: file access denied under {result.sandbox_mode} mode]")
        if result.escalation_available:
            markers.append(ESCALATION_HINT)
    if result.timed_out:
        markers.append(f"[timed out after {result.timeout_ms}ms]")
    if result.signal is not None:
        markers.append(f"[killed by signal: {result.signal}]")
    elif result.exit_code not in (0, None):
        markers.append(f"[exit code: {result.exit_code}]")
    return _join(body, markers)


def status(result: RunResult | None) -> str:
    if result is None:
        return "[status: running]"
    if result.signal is not None:
        return f"[status: killed, signal: {result.signal}]"
    return f"[status: completed, exit code: {result.exit_code}]"


def started(task_id: str) -> str:
    return f"started background task {task_id}"


def task_output(
    stdout: str, stderr: str, *, lost: bool, spill_paths: Sequence[str], result: RunResult | None
) -> str:
    """A ``bash_output`` answer: the delta since the previous read, then the status."""
    body = _body(stdout, stderr, "(no new output)")
    markers: list[str] = []
    if lost:
        where = ", ".join(spill_paths) if spill_paths else "(unavailable)"
        markers.append(f"[some output was dropped from memory; full output: {where}]")
    markers.append(status(result))
    return _join(body, markers)


def kill_requested(task_id: str) -> str:
    return f"requested cancellation of task {task_id}"


def already_finished(task_id: str, result: RunResult | None) -> str:
    return f"task {task_id} had already finished {status(result)}"


def shorten(text: str, limit: int = 80) -> str:
    """``text`` as a short mention: at most ``limit`` characters, ``...`` where cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def completion_notice(task_id: str, command: str, result: RunResult | None) -> str:
    return (
        f"background task {task_id} ({shorten(command)}) finished {status(result)}. "
        "Read its output with bash_output."
    )


def unknown_task(task_id: str) -> str:
    return error(f"unknown task {task_id}")


def _by(decision: Decision) -> str:
    if decision.rule:
        return f"{decision.layer} rule {decision.rule}"
    return decision.layer


def policy_denied(decision: Decision) -> str:
    """A deny: says who decided, so the model can tell a policy from a failure."""
    return error(f"denied by {_by(decision)}: {decision.reason}")


def approval_denied(
    decision: Decision, approver: str, message: str | None, *, escalation: str | None = None
) -> str:
    """An ``ask`` (or an escalation) that was not approved: who said no, and why asked.

    The approver is named as such — a headless ``deny`` approver is not a person —
    and its message, if any, is the one the model should act on.
    """
    who = f"{approver}: {message}" if message else approver
    if escalation is not None and decision.effect != "ask":
        return error(f"not approved ({who}); the escalation to '{escalation}' mode was refused")
    return error(
        f"not approved ({who}); approval was required by {_by(decision)}: {decision.reason}"
    )


def approval_refused(why: str) -> str:
    """An out-of-band approval that does not cover the call presenting it."""
    return error(f"not approved: {why}; the command was not run")


def with_notices(notices: Sequence[str], text: str) -> str:
    """MCP: pending completion notices go at the top of the next tool result."""
    if not notices:
        return text
    return "\n".join(notices) + "\n\n" + text
