"""The approval queue: one row per question a person must answer (docs/approvals.md).

A gate in ``[approval] mode = "queue"`` :meth:`~ApprovalQueue.submit`\\ s a row
and waits; a person answers it from anywhere that reaches the same store
(``shellgate approvals approve|deny``, the web console). Rules the table keeps:

* **One answer wins.** :meth:`~ApprovalQueue.answer` is a single
  ``UPDATE … WHERE id = ? AND status = 'pending' AND expires_at > now``: of two
  racing answers exactly one changes the row; the other raises
  :class:`NotPending` saying who answered first.
* **One clock.** Times come from the database's clock (``created_at``,
  ``expires_at``, ``answered_at`` are epoch seconds), so hosts with skewed clocks
  agree on what has expired.
* **Nothing stays pending past its expiry.** Every read first marks the rows past
  ``expires_at`` as ``expired``; a late answer is refused.
* **Listeners hear every change** (``pg_notify`` on ``shellgate_approval`` with
  the row's id, sent at commit); SQLite readers poll.

Ids are random and unguessable (:func:`secrets.token_hex`, 128 bits), safe in a
URL, and never start with ``-`` (a base64url id did one time in 64, and
``shellgate approvals approve -Xy…`` then read it as an option).
"""

# ruff: noqa: S608  # SQL is built from module constants only; every value is a ? parameter

from __future__ import annotations

import dataclasses
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from shellgate.errors import StoreError
from shellgate.store.db import Database, Dialect, Tx, ensure_schema

CHANNEL = "shellgate_approval"
COMPONENT = "approvals"
SCHEMA_VERSION = 1
TABLE = "sg_approvals"

Status = Literal["pending", "approved", "denied", "expired"]
AnswerWord = Literal["approve", "deny"]

#: What a well-formed id looks like (what :func:`new_id` makes, with room to spare).
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,64}")
MAX_PERSON = 200
MAX_MESSAGE = 4000
POLL_S = 0.1  # how often a SQLite waiter re-reads the row

_NOW: dict[Dialect, str] = {
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
    "postgresql": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)",
}

#: What orders rows made at the same instant: SQLite's clock ticks in
#: milliseconds, so two asks can share one; its rowid follows insertion (rows are
#: never deleted). PostgreSQL's clock has microseconds, and the id is a tie-break.
_SAME_TIME: dict[Dialect, str] = {"sqlite": "rowid", "postgresql": "id"}

_COLUMNS = (
    "id", "status", "created_at", "expires_at", "answered_at", "person", "message",
    "subject", "tenant", "session", "host", "command", "workdir", "reason", "rule",
    "question", "call_id", "pid", "description", "escalation",
)


def _ddl(real: str) -> list[str]:
    return [
        f"""CREATE TABLE {TABLE} (
            id TEXT PRIMARY KEY,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
            created_at {real} NOT NULL,
            expires_at {real} NOT NULL,
            answered_at {real},
            person TEXT,
            message TEXT,
            subject TEXT NOT NULL,
            tenant TEXT NOT NULL,
            session TEXT NOT NULL,
            host TEXT NOT NULL,
            command TEXT NOT NULL,
            workdir TEXT NOT NULL,
            reason TEXT NOT NULL,
            rule TEXT,
            question TEXT NOT NULL,
            call_id TEXT NOT NULL,
            pid INTEGER,
            description TEXT NOT NULL,
            escalation TEXT
        )""",
        f"CREATE INDEX sg_approvals_status ON {TABLE} (status, expires_at)",
        f"CREATE INDEX sg_approvals_created ON {TABLE} (created_at)",
    ]


DDL: dict[Dialect, list[str]] = {
    "sqlite": _ddl("REAL"),
    "postgresql": _ddl("DOUBLE PRECISION"),
}


