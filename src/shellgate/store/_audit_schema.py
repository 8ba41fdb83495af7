"""The audit table, ``sg_audit``, and what the database itself enforces on it.

One table holds many logs (``log``), each its own chain. A row is one record:
``line`` is the exact canonical line the file log would write (without its
``\\n``); ``seq``, ``prev``, ``hash``, ``time``, ``type``, ``call_id`` and
``subject`` repeat the record's top-level fields so readers can find records
without parsing (``verify`` checks that they agree with ``line``).

The database refuses, whoever asks (short of disabling the triggers, which
takes the table's owner or a superuser):

* any ``UPDATE`` or ``DELETE`` (and on PostgreSQL ``TRUNCATE``): statement-level
  triggers raise, even for a statement that matches no row;
* a row that does not continue its log's chain: a ``BEFORE INSERT`` trigger
  requires ``seq`` = the log's highest ``seq`` + 1 and ``prev`` = that record's
  ``hash`` (``1`` and ``"0" * 64`` for a new log); and the keys ``(log, seq)``
  and ``(log, prev)`` are unique, so two writers racing past the trigger
  cannot both commit a successor of one record;
* a ``seq`` below 1, and a ``prev`` or ``hash`` that is not 64 hex digits.

The functions of the one-statement append are another component's
(:mod:`shellgate.store._audit_seal`), so a store this version created still
serves writers that predate it.

What it does not check is the content: that ``hash`` is the SHA-256 of the
record and that the columns match ``line``. ``verify`` does (``docs/audit.md``).
"""

from __future__ import annotations

from shellgate.store.db import Database, Dialect, ensure_schema, has_table

COMPONENT = "audit"
VERSION = 1
TABLE = "sg_audit"

_COMMON_INDEXES = [
    "CREATE INDEX sg_audit_call ON sg_audit (log, call_id)",
    "CREATE INDEX sg_audit_subject ON sg_audit (log, subject, seq)",
]

DDL: dict[Dialect, list[str]] = {
    "sqlite": [
        """CREATE TABLE sg_audit (
            log TEXT NOT NULL,
            seq INTEGER NOT NULL CHECK (seq >= 1),
            prev TEXT NOT NULL CHECK (length(prev) = 64 AND prev NOT GLOB '*[^0-9a-f]*'),
            hash TEXT NOT NULL CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
            time TEXT NOT NULL,
            type TEXT NULL,
            call_id TEXT NULL,
            subject TEXT NULL,
            line TEXT NOT NULL,
            PRIMARY KEY (log, seq),
            UNIQUE (log, prev)
        )""",
        *_COMMON_INDEXES,
        """CREATE TRIGGER sg_audit_no_update BEFORE UPDATE ON sg_audit
            BEGIN SELECT RAISE(ABORT, 'sg_audit is append-only: UPDATE refused'); END""",
        """CREATE TRIGGER sg_audit_no_delete BEFORE DELETE ON sg_audit
            BEGIN SELECT RAISE(ABORT, 'sg_audit is append-only: DELETE refused'); END""",
        """CREATE TRIGGER sg_audit_chain BEFORE INSERT ON sg_audit
            WHEN NEW.seq IS NOT COALESCE((SELECT seq FROM sg_audit WHERE log = NEW.log
                                          ORDER BY seq DESC LIMIT 1), 0) + 1
              OR NEW.prev IS NOT COALESCE((SELECT hash FROM sg_audit WHERE log = NEW.log
                                           ORDER BY seq DESC LIMIT 1),
                                           hex(zeroblob(32)))
            BEGIN SELECT RAISE(ABORT, 'sg_audit: a record must continue its log''s chain'); END""",
    ],
    "postgresql": [
        """CREATE TABLE sg_audit (
            log TEXT NOT NULL,
            seq BIGINT NOT NULL CHECK (seq >= 1),
            prev TEXT NOT NULL CHECK (prev ~ '^[0-9a-f]{64}$'),
            hash TEXT NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
            time TEXT NOT NULL,
            type TEXT NULL,
            call_id TEXT NULL,
            subject TEXT NULL,
            line TEXT NOT NULL,
            PRIMARY KEY (log, seq),
            UNIQUE (log, prev)
        )""",
        *_COMMON_INDEXES,
        """CREATE OR REPLACE FUNCTION sg_audit_append_only() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'sg_audit is append-only: % refused', TG_OP
                    USING ERRCODE = 'insufficient_privilege';
            END $$""",
        """CREATE TRIGGER sg_audit_no_change BEFORE UPDATE OR DELETE ON sg_audit
            FOR EACH STATEMENT EXECUTE FUNCTION sg_audit_append_only()""",
        """CREATE TRIGGER sg_audit_no_truncate BEFORE TRUNCATE ON sg_audit
            FOR EACH STATEMENT EXECUTE FUNCTION sg_audit_append_only()""",
        """CREATE OR REPLACE FUNCTION sg_audit_chain() RETURNS trigger
            LANGUAGE plpgsql AS $$
            DECLARE
                head_seq BIGINT := 0;
                head_hash TEXT := repeat('0', 64);
            BEGIN
                SELECT seq, hash INTO head_seq, head_hash FROM sg_audit
                    WHERE log = NEW.log ORDER BY seq DESC LIMIT 1;
                IF NOT FOUND THEN
                    head_seq := 0;
                    head_hash := repeat('0', 64);
                END IF;
                IF NEW.seq <> head_seq + 1 OR NEW.prev <> head_hash THEN
                    RAISE EXCEPTION
                        'sg_audit: a record must continue its log''s chain: log %, seq % after %',
                        NEW.log, NEW.seq, head_seq
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
            END $$""",
        """CREATE TRIGGER sg_audit_chain BEFORE INSERT ON sg_audit
            FOR EACH ROW EXECUTE FUNCTION sg_audit_chain()""",
        # The client-sealing writer's statements (StoreAuditLog._append_pg_client): take
        # the log's lock (session level) and read the head with a fresh snapshot, in one
        # round trip (a volatile function's statements each take a snapshot, so a record
        # committed while this waited for the lock is seen); then, after the INSERT
        # committed, release the lock. Its durable branch (an xid alone) waited for
        # nothing: the audit-seal component (_audit_seal) replaces this function with
        # one that does, and adds sg_audit_seal(), the one-statement append.
        """CREATE OR REPLACE FUNCTION sg_audit_lock_head(lock_name TEXT, log_name TEXT,
                                                        OUT head_seq BIGINT, OUT head_hash TEXT)
            LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_lock(hashtext(lock_name));
                SELECT seq, hash INTO head_seq, head_hash FROM sg_audit
                    WHERE log = log_name ORDER BY seq DESC LIMIT 1;
                IF NOT FOUND THEN
                    head_seq := 0;
                    head_hash := repeat('0', 64);
                END IF;
            END $$""",
        """CREATE OR REPLACE FUNCTION sg_audit_release(lock_name TEXT, durable BOOLEAN)
            RETURNS BOOLEAN LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_unlock(hashtext(lock_name));
                IF durable THEN
                    PERFORM set_config('synchronous_commit', 'on', true);
                    PERFORM pg_current_xact_id();
                END IF;
                RETURN true;
            END $$""",
    ],
}


def ensure(db: Database) -> None:
    """Create the audit table and its triggers once (idempotent, many processes)."""
    ensure_schema(db, COMPONENT, VERSION, DDL)


def exists(db: Database) -> bool:
    """Whether the store holds the audit table (readers never create it)."""
    with db.transaction() as tx:
        return has_table(tx, TABLE)
