"""Sealing a record in PostgreSQL: one statement under the log's lock (``docs/audit.md``).

The client (:func:`fragments`) serialises the record's own fields once, as the
canonical JSON members of the keys that sort before ``"hash"``, between
``"hash"`` and ``"prev"``, between ``"prev"`` and ``"seq"``, between ``"seq"``
and ``"time"``, and after ``"time"``. ``sg_audit_seal()`` then, in one
statement: takes the log's advisory lock (``pg_advisory_xact_lock`` on the key
every writer of the log uses), reads the head, joins the members with
``"prev"``, ``"seq"`` and ``"time"`` (the server's clock, UTC, microseconds,
like :func:`~shellgate.audit._fit.utc_now`) into the canonical JSON of the
record without ``hash``, hashes it (SHA-256 of its UTF-8), splices
``"hash":"…"`` into its sorted place and inserts the row. Sorted compact JSON of
an object is its members joined by commas, so this is byte for byte the line
:func:`~shellgate.audit._fit.seal` writes (``tests/audit_store`` checks it on
random records). The lock is held for the statement alone, no client round trip.

Only a record that needs no cutting whatever its ``seq`` takes this path
(:func:`fragments` returns ``None`` otherwise, and the writer seals on the
client, as before): cutting depends on the line's length, hence on the digits
of ``seq``, which only the server knows. Escaping does not, and is done here.

``sg_audit_sync()`` is the durable step: a transaction that writes WAL (a
transactional logical message, prefix ``shellgate-audit``, empty) and commits
with ``synchronous_commit = on``, so it returns once the WAL is on disk up to
its commit, past the record's. A transaction that only takes an xid writes no
WAL of its own and commits asynchronously: it waits for nothing. That is what
the ``audit`` component's ``sg_audit_release(lock, durable)`` did (so appends
with ``fsync`` returned before their record was on disk); this component
replaces it with one that calls ``sg_audit_sync()``.
"""

from __future__ import annotations

from collections.abc import Mapping

from shellgate.audit._chain import _ENCODER, MAX_RECORD_BYTES
from shellgate.audit._fit import escaped
from shellgate.store.db import Database, Dialect, ensure_schema

COMPONENT = "audit-seal"
VERSION = 1

#: The line's bytes besides the record's own members and their commas:
#: ``"hash":"<64>"``, ``"prev":"<64>"``, ``"seq":<19 digits at most>``,
#: ``"time":"YYYY-MM-DDTHH:MM:SS.ffffffZ"``, three commas between them, two braces.
_CHAIN_BYTES = 73 + 73 + 6 + 19 + 36 + 3 + 2

DDL: dict[Dialect, list[str]] = {
    "sqlite": [],  # SQLite seals on the client: BEGIN IMMEDIATE holds no one up across a network
    "postgresql": [
        r"""CREATE OR REPLACE FUNCTION sg_audit_seal(
                log_name TEXT, lock_name TEXT, before_hash TEXT, before_prev TEXT,
                before_seq TEXT, before_time TEXT, after_time TEXT, kind TEXT, call TEXT,
                who TEXT, OUT new_seq BIGINT, OUT new_hash TEXT)
            LANGUAGE plpgsql AS $$
            DECLARE
                head_hash TEXT;
                stamp TEXT;
                chain TEXT;
            BEGIN
                PERFORM pg_advisory_xact_lock(hashtext(lock_name));
                SELECT seq + 1, hash INTO new_seq, head_hash FROM sg_audit
                    WHERE log = log_name ORDER BY seq DESC LIMIT 1;
                IF NOT FOUND THEN
                    new_seq := 1;
                    head_hash := repeat('0', 64);
                END IF;
                stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC',
                                 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
                chain := concat_ws(',', NULLIF(before_prev, ''), '"prev":"' || head_hash || '"',
                                   NULLIF(before_seq, ''), '"seq":' || new_seq,
                                   NULLIF(before_time, ''), '"time":"' || stamp || '"',
                                   NULLIF(after_time, ''));
                new_hash := encode(sha256(convert_to(
                    '{' || concat_ws(',', NULLIF(before_hash, ''), chain) || '}', 'UTF8')), 'hex');
                INSERT INTO sg_audit (log, seq, prev, hash, time, type, call_id, subject, line)
                    VALUES (log_name, new_seq, head_hash, new_hash, stamp, kind, call, who,
                            '{' || concat_ws(',', NULLIF(before_hash, ''),
                                             '"hash":"' || new_hash || '"', chain) || '}');
            END $$""",
        """CREATE OR REPLACE FUNCTION sg_audit_sync() RETURNS BOOLEAN LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM set_config('synchronous_commit', 'on', true);
                PERFORM pg_logical_emit_message(true, 'shellgate-audit', '');
                RETURN true;
            END $$""",
        # The ``audit`` component's release waited for the flush with an xid alone,
        # which waits for nothing; replaced here, so writers of every version that
        # use this store wait for the disk.
        """CREATE OR REPLACE FUNCTION sg_audit_release(lock_name TEXT, durable BOOLEAN)
            RETURNS BOOLEAN LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_unlock(hashtext(lock_name));
                IF durable THEN
                    PERFORM sg_audit_sync();
                END IF;
                RETURN true;
            END $$""",
    ],
}


def ensure(db: Database) -> None:
    """Create the functions once (idempotent; a component of its own, so a store
    written by an older shellgate keeps working for it: the key is the same)."""
    ensure_schema(db, COMPONENT, VERSION, DDL)


def _members(record: Mapping[str, object]) -> str:
    return _ENCODER.encode(record)[1:-1] if record else ""


def _split(body: Mapping[str, object]) -> tuple[str, str, str, str, str]:
    parts: tuple[dict[str, object], ...] = ({}, {}, {}, {}, {})
    for key, value in body.items():
        slot = 0 if key < "hash" else 1 if key < "prev" else 2 if key < "seq" else (
            3 if key < "time" else 4)
        parts[slot][key] = value
    a, b, c, d, e = (_members(part) for part in parts)
    for text in (a, b, c, d, e):
        text.encode("utf-8")  # UnicodeEncodeError: a surrogate, to escape
    return a, b, c, d, e


def fragments(body: dict[str, object]) -> tuple[tuple[str, ...], dict[str, object]] | None:
    """``(members, body)``: the five member fragments of ``body`` (escaped as
    :func:`~shellgate.audit._fit.seal` would) and the body they hold; ``None``
    when the line might need cutting (the client seals it instead)."""
    try:
        parts = _split(body)
    except UnicodeEncodeError:
        body = escaped(body)
        parts = _split(body)
    size = sum(len(part.encode("utf-8")) + 1 for part in parts if part) + _CHAIN_BYTES  # +1: comma
    if size + 1 > MAX_RECORD_BYTES:
        return None
    return parts, body
