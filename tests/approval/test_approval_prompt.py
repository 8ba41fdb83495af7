"""The terminal prompt, driven by fake input streams (above the seam)."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Iterator
from typing import Any

import pytest

from shellgate.approval import PromptApprover, ask_with_timeout
from shellgate.approval.prompt import MAX_ATTEMPTS
from shellgate.approval.question import visible
from shellgate.models import ApprovalAnswer
from tests.approval.approval_helpers import call, request, seg, verdict


async def ask(text: str, **kwargs: Any) -> tuple[ApprovalAnswer, str]:
    out = io.StringIO()
    approver = PromptApprover(io.StringIO(text), out)
    answer = await ask_with_timeout(approver, request(**kwargs), 5000)
    return answer, out.getvalue()


async def test_shows_command_segments_rule_reason_and_escalation() -> None:
    v = verdict((seg("git", "status"), "allow"), (seg("git", "push"), "ask"))
    _, shown = await ask(
        "y\n", v=v, escalation="full-access", justification="needs the network to push"
    )
    assert "approval needed" in shown
    assert "Run this command?" in shown
    assert "│ git push" in shown
    assert "needs approval: git push" in shown
    assert "casbin rule policy.csv:3: rule says ask" in shown
    assert "needs approval: git status" not in shown  # allowed segments are not asked about
    assert "sandbox escalation requested: full-access" in shown
    assert "justification: needs the network to push" in shown
    assert "[s]" not in shown  # not offered without a scope


async def test_y_allows_once() -> None:
    answer, _ = await ask("y\n")
    assert (answer.answer, answer.approver) == ("allow_once", "prompt")


async def test_n_denies_with_the_message_for_the_model() -> None:
    answer, shown = await ask("n\nuse git push --dry-run first\n")
    assert answer.answer == "deny"
    assert answer.message == "use git push --dry-run first"
    assert "message for the model" in shown


async def test_n_with_an_empty_message_denies_without_one() -> None:
    answer, _ = await ask("no\n\n")
    assert (answer.answer, answer.message) == ("deny", None)


async def test_s_allows_for_the_session_only_when_offered() -> None:
    answer, shown = await ask("s\n", scope=("git push",))
    assert answer.answer == "allow_session"
    assert "[s] allow for this session" in shown
    assert "would allow, for the rest of this session, exactly:" in shown
    unoffered, shown = await ask("s\ny\n")
    assert unoffered.answer == "allow_once"  # 's' was not an option: asked again
    assert "unrecognised answer 's'" in shown


async def test_eof_denies() -> None:
    answer, _ = await ask("")
    assert answer.answer == "deny"
    assert "end of input" in (answer.message or "")


async def test_eof_while_asking_for_a_message_still_denies() -> None:
    answer, _ = await ask("n\n")
    assert (answer.answer, answer.message) == ("deny", None)


async def test_unrecognised_answers_deny_after_the_limit() -> None:
    answer, shown = await ask("maybe\nsure\nok\ny\n")
    assert answer.answer == "deny"
    assert f"after {MAX_ATTEMPTS} tries" in (answer.message or "")
    assert shown.count("unrecognised answer") == MAX_ATTEMPTS


async def test_non_tty_stdin_denies_without_reading() -> None:
    stream = io.StringIO("y\n")
    approver = PromptApprover(stream, io.StringIO(), require_tty=True)
    answer = await ask_with_timeout(approver, request(), 5000)
    assert answer.answer == "deny"
    assert "interactive terminal" in (answer.message or "")
    assert stream.tell() == 0  # nothing was read


async def test_default_stdin_under_pytest_is_not_a_terminal() -> None:
    answer = await ask_with_timeout(PromptApprover(output=io.StringIO()), request(), 5000)
    assert answer.answer == "deny"


async def test_command_cannot_repaint_the_prompt() -> None:
    evil = "ls\x1b[2K\x1b[1Aapproved\u202e [red]x[/red]"
    _, shown = await ask("n\n\n", c=call(command=evil))
    assert "\x1b" not in shown
    assert "\u202e" not in shown
    assert "\\x1b[2K" in shown
    assert "\\u202e" in shown
    assert "[red]x[/red]" in shown  # markup shown literally, not interpreted
    assert visible("a\tb\nc") == "a\\x09b\nc"


@pytest.fixture
def pipe() -> Iterator[tuple[io.TextIOWrapper, int]]:
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    try:
        yield reader, write_fd
    finally:
        os.close(write_fd)
        reader.close()


async def test_timeout_denies_and_a_late_line_never_answers_the_next_question(
    pipe: tuple[io.TextIOWrapper, int],
) -> None:
    stream, write_fd = pipe
    out = io.StringIO()
    approver = PromptApprover(stream, out)
    first = await ask_with_timeout(approver, request(), 50)
    assert first.answer == "deny"
    assert "no answer within 50 ms" in (first.message or "")
    assert "(no answer in time: denied)" in out.getvalue()
    # The person types "y" for the question that already timed out...
    os.write(write_fd, b"y\n")
    pending = approver._reader._pending  # type: ignore[union-attr]
    assert pending is not None
    await asyncio.wrap_future(pending)  # ...and the reader has taken it in.
    # The next question must not be answered by that stale "y".
    os.write(write_fd, b"n\nstale answers are dropped\n")
    second = await ask_with_timeout(approver, request(), 5000)
    assert (second.answer, second.message) == ("deny", "stale answers are dropped")


async def test_concurrent_questions_are_asked_one_at_a_time() -> None:
    out = io.StringIO()
    approver = PromptApprover(io.StringIO("y\nn\nsecond\n"), out)
    first, second = await asyncio.gather(
        ask_with_timeout(approver, request(), 5000),
        ask_with_timeout(approver, request(), 5000),
    )
    assert first.answer == "allow_once"
    assert (second.answer, second.message) == ("deny", "second")
    shown = out.getvalue()
    # the second header only appears after the first question's answer line
    first_header = shown.index("approval needed")
    second_header = shown.index("approval needed", first_header + 1)
    assert shown.index("[y] allow once", first_header) < second_header


class _SignalOnPrompt(io.StringIO):
    """Output that tells the test when the answer prompt is on screen."""

    def __init__(self) -> None:
        super().__init__()
        self.prompted = asyncio.Event()

    def write(self, text: str) -> int:
        if "[y] allow once" in text:
            self.prompted.set()
        return super().write(text)


async def test_keys_typed_before_the_question_appeared_are_flushed_on_a_terminal() -> None:
    master, slave = os.openpty()
    stream = os.fdopen(slave, "r")
    try:
        os.write(master, b"y\n")  # typed ahead, before any question was shown
        out = _SignalOnPrompt()
        approver = PromptApprover(stream, out, require_tty=True)
        task = asyncio.create_task(ask_with_timeout(approver, request(), 5000))
        await out.prompted.wait()
        os.write(master, b"n\n\n")
        answer = await task
    finally:
        stream.close()
        os.close(master)
    assert answer.answer == "deny"
