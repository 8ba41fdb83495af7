"""Fixtures for the bwrap executor's tests: a workspace, a fake $HOME, an outside dir.

"Outside" lives under /var/tmp, not /tmp: confined modes hide the host's /tmp behind
a private tmpfs, so a target under /tmp would prove nothing about read-only binds.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from shellgate.config import load_config
from shellgate.executors import make_executor
from shellgate.executors.base import ExecRequest, Executor
from shellgate.models import RunResult

SECRET = "SECRET-KEY-MATERIAL-0123456789"


@dataclass
class Box:
    """One bwrap executor over ``ws`` with a fake ``home``; ``run`` is the only verb."""

    ws: Path
    home: Path
    outside: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    executors: list[Executor] = field(default_factory=list)

    async def executor(self, **sections: dict[str, Any]) -> Executor:
        merged: dict[str, dict[str, Any]] = {
            "executor": {"workspace": str(self.ws), "grace_ms": 300},
            "audit": {"path": None},
            "policy": {"paths": []},
        }
        for name, values in sections.items():
            merged.setdefault(name, {}).update(values)
        ex = make_executor(load_config(None, **merged), "bwrap")
        await ex.open()
        self.executors.append(ex)
        return ex

    async def close(self) -> None:
        """Close every executor (placeholders live as long as their executor)."""
        for ex in self.executors:
            await ex.aclose()

    async def run(self, command: str, **request: Any) -> RunResult:
        if not self.executors:
            await self.executor()
        return await self.executors[0].run(ExecRequest(command=command, **request))


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sg-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def box(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Box]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    result = Box(ws=ws, home=home, outside=outside)
    yield result
    for ex in result.executors:
        await ex.aclose()
