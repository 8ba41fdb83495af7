"""``/approvals``: the pending approvals of the queue, answered by the logged-in person.

The queue is ``[approval] store`` (:class:`shellgate.store.approvals.ApprovalQueue`).
An answer goes through :meth:`ApprovalQueue.answer` with the session's person,
so the waiting gate audits who answered. ``/approvals/state`` is what the page's
small script polls: a digest of the queue, to reload the page when it changes.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from shellgate.console.auth import Session, client_of
from shellgate.console.core import Console
from shellgate.errors import ShellgateError

if TYPE_CHECKING:
    from shellgate.store.approvals import ApprovalQueue

logger = logging.getLogger("shellgate.console")

MAX_MESSAGE_CHARS = 1000
RECENT = 20  # answered approvals shown under the pending ones
NOTES = {
    "approve": "Approved: the call runs now.",
    "deny": "Denied: the call will not run.",
}


def queue_of(console: Console) -> ApprovalQueue | str:
    """The approval queue, or why there is none."""
    url = console.config.approval.store
    if url is None:
        return (
            'No approval queue is configured: set [approval] mode = "queue" and [approval] store.'
        )
    try:
        from shellgate.store.approvals import ApprovalQueue
    except ImportError:
        return "This shellgate has no approval queue (shellgate.store.approvals is missing)."
    return ApprovalQueue(console.database(url))


def expires_in(expires_at: float | None, now: float) -> str:
    if expires_at is None:
        return "never"
    left = int(expires_at - now)
    if left <= 0:
        return "expired"
    minutes, seconds = divmod(left, 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def routes(console: Console) -> list[Route]:
    def load() -> tuple[list[Any], list[Any]]:
        queue = queue_of(console)
        if isinstance(queue, str):
            raise LookupError(queue)
        pending = queue.pending()
        recent = [a for a in queue.recent(RECENT) if a.status != "pending"]
        return pending, recent

    async def page(request: Request, *, error: str = "", status_code: int = 200) -> Response:
        unavailable = ""
        pending: list[Any] = []
        recent: list[Any] = []
        try:
            pending, recent = await run_in_threadpool(load)
        except LookupError as exc:
            unavailable = str(exc.args[0])
        except ShellgateError as exc:
            unavailable = f"The approval queue cannot be read: {exc}"
            status_code = 503
        note = NOTES.get(request.query_params.get("answered", ""), "")
        return console.render(
            request,
            "approvals.html",
            status_code=status_code,
            pending=pending,
            recent=recent,
            unavailable=unavailable,
            error=error,
            note=note,
            now=time.time(),
            expires_in=expires_in,
            when=when,
        )

    async def show(request: Request) -> Response:
        return await page(request)

    async def answer(request: Request) -> Response:
        form = request.state.form
        session: Session = request.state.session
        approval_id = request.path_params["id"]
        choice = form.get("answer")
        message = form.get("message", "")
        if choice not in ("approve", "deny"):
            return await page(request, error="Choose approve or deny.", status_code=400)
        if not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS:
            return await page(
                request,
                error=f"The message is over {MAX_MESSAGE_CHARS} characters.",
                status_code=400,
            )
        queue = queue_of(console)
        if isinstance(queue, str):
            return await page(request, error=queue, status_code=409)
        try:
            await run_in_threadpool(
                queue.answer, approval_id, choice, person=session.person, message=message
            )
        except ShellgateError as exc:  # answered, expired or unknown: nothing changed
            return await page(request, error=f"Not answered: {exc}", status_code=409)
        logger.info(
            "%s answered %s: %s (from %s)", session.person, approval_id, choice, client_of(request)
        )
        return RedirectResponse(f"/approvals?answered={choice}", status_code=303)

    async def state(request: Request) -> Response:
        try:
            pending, recent = await run_in_threadpool(load)
        except (LookupError, ShellgateError):
            return JSONResponse({"state": "unavailable"})
        seen = ",".join(f"{a.id}:{a.status}" for a in (*pending, *recent))
        return JSONResponse({"state": hashlib.sha256(seen.encode()).hexdigest()[:16]})

    return [
        Route("/approvals", console.page(show), methods=["GET"]),
        Route("/approvals/state", console.page(state), methods=["GET"]),
        Route("/approvals/{id}", console.page(answer), methods=["POST"]),
    ]
