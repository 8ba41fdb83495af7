"""One database behind a URL: SQLite (the standard library) or PostgreSQL (psycopg 3).

The fleet's stores (policy sets, the audit table, the approval queue) all speak
through :class:`Database`; nothing else in shellgate imports ``sqlite3`` or
``psycopg``. What it gives them:

* :meth:`Database.transaction` — one write transaction, committed when the block
  ends and rolled back when it raises. SQLite takes the write lock up front
  (``BEGIN IMMEDIATE``), so two processes never interleave; PostgreSQL serialises
  where a store asks it to (:meth:`Tx.lock`, a transaction-scoped advisory lock).
  SQL is written once, with ``?`` placeholders, and converted for psycopg.
* :meth:`Tx.notify` — ``pg_notify`` in the same transaction, so a listener hears
  of a change only once it is committed; a no-op on SQLite, whose readers poll.
* :meth:`Database.listen` — a dedicated connection that waits for notifications.
* Failures are :class:`~shellgate.errors.StoreError` naming the store by its URL
  with any password hidden (:attr:`StoreURL.display`), never a driver exception.

URLs: ``postgresql://user:pass@host:port/db`` (anything libpq reads), and
``sqlite:///absolute/path.db`` or ``sqlite:relative/path.db`` (RFC 8089 style:
after ``sqlite://`` comes an empty authority and an absolute path; a relative
path has no slashes after the colon). A SQLite file is created owner-only
(0600): it can hold commands and their secrets.

psycopg is imported only for a PostgreSQL URL: the SQLite default needs nothing
beyond the standard library (``pip install 'shellgate[fleet]'`` adds psycopg).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from shellgate.errors import StoreError

Dialect = Literal["sqlite", "postgresql"]
CONNECT_TIMEOUT_S = 5
SQLITE_BUSY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class StoreURL:
    """A parsed store URL: its dialect, and for SQLite the file."""

    raw: str
    dialect: Dialect
    path: Path | None = None  # SQLite only

    @property
    def display(self) -> str:
        """The URL with any password replaced by ``***`` (safe for logs and errors)."""
        if self.dialect == "sqlite":
            return self.raw
        parts = urlsplit(self.raw)
        if parts.password is None:
            return self.raw
        user = parts.username or ""
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def parse_url(url: str, *, base: Path | None = None) -> StoreURL:
    """Read a store URL; a relative SQLite path is read against ``base`` (else the cwd)."""
    if not isinstance(url, str) or not url.strip():
        raise StoreError("store URL is empty")
    url = url.strip()
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep:
        raise StoreError("store URL has no scheme (sqlite: or postgresql:)")
    if scheme in ("postgresql", "postgres"):
        if not rest.startswith("//"):
            # Not echoed: a malformed URL may still carry a password.
            raise StoreError("a PostgreSQL store URL is postgresql://[user[:password]@]host/db")
        return StoreURL(url, "postgresql")
    if scheme == "sqlite":
        if rest.startswith("//"):
            authority, slash, path = rest[2:].partition("/")
            if authority or not slash or not path:
                raise StoreError(
                    f"store URL {url!r}: expected sqlite:///absolute/path.db or "
                    "sqlite:relative/path.db (no host part)"
                )
            file = Path("/" + path)
        elif rest.startswith("/"):
            raise StoreError(
                f"store URL {url!r}: write an absolute path as sqlite:///absolute/path.db"
            )
        elif rest:
            file = Path(rest).expanduser()
            if not file.is_absolute():
                file = (base or Path.cwd()) / file
        else:
            raise StoreError(f"store URL {url!r}: no file named")
        return StoreURL(url, "sqlite", file)
    raise StoreError(f"store URL: unknown scheme {scheme!r} (sqlite: or postgresql:)")


_QMARK = re.compile(r"\?")


class Tx:
    """One open transaction (see :meth:`Database.transaction`)."""

    def __init__(self, db: Database, conn: Any) -> None:
        self._db = db
        self._conn = conn
        self.dialect = db.dialect

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (``?`` placeholders) and return its rows (``[]`` if none)."""
        if self.dialect == "postgresql":
            sql = _QMARK.sub("%s", sql.replace("%", "%%"))
        try:
            cursor = self._conn.execute(sql, tuple(params))
            return list(cursor.fetchall()) if cursor.description is not None else []
        except Exception as exc:
            raise self._db.failure(exc) from exc

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self.execute(sql, params)
        return rows[0] if rows else None

    def script(self, statements: Sequence[str]) -> None:
        for statement in statements:
            self.execute(statement)

    def notify(self, channel: str, payload: str = "") -> None:
        """Tell listeners on ``channel``, at commit (PostgreSQL); SQLite readers poll."""
        if self.dialect == "postgresql":
            self.execute("SELECT pg_notify(?, ?)", (channel, payload))

    def lock(self, name: str) -> None:
        """Serialise with every other transaction that locks ``name``, until commit.

        PostgreSQL: ``pg_advisory_xact_lock``; SQLite: already exclusive (``BEGIN
        IMMEDIATE``), so nothing to do.
        """
        if self.dialect == "postgresql":
            self.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (name,))


