"""The Approver seam (one async callable) and the built-ins that need no terminal.

Fail closed, in one place: :func:`ask_with_timeout` is the only way the gate asks
an approver, and it turns a timeout, an exception, a wrong return type and an
``allow_session`` answer that was never offered into ``deny`` with a message that
names the cause. Approvers themselves only have to answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, runtime_checkable

from shellgate.models import ApprovalAnswer, ApprovalRequest

logger = logging.getLogger("shellgate.approval")

T = TypeVar("T")


@runtime_checkable
class Approver(Protocol):
    """Answers whether a person approves one exact call.

    Called only for a verdict of ``ask``. May wait on a human; the caller bounds
    the wait (:func:`ask_with_timeout`). An optional ``name`` attribute is what the
    audit log records as the approver.
    """

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer: ...


def approver_name(approver: object) -> str:
    """The name recorded in the audit log: ``.name``, a function's name, or the class name."""
    for attr in ("name", "__name__"):
        name = getattr(approver, attr, None)
        if isinstance(name, str) and name:
            return name
    return type(approver).__name__


def _segments_needing_approval(request: ApprovalRequest) -> str:
    asked = [s.segment.command for s in request.verdict.segments if s.decision.effect == "ask"]
    return "; ".join(asked) or request.call.command


class DenyApprover:
    """The headless default: nobody can be asked, so the answer is no."""

    name = "deny"

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        # Why approval was needed is the decision's reason, which the gate's text
        # (render.approval_denied) and the audit log carry already: said once.
        del request
        return ApprovalAnswer(
            answer="deny",
            message=(
                "approval was needed but no approver is configured to ask a person, "
                "so the call was denied"
            ),
            approver=self.name,
        )


class AllowApprover:
    """Answers ``allow_once`` to everything. For tests only; warns on every use."""

    name = "allow"

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        logger.warning(
            "AllowApprover approved %r without asking anyone (approval mode 'allow' "
            "is for tests only)",
            _segments_needing_approval(request),
        )
        return ApprovalAnswer(answer="allow_once", approver=self.name)


def start_in_daemon_thread(fn: Callable[..., T], *args: object) -> concurrent.futures.Future[T]:
    """Start blocking ``fn(*args)`` on a daemon thread; its result arrives in the future.

    Not ``asyncio.to_thread``: that pool is joined at interpreter exit, so a
    thread blocked on a person (or on ``readline``) would keep the process alive
    after the gate gave up. Nothing stops the thread; an abandoned result is dropped.
    """
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # handed to the awaiting side, never lost
            future.set_exception(exc)

    threading.Thread(target=run, name="shellgate-approval", daemon=True).start()
    return future


def call_in_daemon_thread(fn: Callable[..., T], *args: object) -> Awaitable[T]:
    """Await blocking ``fn(*args)`` run by :func:`start_in_daemon_thread`."""
    return asyncio.wrap_future(start_in_daemon_thread(fn, *args))


class CallbackApprover:
    """Wraps a user callable ``fn(request) -> ApprovalAnswer`` (sync or async).

    A coroutine function (or a callable returning an awaitable) runs on the event
    loop; a plain function runs on a daemon thread, so a callback that blocks on a
    person cannot stall the loop or outlive the timeout.
    """

    def __init__(
        self,
        fn: Callable[[ApprovalRequest], ApprovalAnswer | Awaitable[ApprovalAnswer]],
        *,
        name: str | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"CallbackApprover needs a callable, got {type(fn).__name__}")
        self._fn = fn
        self.name = name or f"callback:{getattr(fn, '__qualname__', type(fn).__name__)}"

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if inspect.iscoroutinefunction(self._fn):
            result: object = await self._fn(request)
        else:
            result = await call_in_daemon_thread(self._fn, request)
        if inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[return-value]  # checked by ask_with_timeout


def _deny(message: str, approver: str) -> ApprovalAnswer:
    return ApprovalAnswer(answer="deny", message=message, approver=approver)


async def ask_with_timeout(
    approver: Approver, request: ApprovalRequest, timeout_ms: int
) -> ApprovalAnswer:
    """Ask ``approver`` about ``request``, failing closed.

    * no answer within ``timeout_ms`` → ``deny`` naming the timeout (the pending
      question is cancelled, so a prompt can say it gave up);
    * the approver raises, or returns anything but an :class:`ApprovalAnswer` →
      ``deny`` naming the approver and what went wrong;
    * ``allow_session`` when ``request.session_scope`` is empty (not offered) →
      ``deny``: an approver cannot widen what the deployment permits.

    The returned answer always names its approver. Cancellation of the caller is
    not swallowed (``CancelledError`` propagates: nothing runs).
    """
    if timeout_ms <= 0:
        raise ValueError(f"approval timeout must be > 0 ms, got {timeout_ms}")
    name = approver_name(approver)
    try:
        async with asyncio.timeout(timeout_ms / 1000):
            answer: object = await approver(request)
    except TimeoutError:
        logger.info("approval by %s timed out after %d ms", name, timeout_ms)
        return _deny(
            f"approval timed out: no answer within {timeout_ms} ms, so the call was denied",
            name,
        )
    except Exception as exc:
        logger.exception("approver %s failed", name)
        return _deny(
            f"approver {name} failed ({type(exc).__name__}: {exc}), so the call was denied",
            name,
        )
    if not isinstance(answer, ApprovalAnswer):
        logger.error("approver %s returned %r, not an ApprovalAnswer", name, answer)
        return _deny(
            f"approver {name} returned {type(answer).__name__}, not an ApprovalAnswer, "
            "so the call was denied",
            name,
        )
    if answer.answer == "allow_session" and not request.session_scope:
        return _deny(
            f"approver {name} answered allow_session, which was not offered for this "
            "call, so the call was denied",
            name,
        )
    if not answer.approver:
        answer = answer.model_copy(update={"approver": name})
    return answer
