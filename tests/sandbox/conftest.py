"""Fixtures for the bwrap executor's tests: a workspace, a fake $HOME, an outside dir.

"Outside" lives under /var/tmp, not /tmp: confined modes hide the host's /tmp behind
a private tmpfs, so a target under /tmp would prove nothing about read-only binds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
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
    """One bwrap executor over ``ws`` with a fake ``home``; ``run`` is the only verb.

    ``via`` says whose bwrap executor it is: a bwrap deployment's (``deployment``),
    or the one a *local* deployment's gate runs the calls its policy sandboxes on
    (``decision``: ``Gate.confined_executor``, network off whatever the config says).
    The escape suites run over both.
    """

    ws: Path
    home: Path
    outside: Path
    via: str = "deployment"
    overrides: dict[str, Any] = field(default_factory=dict)
    executors: list[Executor] = field(default_factory=list)
    gates: list[Any] = field(default_factory=list)

    async def executor(self, **sections: dict[str, Any]) -> Executor:
        merged: dict[str, dict[str, Any]] = {
            "executor": {"workspace": str(self.ws), "grace_ms": 300},
            "audit": {"path": None},
            "policy": {"paths": []},
        }
        for name, values in sections.items():
            merged.setdefault(name, {}).update(values)
        if self.via == "decision":
            if merged.get("sandbox", {}).get("network"):
                pytest.skip("a sandbox decision runs with the network off whatever the config says")
            from shellgate.gate import Gate

            merged["executor"]["kind"] = "local"
            merged["policy"]["default"] = "sandbox"
            gate = Gate(load_config(None, **merged))
            self.gates.append(gate)
            ex = await gate.confined_executor()
            assert ex.kind == "bwrap"
            assert ex.unavailable_reason is None, ex.unavailable_reason
            self.executors.append(ex)
            return ex
        ex = make_executor(load_config(None, **merged), "bwrap")
        await ex.open()
        self.executors.append(ex)
        return ex

    async def close(self) -> None:
        """Close every executor (placeholders live as long as their executor)."""
        for gate in self.gates:
            await gate.aclose()
        for ex in self.executors:
            await ex.aclose()

    async def run(self, command: str, **request: Any) -> RunResult:
        if not self.executors:
            await self.executor()
        return await self.executors[0].run(ExecRequest(command=command, **request))


@pytest.fixture
def via() -> str:
    """Whose bwrap executor a box is (the escape suites override this with both)."""
    return "deployment"


@pytest.fixture
async def box(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, via: str
) -> AsyncIterator[Box]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    result = Box(ws=ws, home=home, outside=outside, via=via)
    yield result
    await result.close()
