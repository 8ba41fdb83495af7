"""A sandboxed call ends with its PID namespace: no /proc scan when the init exits.

Every process of a bwrap call but the leader lives in the sandbox's PID
namespace, whose init SIGKILLs all of it when it exits. So once the leader is
reaped and that init is exiting, the call returns without reading the
environment of the gate's children; the init is reaped off the call's path, and
nothing of the call is left.
"""

from __future__ import annotations

import secrets

import pytest

from shellgate.executors import _process
from tests.conftest import pids_with_arg, wait_until
from tests.sandbox.conftest import Box


async def test_an_ended_sandbox_is_not_looked_for_in_proc(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[int] = []
    track = _process.Proc.track

    async def counted(self: _process.Proc) -> None:
        scans.append(self.pid)
        await track(self)

    monkeypatch.setattr(_process.Proc, "track", counted)
    rounds = 8
    for _ in range(rounds):
        result = await box.run("echo out; echo err >&2; exit 3")
        assert (result.stdout.text, result.stderr.text, result.exit_code) == ("out\n", "err\n", 3)
    # The init is normally exiting by the time the leader is reaped; a scan is
    # only the fallback for a call that catches it a moment before (load).
    assert len(scans) < rounds, f"every one of {rounds} calls scanned /proc"


async def test_what_a_sandboxed_call_left_running_dies_with_its_namespace(box: Box) -> None:
    mark = f"sg-left-{secrets.token_hex(4)}"
    result = await box.run(f"bash -c ': {mark}; sleep 300' & echo started")
    assert result.exit_code == 0
    assert result.stdout.text == "started\n"
    # Killed by the namespace's end (SIGKILL, no grace to wait for).
    assert wait_until(lambda: not pids_with_arg(mark), timeout_s=5), pids_with_arg(mark)
