"""``[approval] mode = "queue"``: an ask becomes a row in a shared store; a person answers it.

:class:`QueueApprover` submits the question (:class:`~shellgate.store.approvals.
ApprovalQueue`) with an expiry of ``[approval] timeout_ms`` and waits for the
row to change — woken by ``LISTEN shellgate_approval`` on PostgreSQL, polling a
SQLite file — without blocking the gate's event loop (store calls run on
threads; the listener has its own daemon thread and connection). Then:

* ``approved`` → ``allow_once``; ``denied`` → ``deny`` with the person's message;
  either names the person as the approver (``queue:<person>``), which the gate's
  ``approval`` audit record carries;
* nobody answered in time → the row is marked ``expired`` (a later answer is
  refused) and the answer is ``deny``;
* the call is cancelled (the gate closing, an MCP cancel) → the row is marked
  ``expired`` too, then the cancellation goes on; nothing is left pending;
* the store cannot be reached, at submit or while waiting → ``deny`` naming the
  store (fail closed).

Allow-for-session is never answered by the queue: a row is one exact call, and
the person answering sees that call, not the session's future commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time

from shellgate.errors import StoreError
from shellgate.models import ApprovalAnswer, ApprovalRequest
from shellgate.store.approvals import CHANNEL, POLL_S, ApprovalQueue, QueuedApproval
from shellgate.store.db import Database, Listener, StoreURL, parse_url

logger = logging.getLogger("shellgate.approval")

#: With LISTEN working, the row is still re-read this often (a missed notification
#: costs at most this much latency, never an answer).
RECHECK_S = 2.0


def deciding_rules(request: ApprovalRequest) -> str | None:
    """The rule references that asked (every ``ask`` segment's), comma separated."""
    rules: list[str] = []
    for item in request.verdict.segments:
        rule = item.decision.rule
        if item.decision.effect == "ask" and rule and rule not in rules:
            rules.append(rule)
    if not rules and request.verdict.decision.rule:
        rules.append(request.verdict.decision.rule)
    return ", ".join(rules) or None


def asked_because(request: ApprovalRequest) -> str:
    """Why a person is asked: the decision's reason, or the escalation asked for."""
    parts: list[str] = []
    if request.verdict.effect == "ask":
        parts.append(request.verdict.decision.reason)
    elif request.verdict.effect == "sandbox":  # an escalation out of the policy's sandbox
        parts.append(f"the policy runs it in the sandbox ({request.verdict.decision.reason})")
    if request.escalation is not None:
        wanted = f"asks for the wider '{request.escalation}' sandbox mode"
        if request.justification:
            wanted += f": {request.justification}"
        parts.append(wanted)
    return "; ".join(parts) or request.verdict.decision.reason


class _Watcher:
    """A daemon thread with its own ``LISTEN`` connection that wakes one waiter when
    its row's id is notified.

    The thread owns the connection from connect to close, so a waiter cancelled
    mid-connect (or a loop that closes) never strands an open connection.
    """

    def __init__(self, db: Database, approval_id: str, wake: asyncio.Event) -> None:
        self.db = db
        self.approval_id = approval_id
        self.wake = wake
        self.ready = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.connected = False
        self.broken: StoreError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="shellgate-approval-listen", daemon=True
        )
        self._thread.start()

    def _set(self, event: asyncio.Event) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            self.loop.call_soon_threadsafe(event.set)

    def _run(self) -> None:
        listener: Listener | None = None
        try:
            listener = self.db.listen(CHANNEL)
            self.connected = True
            self._set(self.ready)
            while not self._stop.is_set():
                if self.approval_id in listener.wait(0.25):
                    self._set(self.wake)
        except StoreError as exc:
            # Before LISTEN: the waiter fails (store unreachable). After: it re-reads
            # the row on a short interval, and a store that is down fails that read.
            logger.warning("approval queue: %s", exc)
            self.broken = exc
            self._set(self.ready)
            self._set(self.wake)
        finally:
            if listener is not None:
                listener.close()

    async def started(self) -> None:
        """Wait until ``LISTEN`` is in place; raise :class:`StoreError` if it cannot be."""
        await self.ready.wait()
        if not self.connected and self.broken is not None:
            raise self.broken

    async def stop(self) -> None:
        """Stop listening and wait (on a thread) until the connection is closed."""
        self._stop.set()
        job = asyncio.ensure_future(asyncio.to_thread(self._thread.join, 5.0))
        with contextlib.suppress(BaseException):
            await asyncio.shield(job)


