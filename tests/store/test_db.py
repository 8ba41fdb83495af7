"""The store's one database seam: URLs, transactions, notifications, failures."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from shellgate.errors import StoreError
from shellgate.store.db import Database, Dialect, ensure_schema, parse_url

DDL: dict[Dialect, list[str]] = {
    "sqlite": ["CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)"],
    "postgresql": ["CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)"],
}


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("store.db", "no scheme"),
        ("mysql://x/y", "unknown scheme 'mysql'"),
        ("sqlite://host/x.db", "no host part"),
        ("sqlite:/x.db", "sqlite:///absolute"),
        ("sqlite:", "no file"),
        ("postgresql:db", "is postgresql://"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        parse_url(url)


def test_sqlite_paths_absolute_and_relative(tmp_path: Path) -> None:
    assert parse_url("sqlite:///var/lib/sg.db").path == Path("/var/lib/sg.db")
    assert parse_url("sqlite:sg.db", base=tmp_path).path == tmp_path / "sg.db"


def test_password_never_shown() -> None:
    url = parse_url("postgresql://alice:s3cret@db.example:5433/sg")
    assert "s3cret" not in url.display
    assert url.display == "postgresql://alice:***@db.example:5433/sg"
    with pytest.raises(StoreError) as caught:
        parse_url("postgres:alice:s3cret@db/sg")
    assert "s3cret" not in str(caught.value)


def test_transaction_commits_or_rolls_back(store_url: str) -> None:
    with Database(store_url) as db:
        ensure_schema(db, "t", 1, DDL)
        ensure_schema(db, "t", 1, DDL)  # idempotent
        with db.transaction() as tx:
            tx.execute("INSERT INTO t (k, v) VALUES (?, ?)", ("a", "50% off?"))
        def fail_half_way() -> None:
            with db.transaction() as tx:
                tx.execute("INSERT INTO t (k, v) VALUES (?, ?)", ("b", "2"))
                raise RuntimeError("boom")

        with pytest.raises(RuntimeError):
            fail_half_way()
        with db.transaction() as tx:
            assert tx.execute("SELECT k, v FROM t ORDER BY k") == [("a", "50% off?")]


def test_newer_schema_is_refused(store_url: str) -> None:
    with Database(store_url) as db:
        ensure_schema(db, "t", 2, DDL)
        with pytest.raises(StoreError, match="newer than this shellgate knows"):
            ensure_schema(db, "t", 1, DDL)


def test_sqlite_file_is_owner_only(tmp_path: Path) -> None:
    with Database(f"sqlite://{tmp_path}/s.db") as db, db.transaction() as tx:
        tx.execute("SELECT 1")
    assert (tmp_path / "s.db").stat().st_mode & 0o077 == 0


def test_notify_reaches_a_listener_only_at_commit(pg_url: str) -> None:
    with Database(pg_url) as db:
        listener = db.listen("sg_test")
        try:
            heard: list[str] = []
            committed = threading.Event()

            def writer() -> None:
                with db.transaction() as tx:
                    tx.notify("sg_test", "v2")
                    assert listener.wait(0.2) == []  # not before the commit
                committed.set()

            thread = threading.Thread(target=writer)
            thread.start()
            thread.join()
            assert committed.is_set()
            heard = listener.wait(5)
            assert heard == ["v2"]
        finally:
            listener.close()


def test_unreachable_postgres_is_a_store_error(pg_cluster: object) -> None:
    db = Database("postgresql://u:pw@127.0.0.1:1/x")
    with pytest.raises(StoreError, match=r"cannot connect") as caught, db.transaction():
        pass
    assert "pw@" not in str(caught.value)


def test_many_openers_of_a_new_sqlite_file_all_get_in(tmp_path: Path) -> None:
    """Switching a new file to WAL does not wait for other openers: they retry."""
    errors: list[BaseException] = []

    def opener(url: str) -> None:
        try:
            with Database(url) as db, db.transaction() as tx:
                tx.execute("SELECT 1")
        except BaseException as exc:  # reported below
            errors.append(exc)

    for round_ in range(20):
        url = f"sqlite://{tmp_path}/r{round_}.db"
        threads = [threading.Thread(target=opener, args=(url,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_batch_sets_returns_every_statements_rows(pg_url: str) -> None:
    with Database(pg_url) as db:
        sets = db.batch_sets("BEGIN; SELECT ?::int, ?::text; COMMIT; SELECT 3", (1, "a%b"))
        assert sets == [[], [(1, "a%b")], [], [(3,)]]
        assert db.batch("SELECT 1; SELECT 2") == [(2,)]  # batch: the last statement's
        with pytest.raises(StoreError, match="division by zero"):
            db.batch_sets("BEGIN; SELECT 1; SELECT 1/0; COMMIT")
        assert db.batch_sets("SELECT 5") == [[(5,)]]  # the failed block was rolled back
