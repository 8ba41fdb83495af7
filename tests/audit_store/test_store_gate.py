"""A real gate with ``[audit] store``: its records go to the table, and a store that goes
away refuses the call (fail closed), as an unwritable file does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import AllowApprover
from shellgate.errors import AuditError
from shellgate.gate import Gate
from shellgate.store.audit import StoreAuditLog, open_reader, read_records, verify_store
from tests.audit_store.helpers import ROOT, cli
from tests.conftest import make_config, reap_orphans, wait_until, zombie_children
from tests.pgcluster import Cluster, _bin


async def test_a_gate_writes_its_records_to_the_store(
    store_url: str, open_gate: Callable[..., Any], tmp_path: Path
) -> None:
    gate = await open_gate(audit={"path": "", "store": store_url, "log": "ci-runner"})
    assert isinstance(gate.audit, StoreAuditLog)
    result = await gate.call("bash", {"command": "echo hello", "description": "greet"})
    assert (result.is_error, result.text.strip()) == (False, "hello")
    denied = await gate.call("bash", {"command": "echo \udcff", "description": "d"})
    assert denied.outcome == "denied"
    assert not (tmp_path / "audit.jsonl").exists()  # nothing went to a file
    with open_reader(store_url) as db:
        records = read_records(db, "ci-runner")
        assert verify_store(db, "ci-runner").ok
    kinds = [(r["type"], r.get("command")) for r in records]
    assert kinds[:3] == [("decision", "echo hello"), ("approval", None), ("result", None)]
    assert len({r["call_id"] for r in records[:3]}) == 1
    assert records[3]["type"] == "decision"
    assert records[3]["decision"] == "deny"
    done = cli("audit", "verify", "--store", store_url, "--log", "ci-runner")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(f"(log 'ci-runner'): ok, {len(records)} records, chain intact "
                                f"(head {records[-1]['hash'][:16]})\n")


async def test_a_store_that_goes_away_refuses_the_call(tmp_path: Path) -> None:
    """PostgreSQL stopped mid-run: the next call is refused and its command never runs."""
    marker = tmp_path / "ws" / "ran"
    before = zombie_children()
    try:
        with Cluster() as cluster:
            url = cluster.create_database()
            config = make_config(tmp_path, audit={"path": "", "store": url})
            async with Gate(config, approver=AllowApprover()) as gate:
                ok = await gate.call("bash", {"command": "echo up", "description": "d"})
                assert ok.is_error is False
                stop = [*cluster._prefix, _bin("pg_ctl"), "-D", str(cluster.data), "-m", "fast",
                        "-w", "stop"]
                subprocess.run(stop, check=True, capture_output=True, timeout=60)
                cluster.port = 0  # stopped: Cluster.stop only removes its files
                refused = await gate.call("bash", {"command": f"touch {marker}",
                                                   "description": "d"})
                assert (refused.is_error, refused.outcome) == (True, "error")
                assert "record not written" in refused.text
                assert not marker.exists()
                with pytest.raises(AuditError, match="audit log 'default': record not written"):
                    gate.audit.append({"type": "probe"})
    finally:  # the postmaster was this (subreaper) process's orphan: reap it
        def reaped() -> bool:
            reap_orphans(before)
            return not set(zombie_children()) - set(before)

        wait_until(reaped, timeout_s=10)


def test_a_gate_does_not_start_on_an_unreachable_store(tmp_path: Path, pg_cluster: Any) -> None:
    for url in (pg_cluster.url("no_such_database"), "postgresql://sg:secret@127.0.0.1:1/sg"):
        config = make_config(tmp_path, audit={"path": "", "store": url})
        with pytest.raises(AuditError, match="cannot connect") as caught:
            Gate(config)
        assert "secret" not in str(caught.value)


def test_withdrawn_insert_permission_refuses_the_append(pg_url: str) -> None:
    """The role the gate logs in as loses INSERT: the append raises, nothing is written."""
    from shellgate.store.db import Database

    with StoreAuditLog(pg_url) as owner:
        owner.append({"type": "decision"})
    with Database(pg_url) as db, db.transaction() as tx:
        tx.execute("CREATE ROLE sg_writer LOGIN")
        tx.execute("GRANT SELECT, INSERT ON sg_audit, sg_schema TO sg_writer")
    writer_url = pg_url.replace("postgresql://postgres@", "postgresql://sg_writer@")
    with StoreAuditLog(writer_url) as audit:
        audit.append({"type": "decision"})
        with Database(pg_url) as db, db.transaction() as tx:
            tx.execute("REVOKE INSERT ON sg_audit FROM sg_writer")
        with pytest.raises(AuditError, match="permission denied for table sg_audit"):
            audit.append({"type": "decision"})
        with Database(pg_url) as db, db.transaction() as tx:  # the log's lock was let go
            assert tx.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == [(0,)]
    with Database(pg_url) as db, db.transaction() as tx:
        tx.execute("DROP OWNED BY sg_writer")
        tx.execute("DROP ROLE sg_writer")
    with StoreAuditLog(pg_url) as owner:  # and the chain goes on
        owner.append({"type": "decision"})
    with open_reader(pg_url) as db:
        assert verify_store(db).records == 3


def test_the_hook_path_loads_no_store_code_without_a_store(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from shellgate.audit import open_audit\n"
        "from shellgate.config import AuditConfig\n"
        f"open_audit(AuditConfig(path=Path({str(tmp_path / 'a.jsonl')!r}))).close()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('psycopg', 'sqlite3',"
        " 'shellgate.store'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src")}, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
