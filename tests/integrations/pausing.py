"""What every adapter test needs: a gate that pauses on ask, over a real policy set.

Nobody is asked inside a call (``DenyApprover``): an ask must pause the
framework's run and come back with a person's answer, which is the point.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from shellgate.approval import DenyApprover
from shellgate.gate import Gate
from tests.conftest import ROOT, make_config

#: The workspace is writable; so is /tmp, where the Claude Code fakes run Bash.
POLICY = """\
p, agent, *, echo *, allow
p, agent, *, touch *, ask, touching files needs a person
p, agent, *, rm *, deny, no deleting
p, agent, *, mkdir *, allow
p, agent, *, sleep *, allow
p, agent, *, write:**, allow
p, agent, *, write:/tmp/**, allow
"""


def policy_set(tmp_path: Path, text: str = POLICY) -> Path:
    """A policy set in ``tmp_path/pol``: these rules and the default model."""
    pol = tmp_path / "pol"
    pol.mkdir(exist_ok=True)
    (pol / "policy.csv").write_text(text)
    shutil.copy(ROOT / "policies" / "default" / "model.conf", pol / "model.conf")
    return pol


def records(tmp_path: Path, kind: str | None = None) -> list[dict[str, Any]]:
    """The audit log's records (of one ``type`` if given)."""
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [r for r in found if kind is None or r["type"] == kind]


@asynccontextmanager
async def pausing_gate(tmp_path: Path, **sections: dict[str, Any]) -> AsyncIterator[Gate]:
    """An open gate over :func:`policy_set` (closing default deny), closed afterwards."""
    policy = {"paths": [str(policy_set(tmp_path))], "default": "deny"}
    config = make_config(tmp_path, **{**sections, "policy": {**policy, **sections.get("policy", {})}})
    async with Gate(config, approver=DenyApprover()) as gate:
        yield gate
