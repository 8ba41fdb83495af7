"""The built-in approvers and the fail-closed wrapper around every approver."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from shellgate.approval import (
    AllowApprover,
    Approver,
    CallbackApprover,
    DenyApprover,
    PromptApprover,
    ask_with_timeout,
    make_approver,
)
from shellgate.config import ApprovalConfig
from shellgate.models import ApprovalAnswer, ApprovalRequest
from tests.approval.approval_helpers import request, seg, verdict


async def test_deny_approver_says_approval_was_needed_and_nobody_could_be_asked() -> None:
    answer = await ask_with_timeout(DenyApprover(), request(), 1000)
    assert answer.answer == "deny"
    assert answer.approver == "deny"
    assert answer.message is not None
    assert answer.message.startswith("approval was needed but no approver is configured")
    assert "rule says ask" not in answer.message  # the gate's text says why, once
    assert "no approver is configured to ask a person" in answer.message


async def test_allow_approver_warns_on_every_use(caplog: pytest.LogCaptureFixture) -> None:
    approver = AllowApprover()
    with caplog.at_level(logging.WARNING, logger="shellgate.approval"):
        for _ in range(3):
            answer = await ask_with_timeout(approver, request(), 1000)
            assert answer.answer == "allow_once"
            assert answer.approver == "allow"
    warnings = [
        r for r in caplog.records if r.name == "shellgate.approval" and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 3
    assert all(
        "for tests only" in r.getMessage() and "git push" in r.getMessage() for r in warnings
    )


async def test_sync_and_async_callbacks_answer_and_are_named() -> None:
    seen: list[str] = []

    def sync_fn(req: ApprovalRequest) -> ApprovalAnswer:
        seen.append(req.call.command)
        return ApprovalAnswer(answer="allow_once")

    async def async_fn(req: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(answer="deny", message="not today")

    first = await ask_with_timeout(CallbackApprover(sync_fn), request(), 1000)
    assert first.answer == "allow_once"
    assert first.approver.startswith("callback:")
    assert "sync_fn" in first.approver
    assert seen == ["git push"]
    second = await ask_with_timeout(CallbackApprover(async_fn, name="ui"), request(), 1000)
    assert (second.answer, second.message, second.approver) == ("deny", "not today", "ui")


async def test_a_sync_callback_returning_a_coroutine_is_awaited() -> None:
    async def later() -> ApprovalAnswer:
        return ApprovalAnswer(answer="allow_once", approver="later")

    answer = await ask_with_timeout(CallbackApprover(lambda req: later()), request(), 1000)
    assert answer.answer == "allow_once"


def test_callback_approver_needs_a_callable() -> None:
    with pytest.raises(TypeError, match="needs a callable"):
        CallbackApprover("yes")  # type: ignore[arg-type]


async def test_pending_question_past_the_timeout_is_denied_naming_it() -> None:
    never = asyncio.Event()

    async def waits(req: ApprovalRequest) -> ApprovalAnswer:
        await never.wait()
        return ApprovalAnswer(answer="allow_once")

    answer = await ask_with_timeout(CallbackApprover(waits, name="slow"), request(), 50)
    assert answer.answer == "deny"
    assert answer.approver == "slow"
    assert answer.message == "approval timed out: no answer within 50 ms, so the call was denied"


async def test_a_blocking_sync_callback_cannot_outlive_the_timeout() -> None:
    release = threading.Event()

    def blocks(req: ApprovalRequest) -> ApprovalAnswer:
        release.wait(10)
        return ApprovalAnswer(answer="allow_once")

    try:
        answer = await ask_with_timeout(CallbackApprover(blocks), request(), 50)
    finally:
        release.set()
    assert answer.answer == "deny"
    assert "timed out" in (answer.message or "")


async def test_a_raising_approver_denies_naming_it_and_the_error() -> None:
    def boom(req: ApprovalRequest) -> ApprovalAnswer:
        raise RuntimeError("ui crashed")

    answer = await ask_with_timeout(CallbackApprover(boom, name="ui"), request(), 1000)
    assert answer.answer == "deny"
    assert answer.message == "approver ui failed (RuntimeError: ui crashed), so the call was denied"


@pytest.mark.parametrize(
    "junk",
    [
        pytest.param(True, id="bool"),
        pytest.param("allow_once", id="str"),
        pytest.param(None, id="none"),
        pytest.param({"answer": "allow_once"}, id="dict"),
    ],
)
async def test_junk_answers_deny_naming_the_approver(junk: object) -> None:
    answer = await ask_with_timeout(
        CallbackApprover(lambda req: junk, name="junk"),  # type: ignore[arg-type,return-value]
        request(),
        1000,
    )
    assert answer.answer == "deny"
    assert answer.message is not None
    assert answer.message.startswith(
        f"approver junk returned {type(junk).__name__}, not an ApprovalAnswer"
    )


async def test_things_that_are_not_approvers_deny() -> None:
    def not_async(req: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(answer="allow_once")

    answer = await ask_with_timeout(not_async, request(), 1000)  # type: ignore[arg-type]
    assert answer.answer == "deny"
    assert answer.approver == "not_async"
    assert "failed (TypeError" in (answer.message or "")


async def test_allow_session_answer_when_not_offered_is_denied() -> None:
    approver = CallbackApprover(lambda req: ApprovalAnswer(answer="allow_session"), name="cb")
    answer = await ask_with_timeout(approver, request(scope=()), 1000)
    assert answer.answer == "deny"
    assert "allow_session, which was not offered" in (answer.message or "")
    offered = await ask_with_timeout(approver, request(scope=("git push",)), 1000)
    assert offered.answer == "allow_session"


async def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be > 0 ms"):
        await ask_with_timeout(DenyApprover(), request(), 0)


async def test_caller_cancellation_propagates() -> None:
    started = asyncio.Event()

    async def waits(req: ApprovalRequest) -> ApprovalAnswer:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(ask_with_timeout(CallbackApprover(waits), request(), 10_000))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_make_approver_builds_each_mode(caplog: pytest.LogCaptureFixture) -> None:
    assert isinstance(make_approver(ApprovalConfig(mode="deny")), DenyApprover)
    assert isinstance(make_approver(ApprovalConfig()), DenyApprover)
    assert isinstance(make_approver(ApprovalConfig(mode="prompt")), PromptApprover)
    with caplog.at_level(logging.WARNING, logger="shellgate.approval"):
        allow = make_approver(ApprovalConfig(mode="allow"))
    assert isinstance(allow, AllowApprover)
    assert any("for tests only" in r.getMessage() for r in caplog.records)
    for approver in (DenyApprover(), AllowApprover(), PromptApprover()):
        assert isinstance(approver, Approver)


async def test_verdict_with_several_ask_segments_reaches_the_approver_whole() -> None:
    got: list[ApprovalRequest] = []

    def record(req: ApprovalRequest) -> ApprovalAnswer:
        got.append(req)
        return ApprovalAnswer(answer="deny")

    v = verdict((seg("git", "push"), "ask"), (seg("make"), "ask"))
    await ask_with_timeout(CallbackApprover(record), request(v), 1000)
    assert [s.segment.command for s in got[0].verdict.segments] == ["git push", "make"]


def test_public_names_match_all() -> None:
    import types

    import shellgate.approval as approval

    # Submodules appear as attributes once anything imports them (approval.queue
    # does in queue mode): they are not the package's API, whatever ran before.
    public = {
        name for name, value in vars(approval).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    modules = {"IO", "ApprovalConfig", "annotations", "logger"}
    assert set(approval.__all__) == public - modules