@dataclass(frozen=True)
class QueuedApproval:
    """One row of the queue. Times are epoch seconds (the database's clock); None when unset.

    ``status``: ``pending`` (waiting for a person), ``approved``, ``denied``, or
    ``expired`` (nobody answered in time, or the waiting call was cancelled).
    ``person``/``message``/``answered_at`` are set by the answer (``answered_at``
    also when it expired). ``rule`` is the deciding rule reference(s), comma
    separated; ``reason`` why a person is asked; ``question`` the gate's question.
    """

    id: str
    status: Status
    created_at: float
    expires_at: float
    answered_at: float | None
    person: str | None
    message: str | None
    subject: str
    tenant: str
    session: str
    host: str
    command: str
    workdir: str
    reason: str
    rule: str | None
    question: str
    call_id: str
    pid: int | None = None
    description: str = ""
    escalation: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object (``shellgate approvals list --json``)."""
        return dataclasses.asdict(self)


class NotPending(StoreError):
    """An answer to a row that is not pending; ``status`` says what it is instead.

    ``status`` is ``approved``, ``denied``, ``expired`` or ``unknown`` (no such id).
    """

    def __init__(self, message: str, status: str, row: QueuedApproval | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.row = row


def new_id() -> str:
    """A random, unguessable id (128 bits, 32 hex digits): URL-safe, never an option."""
    return secrets.token_hex(16)


def well_formed(approval_id: object) -> bool:
    return isinstance(approval_id, str) and ID_PATTERN.fullmatch(approval_id) is not None


def _row(values: Sequence[Any]) -> QueuedApproval:
    fields = dict(zip(_COLUMNS, values, strict=True))
    for key in ("created_at", "expires_at", "answered_at"):
        if fields[key] is not None:
            fields[key] = float(fields[key])
    if fields["status"] not in ("pending", "approved", "denied", "expired"):
        raise StoreError(f"approval {fields['id']!r} has an unknown status {fields['status']!r}")
    return QueuedApproval(**fields)


def _clean(text: str, what: str, limit: int) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a string, got {type(text).__name__}")
    if len(text) > limit:
        raise ValueError(f"{what} is longer than {limit} characters")
    return text


class ApprovalQueue:
    """The queue in one store. Creates its table on first use (any method).

    Every method is blocking (call it from a thread in async code) and raises
    :class:`~shellgate.errors.StoreError` naming the store when it cannot be used.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._ready = False
        self._now = _NOW[db.dialect]
        self._select = f"SELECT {', '.join(_COLUMNS)} FROM {TABLE}"
        self._then = _SAME_TIME[db.dialect]

    @property
    def display(self) -> str:
        return self.db.display

    def _ensure(self) -> None:
        if not self._ready:
            ensure_schema(self.db, COMPONENT, SCHEMA_VERSION, DDL)
            self._ready = True

    def _expire_stale(self, tx: Tx) -> None:
        expired = tx.execute(
            f"UPDATE {TABLE} SET status = 'expired', answered_at = expires_at "
            f"WHERE status = 'pending' AND expires_at <= {self._now} RETURNING id"
        )
        for (approval_id,) in expired:
            tx.notify(CHANNEL, approval_id)

    def submit(
        self,
        *,
        subject: str,
        tenant: str,
        session: str,
        host: str,
        command: str,
        workdir: str,
        reason: str,
        rule: str | None,
        question: str,
        call_id: str,
        timeout_s: float,
        pid: int | None = None,
        description: str = "",
        escalation: str | None = None,
    ) -> QueuedApproval:
        """Queue one question, pending for ``timeout_s`` seconds from now (database clock)."""
        if not timeout_s > 0:
            raise ValueError(f"an approval needs a timeout > 0 s, got {timeout_s}")
        self._ensure()
        approval_id = new_id()
        columns = (
            "id", "status", "created_at", "expires_at", "subject", "tenant", "session", "host",
            "command", "workdir", "reason", "rule", "question", "call_id", "pid",
            "description", "escalation",
        )
        values = (
            approval_id, subject, tenant, session, host, command, workdir, reason, rule,
            question, call_id, pid, description, escalation,
        )
        placeholders = ", ".join("?" * (len(columns) - 4))
        with self.db.transaction() as tx:
            rows = tx.execute(
                f"INSERT INTO {TABLE} ({', '.join(columns)}) VALUES "
                f"(?, 'pending', {self._now}, {self._now} + ?, {placeholders}) "
                f"RETURNING {', '.join(_COLUMNS)}",
                (values[0], float(timeout_s), *values[1:]),
            )
            tx.notify(CHANNEL, approval_id)
        return _row(rows[0])

    def get(self, approval_id: str) -> QueuedApproval | None:
        """The row, or None for an unknown (or malformed) id. A pending row past its
        expiry reads as ``expired`` (and is marked so)."""
        if not well_formed(approval_id):
            return None
        self._ensure()
        with self.db.transaction() as tx:
            self._expire_stale(tx)
            row = tx.one(f"{self._select} WHERE id = ?", (approval_id,))
        return None if row is None else _row(row)

    def pending(self) -> list[QueuedApproval]:
        """Every row still waiting for a person, oldest first."""
        self._ensure()
        with self.db.transaction() as tx:
            self._expire_stale(tx)
            rows = tx.execute(
                f"{self._select} WHERE status = 'pending' ORDER BY created_at, {self._then}"
            )
        return [_row(r) for r in rows]

    def recent(self, limit: int = 50) -> list[QueuedApproval]:
        """The latest ``limit`` rows whatever their status, newest first."""
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self._ensure()
        with self.db.transaction() as tx:
            self._expire_stale(tx)
            rows = tx.execute(
                f"{self._select} ORDER BY created_at DESC, {self._then} DESC LIMIT ?",
                (int(limit),),
            )
        return [_row(r) for r in rows]

    def answer(
        self, approval_id: str, answer: AnswerWord, *, person: str, message: str = ""
    ) -> QueuedApproval:
        """Approve or deny a pending row, atomically: exactly one answer wins.

        Raises :class:`NotPending` (a :class:`StoreError`) when the row is already
        answered, has expired, or does not exist; :class:`ValueError` for an empty
        ``person`` or an ``answer`` other than ``approve``/``deny``.
        """
        if answer not in ("approve", "deny"):
            raise ValueError(f"answer must be 'approve' or 'deny', got {answer!r}")
        person = _clean(person, "person", MAX_PERSON).strip()
        if not person:
            raise ValueError("an answer needs the person who gave it")
        message = _clean(message, "message", MAX_MESSAGE)
        if not well_formed(approval_id):
            raise NotPending(f"no approval with id {approval_id!r}", "unknown")
        self._ensure()
        status = "approved" if answer == "approve" else "denied"
        with self.db.transaction() as tx:
            self._expire_stale(tx)
            rows = tx.execute(
                f"UPDATE {TABLE} SET status = ?, answered_at = {self._now}, person = ?, "
                f"message = ? WHERE id = ? AND status = 'pending' AND expires_at > {self._now} "
                f"RETURNING {', '.join(_COLUMNS)}",
                (status, person, message, approval_id),
            )
            if rows:
                tx.notify(CHANNEL, approval_id)
                return _row(rows[0])
            found = tx.one(f"{self._select} WHERE id = ?", (approval_id,))
        if found is None:
            raise NotPending(f"no approval with id {approval_id!r}", "unknown")
        row = _row(found)
        if row.status == "expired":
            raise NotPending(f"approval {approval_id} has expired", "expired", row)
        raise NotPending(
            f"approval {approval_id} was already {row.status} by {row.person}", row.status, row
        )

    def expire(self, approval_id: str) -> QueuedApproval | None:
        """Mark a pending row ``expired`` now (its caller stopped waiting); return the row
        as it ends up — answered, if an answer won the race — or None if unknown."""
        if not well_formed(approval_id):
            return None
        self._ensure()
        with self.db.transaction() as tx:
            rows = tx.execute(
                f"UPDATE {TABLE} SET status = 'expired', answered_at = {self._now} "
                f"WHERE id = ? AND status = 'pending' RETURNING {', '.join(_COLUMNS)}",
                (approval_id,),
            )
            if rows:
                tx.notify(CHANNEL, approval_id)
                return _row(rows[0])
            found = tx.one(f"{self._select} WHERE id = ?", (approval_id,))
        return None if found is None else _row(found)

    def wait(self, approval_id: str, timeout_s: float) -> QueuedApproval:
        """Block until the row is no longer pending, or ``timeout_s`` passed; return it.

        PostgreSQL: woken by ``LISTEN shellgate_approval``; SQLite: re-reads every
        0.1 s. The row may still be ``pending`` when the timeout comes first (this
        does not expire it: see :meth:`expire`). Raises :class:`NotPending` with
        status ``unknown`` for an id that does not exist.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        listener = self.db.listen(CHANNEL) if self.db.dialect == "postgresql" else None
        try:
            while True:
                row = self.get(approval_id)
                if row is None:
                    raise NotPending(f"no approval with id {approval_id!r}", "unknown")
                remaining = deadline - time.monotonic()
                if row.status != "pending" or remaining <= 0:
                    return row
                if listener is None:
                    time.sleep(min(remaining, POLL_S))
                else:
                    listener.wait(min(remaining, 1.0))
        finally:
            if listener is not None:
                listener.close()