class Database:
    """A store's connection, shared by threads through one lock (see the module doc)."""

    def __init__(self, url: str | StoreURL, *, fsync: bool = True) -> None:
        """``fsync=False``: SQLite ``synchronous=NORMAL``, PostgreSQL
        ``synchronous_commit=off`` (a commit survives this process, not a crash of
        the machine or server holding the store)."""
        self.url = url if isinstance(url, StoreURL) else parse_url(url)
        self.dialect: Dialect = self.url.dialect
        self._fsync = fsync
        self._lock = threading.RLock()
        self._conn: Any = None
        self._closed = False

    @property
    def display(self) -> str:
        return self.url.display

    def failure(self, exc: BaseException) -> StoreError:
        """A driver exception as a :class:`StoreError` naming this store; drops a
        connection that may be broken, so the next transaction reconnects."""
        if isinstance(exc, StoreError):
            return exc
        message = " ".join(str(exc).split()) or type(exc).__name__
        if self._is_connection_error(exc):
            self._drop()
        return StoreError(f"{self.display}: {message}")

    def _is_connection_error(self, exc: BaseException) -> bool:
        if self.dialect == "postgresql":
            import psycopg

            return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        return False

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # already broken; closing is best effort
                conn.close()

    def _connect(self) -> Any:
        if self._closed:
            raise StoreError(f"{self.display}: store is closed")
        if self._conn is not None:
            return self._conn
        if self.dialect == "sqlite":
            self._conn = _sqlite_connect(self.url, fsync=self._fsync)
        else:
            conn = _pg_connect(self.url, autocommit=False)
            if not self._fsync:
                # A commit returns before its WAL reaches the disk: it survives this
                # process, not a crash of the server (see docs/audit.md, "fsync").
                try:
                    conn.execute("SET synchronous_commit = off")
                    conn.commit()
                except Exception as exc:
                    conn.close()
                    raise StoreError(f"{self.display}: cannot connect: {exc}") from exc
            self._conn = conn
        return self._conn

    def reconnect(self) -> None:
        """Drop the connection; the next transaction opens a new one."""
        with self._lock:
            self._drop()

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One transaction: committed at the end of the block, rolled back if it raises."""
        with self._lock:
            try:
                conn = self._connect()
                if self.dialect == "sqlite":
                    conn.execute("BEGIN IMMEDIATE")
            except StoreError:
                raise
            except Exception as exc:
                raise self.failure(exc) from exc
            try:
                yield Tx(self, conn)
            except BaseException:
                try:
                    conn.rollback()
                except Exception:
                    self._drop()
                raise
            try:
                conn.commit()
            except Exception as exc:
                raise self.failure(exc) from exc

    def statement(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement as its own transaction, in one round trip; its rows.

        PostgreSQL: run in autocommit (no ``BEGIN``/``COMMIT`` round trips), so a
        session-level lock or setting it takes outlives it. SQLite: a
        :meth:`transaction` of that one statement.
        """
        if self.dialect == "sqlite":
            with self.transaction() as tx:
                return tx.execute(sql, params)
        with self._lock:
            conn = self._connect()
            try:
                conn.autocommit = True
            except Exception as exc:
                raise self.failure(exc) from exc
            try:
                return Tx(self, conn).execute(sql, params)
            finally:
                if self._conn is conn:
                    with contextlib.suppress(Exception):  # broken: dropped, reconnects
                        conn.autocommit = False

    def batch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Several ``;``-separated statements in one round trip (PostgreSQL only).

        Parameters are bound on the client (psycopg's ``ClientCursor``) and the
        text is sent as one simple query, outside any transaction this object
        opened: write ``BEGIN; …; COMMIT;`` for a transaction. A failing
        statement ends the batch (an open ``BEGIN`` block is rolled back). The
        rows are the last statement's.
        """
        return self.batch_sets(sql, params)[-1]

    def batch_sets(self, sql: str, params: Sequence[Any] = ()) -> list[list[tuple[Any, ...]]]:
        """:meth:`batch`, returning every statement's rows (``[]`` for one without)."""
        if self.dialect != "postgresql":
            raise StoreError(f"{self.display}: batches are for PostgreSQL")
        import psycopg

        with self._lock:
            conn = self._connect()
            try:
                conn.autocommit = True
                cursor = psycopg.ClientCursor(conn)
                cursor.execute(_QMARK.sub("%s", sql.replace("%", "%%")), tuple(params))
                sets: list[list[tuple[Any, ...]]] = []
                while True:
                    sets.append(list(cursor.fetchall()) if cursor.description is not None else [])
                    if not cursor.nextset():
                        break
                conn.autocommit = False
                return sets
            except Exception as exc:
                failure = self.failure(exc)
                if self._conn is conn:
                    try:  # a BEGIN block the failure left open (or aborted) ends here
                        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                            conn.execute("ROLLBACK")
                        conn.autocommit = False
                    except Exception:
                        self._drop()
                raise failure from exc

    def listen(self, channel: str) -> Listener:
        """A dedicated connection waiting for ``channel`` (PostgreSQL); see :class:`Listener`."""
        return Listener(self.url, channel)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Listener:
    """Notifications on one channel, from its own autocommit connection.

    :meth:`wait` returns the payloads that arrived within ``timeout`` seconds
    (possibly ``[]``). SQLite has no notifications: its ``wait`` just sleeps the
    timeout out, and the caller polls. A broken connection raises
    :class:`StoreError` from ``wait``; the caller makes a new listener.
    """

    def __init__(self, url: StoreURL, channel: str) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", channel):
            raise StoreError(f"bad channel name {channel!r}")
        self.url = url
        self.channel = channel
        self._conn: Any = None
        self._stop = threading.Event()
        if url.dialect == "postgresql":
            self._conn = _pg_connect(url, autocommit=True)
            try:
                self._conn.execute(f"LISTEN {channel}")
            except Exception as exc:
                self._conn.close()
                raise StoreError(f"{url.display}: cannot listen: {exc}") from exc

    def wait(self, timeout: float) -> list[str]:
        if self._conn is None:
            self._stop.wait(timeout)
            return []
        try:
            ready, _, _ = select.select([self._conn.fileno()], [], [], timeout)
            if not ready:
                return []
            return [n.payload for n in self._conn.notifies(timeout=0, stop_after=None)]
        except Exception as exc:
            raise StoreError(f"{self.url.display}: listening failed: {exc}") from exc

    def close(self) -> None:
        self._stop.set()
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing is best effort
                self._conn.close()
            self._conn = None


def _sqlite_connect(url: StoreURL, *, fsync: bool) -> Any:
    import sqlite3

    assert url.path is not None
    try:
        if not url.path.exists():
            url.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(url.path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        conn = sqlite3.connect(
            url.path, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None,
            check_same_thread=False,
        )
        _set_wal(conn)
        conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        conn.execute("PRAGMA foreign_keys=ON")
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{url.display}: cannot open: {exc}") from exc
    return conn


def _set_wal(conn: Any) -> None:
    """Switch a new file to WAL. The switch needs the file to itself and SQLite does
    not wait for it (no busy handler), so processes opening a new store together
    retry here instead of failing with "database is locked"."""
    import sqlite3
    import time

    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def _pg_connect(url: StoreURL, *, autocommit: bool) -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            f"{url.display}: a PostgreSQL store needs psycopg: pip install 'shellgate[fleet]'"
        ) from exc
    try:
        return psycopg.connect(url.raw, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
    except Exception as exc:
        message = " ".join(str(exc).split())
        raise StoreError(f"{url.display}: cannot connect: {message}") from exc


def has_table(tx: Tx, name: str) -> bool:
    """Whether table ``name`` exists (on PostgreSQL: on the search path)."""
    if tx.dialect == "sqlite":
        return tx.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)) is not None
    row = tx.one("SELECT to_regclass(?) IS NOT NULL", (name,))
    return bool(row and row[0])


def ensure_schema(
    db: Database, component: str, version: int, ddl: Mapping[Dialect, Sequence[str]]
) -> None:
    """Create ``component``'s tables once (idempotent, safe from many processes).

    Records ``(component, version)`` in ``sg_schema``; a store written by a newer
    shellgate (a higher version) is refused rather than misread.
    """
    with db.transaction() as tx:
        tx.lock("shellgate-schema")
        if not has_table(tx, "sg_schema"):  # a role without CREATE may still use the tables
            tx.execute("CREATE TABLE IF NOT EXISTS sg_schema "
                       "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        row = tx.one("SELECT version FROM sg_schema WHERE component = ?", (component,))
        if row is not None and row[0] == version:
            return
        if row is not None and row[0] > version:
            raise StoreError(
                f"{db.display}: its {component} tables are version {row[0]}, newer than this "
                f"shellgate knows ({version}); upgrade shellgate"
            )
        tx.script(ddl[db.dialect])
        if row is None:
            tx.execute(
                "INSERT INTO sg_schema (component, version) VALUES (?, ?)", (component, version)
            )
        else:
            tx.execute("UPDATE sg_schema SET version = ? WHERE component = ?", (version, component))
