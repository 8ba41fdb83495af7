"""The audit log in a database: :class:`StoreAuditLog`, the file log's twin.

Same interface as :class:`~shellgate.audit.log.AuditLog` (``append`` returns the
record's hash, ``reopen``, ``close``, ``last_hash``, ``enabled``, ``path``) and
the same record: the body is checked and sealed by the same code
(:func:`~shellgate.audit.log.checked_body`, :func:`~shellgate.audit._fit.seal`),
or on PostgreSQL by ``sg_audit_seal()`` from the same canonical members
(:mod:`shellgate.store._audit_seal`), so a row's ``line`` is byte for byte the
line the file log would write.

Invariants:

* ``append`` returns only after the record is committed (and, with ``fsync``,
  on the store's disk). Each append takes the log's lock (an advisory lock on
  ``"shellgate-audit:" + log`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` is
  already exclusive), reads the chain's head from the table, seals and inserts
  the record; so any number of processes on any number of hosts appending to
  one log make one valid chain, and none keeps a head of its own that could go
  stale. On PostgreSQL that is one statement on the server, and the lock is
  held neither across a client round trip nor across the disk flush
  (:meth:`StoreAuditLog._append_pg`).
* Any failure (store unreachable, permission withdrawn, the chain trigger
  refusing a row) raises :class:`~shellgate.errors.AuditError`: the gate
  refuses the call, as with the file. A failure before the commit writes
  nothing; one while waiting for the flush leaves the committed record (the
  call is refused all the same). The record's transaction is atomic, so unlike
  the file a failure does not poison the log: the next append reconnects.
* The store is opened at construction (its schema created if missing) and the
  head record's own hash is checked, so a gate does not start on a store it
  cannot write or whose last record is damaged.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from shellgate.audit._chain import GENESIS, canonical, record_hash
from shellgate.audit._fit import seal
from shellgate.audit.log import checked_body
from shellgate.errors import AuditError, StoreError
from shellgate.store import _audit_schema, _audit_seal
from shellgate.store.db import Database, StoreURL, parse_url

LOCK_PREFIX = "shellgate-audit:"
_INSERT = (
    "INSERT INTO sg_audit (log, seq, prev, hash, time, type, call_id, subject, line) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_HEAD = "SELECT seq, hash, line FROM sg_audit WHERE log = ? ORDER BY seq DESC LIMIT 1"
_HEAD_SEQ = "SELECT seq, hash FROM sg_audit WHERE log = ? ORDER BY seq DESC LIMIT 1"
_LOCK_HEAD = "SELECT head_seq, head_hash FROM sg_audit_lock_head(?, ?)"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext(?))"
_RELEASE = "SELECT sg_audit_release(?, ?)"  # the audit-seal component's: see _audit_seal
_SEAL = "SELECT new_seq, new_hash FROM sg_audit_seal(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_SYNC = "SELECT sg_audit_sync()"


def text_field(record: Mapping[str, Any], key: str) -> str | None:
    """A top-level field as its column holds it: the string, else NULL."""
    value = record.get(key)
    return value if isinstance(value, str) else None


class StoreAuditLog:
    """Append-only, hash-chained audit records in ``sg_audit`` (``docs/audit.md``).

    ``fsync`` (default on): a commit waits for the store's disk (PostgreSQL
    ``synchronous_commit = on``, SQLite ``synchronous = FULL``); off, a commit
    survives this process but not a crash of the server or machine holding the
    store (``synchronous_commit = off`` for this connection; SQLite ``NORMAL``).
    """

    path: Path | None = None  # no file: the records are in the store

    def __init__(self, url: str | StoreURL, log: str = "default", *, fsync: bool = True) -> None:
        if not isinstance(log, str) or not log or len(log) > 200:
            raise AuditError(f"audit log name must be 1 to 200 characters, got {log!r}")
        try:
            self.url = url if isinstance(url, StoreURL) else parse_url(url)
        except StoreError as exc:
            raise AuditError(f"audit store: {exc}") from None
        self.log = log
        self._lock_name = LOCK_PREFIX + log
        self._lock = threading.Lock()
        self._closed = False
        self._pg = self.url.dialect == "postgresql"
        self._fsync = fsync
        # PostgreSQL: the record's own commit never waits for the disk; _append_pg's
        # release waits instead, outside the lock, when fsync is on.
        self._db = Database(self.url, fsync=fsync and not self._pg)
        # PostgreSQL seals on the server (_append_pg) when its text is UTF-8, the
        # encoding the record's hash is over; otherwise on the client (_append_pg_client).
        self._server_seal = False
        try:
            try:
                _audit_schema.ensure(self._db)
                if self._pg:
                    _audit_seal.ensure(self._db)
                    encoding = self._db.statement("SHOW server_encoding")
                    self._server_seal = encoding[0][0] == "UTF8"
            except StoreError as exc:
                raise AuditError(f"audit log {log!r}: {exc}") from None
            self._last = self._read_head()
        except BaseException:
            self._db.close()
            raise

    @property
    def where(self) -> str:
        """The store (password hidden) and log, for messages."""
        return f"{self.url.display} (log {self.log!r})"

    @property
    def enabled(self) -> bool:
        return True

    @property
    def last_hash(self) -> str:
        """Hash of the last record this writer appended or read (``"0" * 64`` if none)."""
        return self._last

    def _read_head(self) -> str:
        try:
            with self._db.transaction() as tx:
                row = tx.one(_HEAD, (self.log,))
        except StoreError as exc:
            raise AuditError(f"audit log {self.log!r}: {exc}") from None
        if row is None:
            return GENESIS
        seq, digest, line = row
        try:
            record = json.loads(line)
            good = (
                isinstance(record, dict)
                and record_hash(record) == digest
                and canonical(record).decode("utf-8") == line
            )
        except ValueError:
            good = False
        if not good:
            raise AuditError(
                f"{self.where}: the last record (seq {seq}) is damaged: its hash does not "
                "match its content; run 'shellgate audit verify --store'"
            )
        return str(digest)

    def reopen(self) -> None:
        """Reconnect to the store and re-read the chain's head (SIGHUP, like the file).

        Raises :class:`AuditError` when the store cannot be reached or its head
        record is damaged; the log stays usable (the next append reconnects).
        """
        with self._lock:
            self._check_open()
            self._db.reconnect()
            self._last = self._read_head()

    def _check_open(self) -> None:
        if self._closed:
            raise AuditError(f"{self.where}: audit log is closed")

    def append(self, record: Mapping[str, object]) -> str:
        """Commit ``record`` as the next record of the log's chain; return its hash.

        The same checks, fields and fitting as the file log (``AuditLog.append``).
        """
        body = checked_body(record)
        with self._lock:
            self._check_open()
            try:
                digest = self._append_pg(body) if self._pg else self._append_sqlite(body)
            except StoreError as exc:
                raise AuditError(f"audit log {self.log!r}: record not written: {exc}") from None
            self._last = digest
            return digest

    def _row(self, body: dict[str, object], seq: int, prev: str) -> tuple[str, tuple[Any, ...]]:
        """``(hash, INSERT parameters)`` of ``body`` sealed as record ``seq`` after ``prev``."""
        line, digest = seal(body, seq, prev)
        text = line[:-1].decode("utf-8")  # sealed lines are valid UTF-8
        sealed = json.loads(text)
        return digest, (
            self.log, seq, prev, digest, sealed["time"], text_field(sealed, "type"),
            text_field(sealed, "call_id"), text_field(sealed, "subject"), text,
        )

    def _append_sqlite(self, body: dict[str, object]) -> str:
        with self._db.transaction() as tx:  # BEGIN IMMEDIATE: the only writer until commit
            head = tx.one(_HEAD_SEQ, (self.log,))
            seq, prev = (int(head[0]), str(head[1])) if head else (0, GENESIS)
            digest, row = self._row(body, seq + 1, prev)
            tx.execute(_INSERT, row)
        return digest

    def _append_pg(self, body: dict[str, object]) -> str:
        """One round trip; the log's lock is held for one statement on the server.

        ``BEGIN; SELECT … FROM sg_audit_seal(…); COMMIT;`` (:mod:`._audit_seal`:
        lock, head, seal, insert, with the lock released at the commit), committed
        without waiting for the disk (the connection runs with
        ``synchronous_commit = off``); then, with ``fsync``, ``SELECT
        sg_audit_sync()``: a transaction that writes WAL and commits with
        ``synchronous_commit = on``, so it returns once the WAL is on disk up to
        it, past the record's. So the lock is never held across a client round
        trip or a disk flush, and concurrent writers share their flushes (group
        commit). WAL is sequential: a crash keeps a prefix of it, never a record
        without the one it chains onto. ``append`` returns only after the whole
        batch, so a caller never acts on a record that is not durable as
        configured; a reader may see a record a moment before it is. A failing
        seal rolls its transaction back (and with it the lock) and skips the rest.
        """
        prepared = _audit_seal.fragments(body) if self._server_seal else None
        if prepared is None:
            return self._append_pg_client(body)
        parts, body = prepared
        params = (self.log, self._lock_name, *parts, text_field(body, "type"),
                  text_field(body, "call_id"), text_field(body, "subject"))
        if self._fsync:
            row = self._db.batch_sets(f"BEGIN; {_SEAL}; COMMIT; {_SYNC}", params)[1][0]
        else:
            row = self._db.statement(_SEAL, params)[0]
        return str(row[1])

    def _append_pg_client(self, body: dict[str, object]) -> str:
        """Sealed on the client: a record that may need cutting (its length decides,
        and depends on ``seq``), or a store whose text is not UTF-8. Two round trips
        (autocommit, so no ``BEGIN`` of this object's own):

        1. take the log's advisory lock (session level) and read the head;
        2. ``BEGIN; INSERT …; COMMIT; SELECT sg_audit_release(…)``: committed
           without waiting for the disk, unlocked, then, with ``fsync``, the flush
           waited for as in :meth:`_append_pg` (``sg_audit_sync()``).

        On any failure the lock is released, or the connection dropped (a
        session's advisory locks end with it).
        """
        db = self._db
        head = db.statement(_LOCK_HEAD, (self._lock_name, self.log))
        try:
            seq, prev = int(head[0][0]), str(head[0][1])
            digest, row = self._row(body, seq + 1, prev)
            # The explicit COMMIT ends the record's transaction before the release
            # runs; a failing INSERT skips the rest.
            db.batch(f"BEGIN; {_INSERT}; COMMIT; {_RELEASE}",
                     (*row, self._lock_name, self._fsync))
        except BaseException:
            try:
                db.statement(_UNLOCK, (self._lock_name,))
            except StoreError:
                db.reconnect()  # a session's advisory locks end with it
            raise
        return digest

    def close(self) -> None:
        """Close the connection; later appends raise. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    def __enter__(self) -> StoreAuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
