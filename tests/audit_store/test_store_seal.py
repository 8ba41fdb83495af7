"""PostgreSQL seals records on the server (``sg_audit_seal``): the same bytes, durably."""

from __future__ import annotations

import itertools
import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellgate.audit import GENESIS, _fit
from shellgate.audit._chain import MAX_RECORD_BYTES
from shellgate.audit.log import checked_body
from shellgate.store import _audit_seal
from shellgate.store.audit import StoreAuditLog, read_records, verify_store
from shellgate.store.db import Database
from tests.conftest import wait_until

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()  # includes lone surrogates: the escaped path
    | st.floats(allow_nan=False, allow_infinity=False)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# Keys on every side of the chain keys, and near them: "has", "hasi", "pre", "prevx",
# "se", "seqa", "tim", "timez", "~", "", non-ASCII.
_near = st.sampled_from(["", "a", "has", "hasi", "hasz", "pre", "prevx", "se", "seqa", "sequ",
                         "tim", "timez", "u", "~", "é", "日本", "type", "call_id", "subject"])
_keys = (_near | st.text(max_size=8)).filter(
    lambda k: k not in {"seq", "time", "prev", "hash", "escaped", "cut"}
    and k.lower() not in {"env", "environment"}
    and not any(0xD800 <= ord(c) <= 0xDFFF for c in k))


def rows(url: str, log: str) -> list[tuple[int, str, str, str]]:
    with Database(url) as db, db.transaction() as tx:
        found = tx.execute("SELECT seq, prev, time, line FROM sg_audit WHERE log = ? ORDER BY seq",
                           (log,))
    return [(int(s), str(p), str(t), str(line)) for s, p, t, line in found]


@given(records=st.lists(st.dictionaries(_keys, _json, max_size=10), min_size=1, max_size=3))
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_server_sealed_lines_equal_the_client_seal(
    pg_url: str, records: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each row's line is exactly ``_fit.seal``'s line for its seq, prev and time."""
    log = uuid.uuid4().hex
    with StoreAuditLog(pg_url, log) as audit:
        assert audit._server_seal  # the path under test
        hashes = [audit.append(record) for record in records]
    stored = rows(pg_url, log)
    assert [seq for seq, *_ in stored] == list(range(1, len(records) + 1))
    for record, digest, (seq, prev, when, line) in zip(records, hashes, stored, strict=True):
        monkeypatch.setattr(_fit, "utc_now", lambda when=when: when)
        expected, expected_hash = _fit.seal(checked_body(record), seq, prev)
        assert line.encode("utf-8") + b"\n" == expected
        assert digest == expected_hash
    with Database(pg_url) as db:
        assert verify_store(db, log).ok


def test_server_time_is_the_file_logs_format_and_ordered(pg_url: str) -> None:
    with StoreAuditLog(pg_url, "t") as audit:
        for i in range(20):
            audit.append({"type": "x", "i": i})
    times = [when for _, _, when, _ in rows(pg_url, "t")]
    assert all(len(t) == 27 and t.endswith("Z") and t[10] == "T" for t in times)
    assert times == sorted(times)  # stamped under the lock: seq order is time order


def test_a_record_that_may_need_cutting_is_sealed_on_the_client(pg_url: str) -> None:
    fits = {"type": "result", "out": "x" * (MAX_RECORD_BYTES - 400)}
    near = {"type": "result", "out": "x" * (MAX_RECORD_BYTES - 230)}
    huge = {"type": "result", "out": "x" * (MAX_RECORD_BYTES + 10)}
    assert _audit_seal.fragments(dict(fits)) is not None
    assert _audit_seal.fragments(dict(near)) is None  # would fit with seq 1, not with seq 10^18
    assert _audit_seal.fragments(dict(huge)) is None
    with StoreAuditLog(pg_url, "big") as audit:
        for record in (fits, near, huge, {"type": "small"}):
            audit.append(record)
    with Database(pg_url) as db:
        assert verify_store(db, "big").ok
        got = read_records(db, "big")
    assert [("cut" in r, r["seq"]) for r in got] == [(False, 1), (False, 2), (True, 3), (False, 4)]


def test_server_and_client_sealing_writers_share_one_chain(pg_url: str) -> None:
    """An older writer (client seal, session lock) and a new one use the same lock key."""
    with StoreAuditLog(pg_url, "mixed") as new, StoreAuditLog(pg_url, "mixed") as old:
        old._server_seal = False
        for i, writer in zip(range(10), itertools.cycle((new, old)), strict=False):
            writer.append({"type": "x", "i": i})
    with Database(pg_url) as db:
        result = verify_store(db, "mixed")
    assert (result.ok, result.records) == (True, 10)


def _wal_writes(url: str) -> int:
    with Database(url) as db:
        return int(db.statement("SELECT wal_write FROM pg_stat_wal")[0][0])


@pytest.mark.parametrize("server_seal", [True, False])
def test_fsync_append_waits_for_the_wal_flush(pg_url: str, server_seal: bool) -> None:
    """Each durable append writes the WAL out itself (a transaction that only took an xid
    would not: an asynchronous commit leaves that to the WAL writer, in batches). The test
    cluster runs with fsync off, so writes are counted, not syncs."""
    n = 50
    with StoreAuditLog(pg_url, "d", fsync=True) as audit:
        audit._server_seal = server_seal
        audit.append({"type": "warm-up"})
        audit._db.statement("SELECT pg_stat_force_next_flush()")
        audit._db.statement("SELECT 1")  # its stats reach pg_stat_wal at this statement's end
        before = _wal_writes(pg_url)
        for i in range(n):
            audit.append({"type": "x", "i": i})
        audit._db.statement("SELECT pg_stat_force_next_flush()")
        audit._db.statement("SELECT 1")
        assert wait_until(lambda: _wal_writes(pg_url) - before >= n, timeout_s=10)


def test_fsync_off_does_not_wait(pg_url: str) -> None:
    with StoreAuditLog(pg_url, "n", fsync=False) as audit:
        assert audit._server_seal
        for i in range(5):
            audit.append({"type": "x", "i": i})
        assert json.loads(rows(pg_url, "n")[-1][3])["seq"] == 5
        assert rows(pg_url, "n")[0][1] == GENESIS


def test_a_restricted_writer_refuses_to_start_without_the_seal_functions(pg_url: str) -> None:
    """After an upgrade, a writer that may not CREATE fails closed until the owner adds them."""
    from shellgate.errors import AuditError
    from shellgate.store import _audit_schema

    role = "w" + uuid.uuid4().hex[:12]
    with Database(pg_url) as db:
        _audit_schema.ensure(db)  # a store an earlier shellgate created: no audit-seal
        db.statement(f"CREATE ROLE {role} LOGIN")
        db.statement(f"GRANT SELECT, INSERT ON sg_audit, sg_schema TO {role}")
    writer_url = pg_url.replace("postgres@", f"{role}@", 1)
    with pytest.raises(AuditError, match="permission denied"):
        StoreAuditLog(writer_url, "r")
    StoreAuditLog(pg_url, "r").close()  # the owner's first writer adds them
    with StoreAuditLog(writer_url, "r") as audit:
        assert audit._server_seal
        audit.append({"type": "x"})
    with Database(pg_url) as db:
        assert verify_store(db, "r").records == 1
