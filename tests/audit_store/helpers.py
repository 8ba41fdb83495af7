"""Shared by the audit-store tests: the CLI as a process, tampering past the triggers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shellgate.store.db import Database

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    """``shellgate ARGS`` as a real process, with this checkout's sources."""
    full = {k: v for k, v in os.environ.items() if k != "SHELLGATE_CONFIG"}
    full.update({"PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *args],
        capture_output=True, text=True, env=full, cwd=cwd, timeout=120, check=False,
    )


def tamper(url: str, sql: str, params: tuple[object, ...] = ()) -> None:
    """Run ``sql`` (an UPDATE) on sg_audit past the append-only triggers, then restore them.

    PostgreSQL: as the superuser, ``ALTER TABLE … DISABLE TRIGGER`` and enable it again.
    SQLite: drop the trigger (it has no DISABLE) and create it again.
    """
    from shellgate.store._audit_schema import DDL

    with Database(url) as db, db.transaction() as tx:
        if db.dialect == "postgresql":
            tx.execute("ALTER TABLE sg_audit DISABLE TRIGGER sg_audit_no_change")
            tx.execute(sql, params)
            tx.execute("ALTER TABLE sg_audit ENABLE TRIGGER sg_audit_no_change")
        else:
            tx.execute("DROP TRIGGER sg_audit_no_update")
            tx.execute(sql, params)
            (create,) = [s for s in DDL["sqlite"] if "sg_audit_no_update" in s]
            tx.execute(create)
