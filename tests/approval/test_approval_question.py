"""The approval question shows the exact command (redirections and quotes kept), through
a real gate, the terminal prompt and the headless default; a reason is said once."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import CallbackApprover, DenyApprover, PromptApprover
from shellgate.approval.question import approval_question
from shellgate.models import ApprovalAnswer, ApprovalRequest, Redirect
from shellgate.tools.render import code

# tests.* is first-party once the test folders are packages: its own block either way
# isort: split
from tests.approval.approval_helpers import call, seg, verdict

COMMAND = "printf 'hello\\n' > hello.txt"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("printf 'hello\\n' > hello.txt", "`printf 'hello\\n' > hello.txt`", id="quotes"),
        pytest.param("echo `date`", "`` echo `date` ``", id="backticks-inside"),
        pytest.param("`x`", "`` `x` ``", id="starts-with-a-backtick"),
        pytest.param("a ``b`` c", "```a ``b`` c```", id="double-backticks"),
    ],
)
def test_code_spans_never_nest_ambiguously(text: str, shown: str) -> None:
    assert code(text) == shown


async def test_the_gate_asks_with_the_exact_command(
    open_gate: Callable[..., Any], tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(answer="allow_once")

    gate = await open_gate(CallbackApprover(approve))
    result = await gate.call("bash", {"command": COMMAND, "description": "write hello"})
    assert not result.is_error, result.text
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hello\n"
    question = asked[0].question
    assert question.startswith(f"Allow this command? `{COMMAND}` — it needs approval: ")
    # The analysis names the segment in a code span too: no quote inside a quote.
    assert ("no rule decides `printf 'hello\\n'` for subject 'agent' in tenant 'default'; "
            "the closing default is ask") in question
    assert "'printf 'hello" not in question
    assert "printf hello\\n" not in question  # the argv joined, redirection dropped: gone
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [r["question"] for r in records if r["type"] == "approval"] == [question]


def test_several_segments_are_named_by_their_exact_keys() -> None:
    redirected = seg("printf", "a b").model_copy(
        update={"redirects": (Redirect(op=">", target="out file", is_write=True),)}
    )
    v = verdict((seg("ls"), "allow"), (redirected, "ask"))
    question = approval_question("ls; printf 'a b' > 'out file'", v, "full-access", "read-only")
    assert question == (
        "Allow this command? `ls; printf 'a b' > 'out file'` — "
        "`printf 'a b' >'out file'` needs approval: rule says ask; "
        "it asks to run under the wider 'full-access' sandbox mode instead of 'read-only'"
    )


async def test_the_prompt_shows_the_segment_with_its_redirection() -> None:
    redirected = seg("printf", "hello\\n").model_copy(
        update={"redirects": (Redirect(op=">", target="hello.txt", is_write=True),)}
    )
    v = verdict((redirected, "ask"))
    request = ApprovalRequest(
        call=call(command=COMMAND), verdict=v,
        question=approval_question(COMMAND, v, None, "workspace-write"),
    )
    out = io.StringIO()
    await PromptApprover(io.StringIO("n\n\n"), out)(request)
    shown = out.getvalue()
    assert f"Allow this command? `{COMMAND}`" in shown
    assert f"│ {COMMAND}" in shown
    assert "needs approval: printf 'hello\\n' >hello.txt" in shown


async def test_the_headless_default_does_not_repeat_the_reason(
    open_gate: Callable[..., Any],
) -> None:
    gate = await open_gate(DenyApprover())
    result = await gate.call("bash", {"command": COMMAND, "description": "write hello"})
    assert result.is_error
    reason = "no rule decides `printf 'hello\\n'`"
    assert result.text.count(reason) == 1, result.text
    assert result.text.startswith(
        "Error: not approved (deny: approval was needed but no approver is configured to "
        "ask a person, so the call was denied); approval was required by default: "
    )
