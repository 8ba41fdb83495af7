"""The audit table and its writer, on SQLite and PostgreSQL (the ``store_url`` fixture)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shellgate.audit import GENESIS, AuditLog, canonical, open_audit, record_hash, verify
from shellgate.config import AuditConfig
from shellgate.errors import AuditError
from shellgate.store.audit import (
    StoreAuditLog,
    has_log,
    log_names,
    open_reader,
    read_records,
    tail_records,
    verify_store,
)
from shellgate.store.db import Database
from tests.audit_store.helpers import ROOT, tamper
from tests.conftest import wait_until

RECORD = {"type": "decision", "call_id": "c1", "subject": "agent", "command": "ls -la"}


def fill(url: str, n: int, log: str = "default") -> list[str]:
    with StoreAuditLog(url, log) as audit:
        return [audit.append({**RECORD, "call_id": f"c{i}", "n": i}) for i in range(n)]


def test_rows_hold_the_file_logs_exact_line(store_url: str, tmp_path: Path) -> None:
    hashes = fill(store_url, 3)
    with StoreAuditLog(store_url) as audit:
        assert audit.last_hash == hashes[-1]  # a new writer continues the chain
        audit.append({"type": "result", "call_id": "c2", "text": "caf\udce9 " + "x" * 2_000_000})
    with open_reader(store_url) as db:
        records = read_records(db)
        assert [r["seq"] for r in records] == [1, 2, 3, 4]
        assert records[0]["prev"] == GENESIS
        for record in records:  # one record format: what the file log writes and verifies
            assert record_hash(record) == record["hash"]
        assert [r["hash"] for r in records[:3]] == hashes
        assert records[3]["escaped"] == ["/text"]
        assert "/text" in records[3]["cut"]
        with db.transaction() as tx:
            lines = [row[0] for row in tx.execute("SELECT line FROM sg_audit ORDER BY seq")]
        assert lines == [canonical(r).decode() for r in records]
        result = verify_store(db)
        assert (result.ok, result.records, result.last_hash) == (True, 4, records[3]["hash"])
    # The same lines as a file verify with the file verifier.
    path = tmp_path / "as-file.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert verify(path).from_genesis


def test_readers_page_filter_and_tail(store_url: str) -> None:
    fill(store_url, 10)
    fill(store_url, 2, log="other")
    with open_reader(store_url) as db:
        assert [r["seq"] for r in read_records(db, after_seq=3, limit=4)] == [4, 5, 6, 7]
        assert [r["n"] for r in read_records(db, call_id="c7")] == [7]
        assert len(read_records(db, type="decision", subject="agent")) == 10
        assert read_records(db, subject="nobody") == []
        assert [r["seq"] for r in tail_records(db, n=3)] == [8, 9, 10]
        assert [r["seq"] for r in read_records(db, "other")] == [1, 2]  # its own chain
        assert verify_store(db, "other").records == 2
        assert log_names(db) == ["default", "other"]
        assert has_log(db, "other")
        assert not has_log(db, "nope")
        assert verify_store(db, "nope").records == 0  # nothing yet: the CLI names it unknown
        with pytest.raises(ValueError, match="limit"):
            read_records(db, limit=-1)


@pytest.mark.parametrize(
    "sql",
    ["UPDATE sg_audit SET line = line", "DELETE FROM sg_audit", "DELETE FROM sg_audit WHERE seq = 2",
     "TRUNCATE sg_audit"],
)
def test_the_database_refuses_changes(store_url: str, sql: str) -> None:
    fill(store_url, 3)
    with Database(store_url) as db:
        if sql.startswith("TRUNCATE") and db.dialect == "sqlite":
            sql = "DELETE FROM sg_audit WHERE 1"  # SQLite's truncate is a DELETE without WHERE
        with pytest.raises(Exception, match=r"sg_audit is append-only: \w+ refused"), \
                db.transaction() as tx:
            tx.execute(sql)
    with open_reader(store_url) as db:
        assert verify_store(db).records == 3


@pytest.mark.parametrize(
    ("seq", "prev", "why"),
    [(5, None, "seq 5 after 3"), (3, None, "seq 3 after 3"), (4, GENESIS, "seq 4 after 3")],
    ids=["gap", "duplicate-seq", "wrong-prev"],
)
def test_the_database_refuses_a_row_off_the_chain(
    store_url: str, seq: int, prev: str | None, why: str
) -> None:
    hashes = fill(store_url, 3)
    with Database(store_url) as db:
        message = "must continue its log's chain" + (f": log default, {why}"
                                                     if db.dialect == "postgresql" else "")
        with pytest.raises(Exception, match=message), db.transaction() as tx:
            tx.execute(
                "INSERT INTO sg_audit (log, seq, prev, hash, time, line) VALUES (?,?,?,?,?,?)",
                ("default", seq, prev or hashes[-1], "a" * 64, "t", "{}"),
            )


def test_a_tampered_line_is_found_naming_its_seq(store_url: str) -> None:
    fill(store_url, 5)
    tamper(store_url, "UPDATE sg_audit SET line = replace(line, 'ls -la', 'rm -rf') WHERE seq = 3")
    with open_reader(store_url) as db:
        result = verify_store(db)
    assert (result.ok, result.first_bad, result.records) == (False, 3, 2)
    assert result.reason is not None
    assert result.reason.startswith("hash mismatch")


def test_a_re_hashed_record_breaks_the_next_link(store_url: str) -> None:
    fill(store_url, 5)
    with open_reader(store_url) as db:
        record = read_records(db, after_seq=1, limit=1)[0]
    record["command"] = "rm -rf /"
    record["hash"] = record_hash(record)
    tamper(store_url, "UPDATE sg_audit SET line = ?, hash = ? WHERE seq = 2",
           (canonical(record).decode(), record["hash"]))
    with open_reader(store_url) as db:
        result = verify_store(db)
    assert (result.ok, result.first_bad) == (False, 3)
    assert result.reason is not None
    assert "prev does not match" in result.reason


def test_a_column_that_disagrees_with_its_line_is_found(store_url: str) -> None:
    fill(store_url, 4)
    tamper(store_url, "UPDATE sg_audit SET subject = 'someone-else' WHERE seq = 4")
    with open_reader(store_url) as db:
        result = verify_store(db)
    assert (result.ok, result.first_bad) == (False, 4)
    assert result.reason == ("the row's subject column ('someone-else') is not its record's "
                             "('agent'): the row was edited")


def test_a_damaged_head_is_refused_at_open(store_url: str) -> None:
    fill(store_url, 2)
    tamper(store_url, "UPDATE sg_audit SET line = replace(line, 'agent', 'AGENT') WHERE seq = 2")
    with pytest.raises(AuditError, match=r"the last record \(seq 2\) is damaged"):
        StoreAuditLog(store_url)


def test_the_writer_refuses_what_the_file_log_refuses(store_url: str) -> None:
    with StoreAuditLog(store_url) as audit:
        for bad in ({"env": {"A": "1"}}, {"seq": 3}, {"x": b"bytes"}):
            with pytest.raises(AuditError):
                audit.append(bad)
        audit.close()
        with pytest.raises(AuditError, match="closed"):
            audit.append(RECORD)
    with open_reader(store_url) as db:
        assert read_records(db) == []


def test_reopen_reconnects_and_rereads_the_head(store_url: str) -> None:
    with StoreAuditLog(store_url) as first, StoreAuditLog(store_url) as second:
        first.append(RECORD)
        second.append(RECORD)
        first.reopen()
        assert first.last_hash == second.last_hash
        first.append(RECORD)
    with open_reader(store_url) as db:
        assert verify_store(db).records == 3


def test_open_audit_picks_the_store_or_the_file(store_url: str, tmp_path: Path) -> None:
    store = open_audit(AuditConfig(store=store_url, log="ci", fsync=True))
    file = open_audit(AuditConfig(path=tmp_path / "a.jsonl"))
    try:
        assert isinstance(store, StoreAuditLog)
        assert store.log == "ci"
        assert store.path is None
        assert isinstance(file, AuditLog)
        assert file.path == tmp_path / "a.jsonl"
        assert store.enabled
        assert file.enabled
    finally:
        store.close()
        file.close()


def test_bad_names_and_urls_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="1 to 200 characters"):
        StoreAuditLog(f"sqlite://{tmp_path}/a.db", "")
    with pytest.raises(AuditError, match="unknown scheme 'mysql'"):
        StoreAuditLog("mysql://db/x")
    with pytest.raises(AuditError, match="no such SQLite file"):
        open_reader(f"sqlite://{tmp_path}/typo.db")
    assert not (tmp_path / "typo.db").exists()


WRITER = """
import os, sys, time
from shellgate.store.audit_log import StoreAuditLog
url, me, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with StoreAuditLog(url, "fleet", fsync=True) as log:
    open(go + "." + me, "w").close()  # opened: ready
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:  # start together
        time.sleep(0.005)
    for i in range(n):
        log.append({"type": "decision", "call_id": f"{me}-{i}", "subject": me})
"""


def test_four_writer_processes_make_one_valid_chain(store_url: str, tmp_path: Path) -> None:
    n = 150
    go = tmp_path / "go"
    env = {"PYTHONPATH": f"{ROOT / 'src'}"}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, store_url, f"w{k}", str(n), str(go)],
                         env=env, stderr=subprocess.PIPE, text=True)
        for k in range(4)
    ]
    ready = [tmp_path / f"go.w{k}" for k in range(4)]
    assert wait_until(lambda: all(p.exists() for p in ready), timeout_s=60)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    with open_reader(store_url) as db:
        result = verify_store(db, "fleet")
        records = read_records(db, "fleet", limit=10_000)
    assert (result.ok, result.records) == (True, 4 * n)
    assert sorted(r["call_id"] for r in records) == sorted(
        f"w{k}-{i}" for k in range(4) for i in range(n))
    by_writer = {f"w{k}": [r["call_id"] for r in records if r["subject"] == f"w{k}"]
                 for k in range(4)}
    assert all(ids == [f"{w}-{i}" for i in range(n)] for w, ids in by_writer.items())
    # How finely the writers interleave is the scheduler's business (under load one
    # may write all its records in a row); that they all wrote one chain is the test.
