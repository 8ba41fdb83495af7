"""The audit log in a database: reading it back, checking its chain (``docs/audit.md``).

The writer is :class:`~shellgate.store.audit_log.StoreAuditLog` (re-exported
here); the table and what the database enforces are in
:mod:`shellgate.store._audit_schema`. Readers never create anything: a store
without the audit table holds no records, and :func:`open_reader` refuses a
SQLite file that does not exist rather than creating an empty one.

:func:`verify_store` applies the file verifier's checks
(:mod:`shellgate.audit.reader`) to each row's ``line`` in ``seq`` order — the
line is valid JSON in canonical form, its ``hash`` is the SHA-256 of its
content, its ``seq`` and ``prev`` continue the previous record — and also that
the row's columns (``seq``, ``prev``, ``hash``, ``time``, ``type``,
``call_id``, ``subject``) agree with the line, so a reader filtering on a
column is not misled. It stops at the first bad record and names its ``seq``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from shellgate.audit._chain import GENESIS
from shellgate.audit.reader import VerifyResult, _check_raw, _parse
from shellgate.errors import AuditError, StoreError
from shellgate.store import _audit_schema
from shellgate.store.audit_log import StoreAuditLog, text_field
from shellgate.store.db import Database, parse_url

__all__ = [
    "StoreAuditLog",
    "has_log",
    "log_names",
    "open_reader",
    "read_records",
    "tail_records",
    "verify_store",
]

#: Rows read per transaction while verifying or exporting (writers interleave).
PAGE_ROWS = 1000
_COLUMNS = "seq, prev, hash, time, type, call_id, subject, line"


def open_reader(url: str) -> Database:
    """The store at ``url`` for reading; :class:`AuditError` for a bad URL or a
    SQLite file that does not exist (a typo must not create an empty store)."""
    try:
        parsed = parse_url(url)
    except StoreError as exc:
        raise AuditError(str(exc)) from None
    if parsed.dialect == "sqlite" and parsed.path is not None and not parsed.path.is_file():
        raise AuditError(f"{parsed.display}: no such SQLite file")
    return Database(parsed)


def _reading(db: Database) -> bool:
    """Whether the store has the audit table; StoreError as AuditError."""
    try:
        return _audit_schema.exists(db)
    except StoreError as exc:
        raise AuditError(str(exc)) from None


def _rows(db: Database, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    try:
        with db.transaction() as tx:
            return tx.execute(sql, params)
    except StoreError as exc:
        raise AuditError(str(exc)) from None


def has_log(db: Database, log: str) -> bool:
    """Whether ``log`` holds at least one record."""
    if not _reading(db):
        return False
    return bool(_rows(db, "SELECT 1 FROM sg_audit WHERE log = ? LIMIT 1", (log,)))


def log_names(db: Database) -> list[str]:
    """Every log in the store, sorted (reads the whole key index: for messages)."""
    if not _reading(db):
        return []
    return [str(row[0]) for row in _rows(db, "SELECT DISTINCT log FROM sg_audit ORDER BY log", ())]


def _record(seq: int, line: str) -> dict[str, Any]:
    record, why = _parse(line.encode("utf-8"))
    if record is None:
        return {"type": "unreadable", "seq": seq, "reason": why, "raw": line[:200]}
    return record


def read_records(
    db: Database,
    log: str = "default",
    *,
    after_seq: int = 0,
    limit: int = 1000,
    type: str | None = None,
    subject: str | None = None,
    call_id: str | None = None,
) -> list[dict[str, Any]]:
    """The records of ``log`` with ``seq > after_seq``, in ``seq`` order, at most ``limit``.

    Each is the parsed line (it carries its ``seq``); a line that is not a
    record reads as ``{"type": "unreadable", "seq", "reason", "raw"}``. The
    filters match the row's columns exactly. Nothing is verified here: see
    :func:`verify_store`.
    """
    if limit < 0 or after_seq < 0:
        raise ValueError("read_records needs limit >= 0 and after_seq >= 0")
    if limit == 0 or not _reading(db):
        return []
    where, params = ["log = ?", "seq > ?"], [log, after_seq]
    for column, value in (("type", type), ("subject", subject), ("call_id", call_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows = _rows(
        db,
        f"SELECT seq, line FROM sg_audit WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",  # noqa: S608 - fixed column names; values are parameters
        (*params, limit),
    )
    return [_record(int(seq), str(line)) for seq, line in rows]


def tail_records(db: Database, log: str = "default", n: int = 20) -> list[dict[str, Any]]:
    """The last ``n`` records of ``log``, oldest first (like ``audit.tail`` for a file)."""
    if n < 0:
        raise ValueError(f"tail needs n >= 0, got {n}")
    if n == 0 or not _reading(db):
        return []
    rows = _rows(db, "SELECT seq, line FROM sg_audit WHERE log = ? ORDER BY seq DESC LIMIT ?",
                 (log, n))
    return [_record(int(seq), str(line)) for seq, line in reversed(rows)]


def _column_problem(row: tuple[Any, ...], record: dict[str, Any]) -> str | None:
    seq, prev, digest, when, kind, call_id, subject, _ = row
    expected = {
        "seq": (seq, record["seq"]),
        "prev": (prev, record["prev"]),
        "hash": (digest, record["hash"]),
        "time": (when, record["time"]),
        "type": (kind, text_field(record, "type")),
        "call_id": (call_id, text_field(record, "call_id")),
        "subject": (subject, text_field(record, "subject")),
    }
    for column, (stored, in_line) in expected.items():
        if stored != in_line:
            return (
                f"the row's {column} column ({stored!r}) is not its record's ({in_line!r}): "
                "the row was edited"
            )
    return None


def verify_store(
    db: Database,
    log: str = "default",
    *,
    each: Callable[[int, bytes], None] | None = None,
) -> VerifyResult:
    """Check the chain of ``log`` from its first record; stop at the first bad one.

    ``first_bad`` is that record's ``seq`` (the row's; ``file`` is ``None``),
    ``records`` the valid records before it, ``last_hash`` the head of the valid
    chain. An empty or unknown log is ``ok`` with 0 records (the CLI refuses an
    unknown name). ``each(seq, line)`` is called with every good line (with its
    ``\\n``) as soon as it is checked. Raises :class:`AuditError` when the store
    cannot be read.
    """
    if not _reading(db):
        return VerifyResult(ok=True, records=0)
    seq, prev, count, after = 0, GENESIS, 0, 0
    while True:
        rows = _rows(
            db,
            f"SELECT {_COLUMNS} FROM sg_audit WHERE log = ? AND seq > ? ORDER BY seq LIMIT ?",  # noqa: S608
            (log, after, PAGE_ROWS),
        )
        for row in rows:
            row_seq, line = int(row[0]), str(row[-1])
            raw = line.encode("utf-8") + b"\n"
            checked = _check_raw(raw, seq, prev)
            problem = checked if isinstance(checked, str) else None
            if problem is None:
                problem = _column_problem(row, json.loads(line))
            if problem is not None:
                return VerifyResult(
                    ok=False, records=count, first_bad=row_seq, reason=problem, last_hash=prev
                )
            assert isinstance(checked, tuple)
            seq, prev = checked
            count += 1
            if each is not None:
                each(seq, raw)
            after = row_seq
        if len(rows) < PAGE_ROWS:
            return VerifyResult(ok=True, records=count, last_hash=prev)
