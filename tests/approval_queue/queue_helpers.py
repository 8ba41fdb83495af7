"""A gate in ``[approval] mode = "queue"`` over a real policy set, and a person answering."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from shellgate.config import Config
from shellgate.store.approvals import ApprovalQueue, QueuedApproval
from shellgate.store.db import Database
from tests.conftest import ROOT, make_config, wait_until

POLICY = """\
p, agent, *, echo *, allow
p, agent, *, sleep *, allow
p, agent, *, touch *, ask, touching files needs a person
p, agent, *, rm *, deny, no deleting
p, agent, *, write:**, allow
"""


def args(command: str, **more: Any) -> dict[str, Any]:
    """A ``bash`` call's arguments."""
    return {"command": command, "description": "a test call", **more}


def policy_set(tmp_path: Path) -> Path:
    pol = tmp_path / "pol"
    pol.mkdir(exist_ok=True)
    (pol / "policy.csv").write_text(POLICY)
    shutil.copy(ROOT / "policies" / "default" / "model.conf", pol / "model.conf")
    return pol


def queue_config(
    tmp_path: Path, store: str, timeout_ms: int = 60_000, **approval: Any
) -> Config:
    return make_config(
        tmp_path,
        policy={"paths": [str(policy_set(tmp_path))], "default": "deny"},
        approval={"mode": "queue", "store": store, "timeout_ms": timeout_ms, **approval},
    )


def write_config(tmp_path: Path, store: str, timeout_ms: int = 60_000) -> Path:
    """The same deployment as a shellgate.toml, for the CLI in other processes."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    path = tmp_path / "shellgate.toml"
    path.write_text(
        f"[executor]\nworkspace = {json.dumps(str(ws))}\n"
        f"[audit]\npath = {json.dumps(str(tmp_path / 'audit.jsonl'))}\n"
        f"[policy]\npaths = [{json.dumps(str(policy_set(tmp_path)))}]\ndefault = \"deny\"\n"
        f"[approval]\nmode = \"queue\"\nstore = {json.dumps(store)}\n"
        f"timeout_ms = {timeout_ms}\n"
    )
    return path


def records(tmp_path: Path, kind: str | None = None) -> list[dict[str, Any]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [r for r in found if kind is None or r["type"] == kind]


def wait_pending(store: str, count: int = 1, timeout_s: float = 20.0) -> list[QueuedApproval]:
    """The pending rows, once there are ``count`` of them (read from a handle of our own)."""
    with Database(store) as db:
        queue = ApprovalQueue(db)
        seen: list[QueuedApproval] = []

        def enough() -> bool:
            seen[:] = queue.pending()
            return len(seen) >= count

        assert wait_until(enough, timeout_s), f"expected {count} pending, saw {seen}"
        return seen


def answer(store: str, approval_id: str, word: Any, person: str, message: str = "") -> QueuedApproval:
    with Database(store) as db:
        return ApprovalQueue(db).answer(approval_id, word, person=person, message=message)