class QueueApprover:
    """Asks through the approval queue in ``store`` (a URL).

    Each question opens its own connections and closes them when it is settled,
    so an idle gate holds none and nothing needs closing.
    """

    name = "queue"

    def __init__(
        self,
        store: str | StoreURL,
        *,
        timeout_ms: int,
        host: str | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        if timeout_ms <= 0:
            raise ValueError(f"approval timeout must be > 0 ms, got {timeout_ms}")
        self.url = store if isinstance(store, StoreURL) else parse_url(store)
        self.timeout_ms = timeout_ms
        self.host = host or socket.gethostname()
        self.poll_s = poll_s

    def _deny(self, message: str) -> ApprovalAnswer:
        return ApprovalAnswer(answer="deny", message=message, approver=self.name)

    def unreachable(self, exc: StoreError) -> ApprovalAnswer:
        return self._deny(
            f"the approval queue store is unreachable ({exc}), so the call was denied"
        )

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        db = Database(self.url)
        try:
            return await _Ask(self, ApprovalQueue(db), request).run()
        finally:
            closing = asyncio.ensure_future(asyncio.to_thread(db.close))
            with contextlib.suppress(BaseException):
                await asyncio.shield(closing)

    def answer_for(self, row: QueuedApproval) -> ApprovalAnswer:
        """The answer a settled row gives: the person's, or a deny for an expired one."""
        who = f"{self.name}:{row.person}"
        if row.status == "approved":
            return ApprovalAnswer(answer="allow_once", message=row.message or None, approver=who)
        if row.status == "denied":
            return ApprovalAnswer(answer="deny", message=row.message or None, approver=who)
        return self._deny(
            f"approval timed out: nobody answered queued approval {row.id} within "
            f"{self.timeout_ms} ms, so the call was denied"
        )


class _Ask:
    """One question's life in the queue: submit, wait, settle."""

    def __init__(
        self, approver: QueueApprover, queue: ApprovalQueue, request: ApprovalRequest
    ) -> None:
        self.approver = approver
        self.queue = queue
        self.db = queue.db
        self.request = request

    def _submit(self, timeout_s: float) -> QueuedApproval:
        request = self.request
        call = request.call
        return self.queue.submit(
            subject=call.subject,
            tenant=call.tenant,
            session=call.session,
            host=self.approver.host,
            pid=os.getpid(),
            command=call.command,
            workdir=call.workdir,
            description=call.description,
            escalation=request.escalation,
            reason=asked_because(request),
            rule=deciding_rules(request),
            question=request.question,
            call_id=request.call_id,
            timeout_s=timeout_s,
        )

    async def run(self) -> ApprovalAnswer:
        timeout_s = self.approver.timeout_ms / 1000
        # Give up a little before ask_with_timeout does, so this approver itself
        # settles the row (an answer that won the race still counts).
        deadline = time.monotonic() + timeout_s - min(0.5, timeout_s / 10)
        submitting = asyncio.ensure_future(
            asyncio.to_thread(self._submit, max(0.05, deadline - time.monotonic()))
        )
        try:
            row = await asyncio.shield(submitting)
        except StoreError as exc:
            logger.error("approval queue: cannot submit: %s", exc)
            return self.approver.unreachable(exc)
        except BaseException:
            await self._settle_after(submitting)
            raise
        logger.info("approval %s queued for call %s: %r", row.id, self.request.call_id,
                    self.request.call.command)
        try:
            final = await self._wait(row.id, deadline)
        except StoreError as exc:
            logger.error("approval queue: waiting for %s failed: %s", row.id, exc)
            await self._settle(row.id)
            return self.approver.unreachable(exc)
        except BaseException:
            await self._settle(row.id)
            raise
        return self.approver.answer_for(final)

    async def _wait(self, approval_id: str, deadline: float) -> QueuedApproval:
        wake = asyncio.Event()
        watcher: _Watcher | None = None
        if self.db.dialect == "postgresql":
            watcher = _Watcher(self.db, approval_id, wake)
        try:
            if watcher is not None:
                # LISTEN before the first read, so no answer can slip between the two.
                await watcher.started()
            while True:
                wake.clear()
                row = await asyncio.to_thread(self.queue.get, approval_id)
                if row is None:
                    raise StoreError(f"{self.db.display}: queued approval {approval_id} vanished")
                if row.status != "pending":
                    return row
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    final = await asyncio.to_thread(self.queue.expire, approval_id)
                    if final is None:
                        raise StoreError(
                            f"{self.db.display}: queued approval {approval_id} vanished"
                        )
                    return final
                listening = watcher is not None and watcher.broken is None
                step = min(remaining, RECHECK_S if listening else self.approver.poll_s)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(step):
                        await wake.wait()
        finally:
            if watcher is not None:
                await watcher.stop()

    async def _settle(self, approval_id: str) -> None:
        """Mark the row expired (the call stopped waiting); survives a second cancel."""
        job = asyncio.ensure_future(asyncio.to_thread(self._expire_quietly, approval_id))
        with contextlib.suppress(BaseException):
            await asyncio.shield(job)

    async def _settle_after(self, submitting: asyncio.Future[QueuedApproval]) -> None:
        """Cancelled while submitting: expire the row once the submit lands."""

        async def after() -> None:
            try:
                row = await submitting
            except BaseException:
                return  # nothing was queued
            await asyncio.to_thread(self._expire_quietly, row.id)

        job = asyncio.ensure_future(after())
        with contextlib.suppress(BaseException):
            await asyncio.shield(job)

    def _expire_quietly(self, approval_id: str) -> None:
        try:
            row = self.queue.expire(approval_id)
        except StoreError as exc:  # it expires by itself at expires_at
            logger.error("approval queue: cannot mark %s expired: %s", approval_id, exc)
            return
        if row is not None and row.status == "expired":
            logger.info("approval %s expired: the call stopped waiting", approval_id)
