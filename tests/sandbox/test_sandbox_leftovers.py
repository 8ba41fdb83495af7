"""What a gate leaves behind: nothing at close, and a SIGKILLed gate's leftovers are
removed by the next gate — never what a live gate still owns.

Gates run as real processes (the executor in a child Python), killed with SIGKILL
in the middle of a background call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from shellgate.executors import _bwrap_state as state
from shellgate.executors.base import ExecRequest
from tests.conftest import wait_until
from tests.sandbox.conftest import Box

GATE = """
import asyncio, json, sys
from shellgate.config import load_config
from shellgate.executors import make_executor
from shellgate.executors.base import ExecRequest

async def main(ws):
    cfg = load_config(None, executor={"workspace": ws}, audit={"path": None},
                      policy={"paths": []})
    ex = make_executor(cfg, "bwrap")
    await ex.open()
    task = await ex.start(ExecRequest(command="sleep 300"))
    rec = ex._record
    print(json.dumps({"id": rec.gate_id, "dir": rec.directory, "cgroup": rec.cgroup,
                      "spill": rec.spill, "locks": list(ex._held.paths.values())}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    task.kill()
    await task.done
    await ex.aclose()

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(autouse=True)
def _own_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These gates keep their records and root locks in a temp directory of their own.

    The records directory is shared by every gate on the machine, and each one sweeps
    it when it opens and closes. A sweeper holding a dead gate's lock for a moment makes
    that gate look alive to ours, which then leaves its placeholders on record for a
    later sweep: right for the product, but these tests check what one close removes,
    so no gate of another xdist worker or another checkout's run may sweep beside them.
    """
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))  # the gates in child processes


class Gate:
    """A bwrap gate in a child process, mid-call once started."""

    def __init__(self, ws: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", GATE, str(ws)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the gate did not start"
        self.info: dict[str, Any] = json.loads(line)
        self.ws = ws

    def files(self) -> dict[str, bool]:
        """Whether each thing this gate owns exists."""
        rec = Path(self.info["dir"]) / f"{self.info['id']}"
        found = {
            "record": rec.with_suffix(".json").exists(),
            "lock": rec.with_suffix(".lock").exists(),
            "spill": os.path.isdir(self.info["spill"]),
            "placeholders": (self.ws / ".bashrc").exists() and (self.ws / ".git").is_dir(),
            "root lock": all(os.path.exists(p) for p in self.info["locks"]),
        }
        if self.info["cgroup"] is not None:
            found["cgroup"] = os.path.isdir(self.info["cgroup"])
        return found

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        self._close_pipes()


def _reap_orphans() -> set[int]:
    """Reap this process's zombie children; the children still running (but for
    the gates' own processes and the pytest worker's helpers, which are not bwrap)."""
    running: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            kids = Path(f"/proc/self/task/{tid}/children").read_text().split()
        except OSError:
            continue
        for pid in map(int, kids):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            name, rest = stat.split("(", 1)[1].rsplit(")", 1)
            if rest.split()[0] == "Z":
                os.waitpid(pid, os.WNOHANG)
            elif name in ("bwrap", "sg-exec", "sleep"):
                running.add(pid)
    return running


@pytest.fixture
def gates() -> Any:
    started: list[Gate] = []

    def start(ws: Path) -> Gate:
        gate = Gate(ws)
        started.append(gate)
        return gate

    yield start
    for gate in started:
        if gate.proc.poll() is None:
            gate.kill()
    # A killed gate's sandbox processes (killed by the next gate's sweep) are
    # reparented to this test process, a subreaper: reap them, as the init or
    # subreaper above a real gate would.
    assert wait_until(lambda: not _reap_orphans(), timeout_s=10)


async def test_the_next_gate_removes_what_a_killed_gate_left_and_spares_a_live_one(
    box: Box, tmp_path: Path, gates: Any
) -> None:
    other = tmp_path / "other-ws"
    other.mkdir()
    dead, live = gates(box.ws), gates(other)
    dead.kill()
    left = dead.files()
    assert all(left.values()), left  # what a SIGKILL leaves today
    ex = await box.executor()  # the next gate on the same workspace sweeps at start
    gone = dead.files()
    assert not any(v for k, v in gone.items() if k not in ("root lock", "placeholders")), gone
    # The dead gate's placeholders went first: this gate found the names free and
    # made its own (it would have taken leftovers off record for real files).
    made = ex._record.placeholders  # type: ignore[attr-defined]
    assert {str(box.ws / ".bashrc"), str(box.ws / ".git")} <= set(made)
    assert all(live.files().values()), live.files()  # the live gate's own are untouched
    await ex.run(ExecRequest(command="true"))
    await box.close()
    assert sorted(os.listdir(box.ws)) == []
    assert not any(dead.files().values()), dead.files()  # its root lock file went at close
    live.close()
    assert not any(live.files().values()), live.files()  # a clean close leaves nothing
    assert sorted(os.listdir(other)) == []


async def test_a_dead_gates_placeholders_stay_while_a_live_gate_holds_the_workspace(
    box: Box, gates: Any
) -> None:
    """A live gate on the same workspace may mount them: removing a mount point
    another namespace uses would detach that mount. The last gate out removes them."""
    dead = gates(box.ws)
    holder = gates(box.ws)  # live, mid-call, on the same workspace
    dead.kill()
    ex = await box.executor()
    assert dead.files()["placeholders"]
    assert not dead.files()["spill"]  # what no one else can use is gone at once
    result = await ex.run(ExecRequest(command="echo evil > .bashrc; mkdir .git/hooks"))
    assert result.exit_code != 0  # still guarded, by both gates
    await box.close()
    assert dead.files()["placeholders"]
    holder.close()  # the last one out
    assert sorted(os.listdir(box.ws)) == []
    assert not any(dead.files().values()), dead.files()


async def test_a_killed_gates_sandbox_processes_do_not_keep_its_cgroup(
    box: Box, gates: Any
) -> None:
    dead = gates(box.ws)
    if dead.info["cgroup"] is None:
        pytest.skip("no pids cgroup here (not root, or no writable pids hierarchy)")
    dead.kill()
    await box.executor()
    assert wait_until(lambda: not os.path.isdir(dead.info["cgroup"]), timeout_s=5)


async def test_threads_started_by_the_spawning_thread_do_not_keep_the_cgroup(box: Box) -> None:
    """The loop's thread lives in the gate's pids cgroup (children are born there);
    so does any thread it starts. Closing moves them all out, and the cgroup goes."""
    import threading

    ex = await box.executor()
    procs = ex._cgroup_procs  # type: ignore[attr-defined]
    if procs is None:
        pytest.skip("no pids cgroup here (not root, or no writable pids hierarchy)")
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        await ex.run(ExecRequest(command="true"))
        await box.close()
        assert not os.path.isdir(os.path.dirname(procs))
    finally:
        stop.set()
        worker.join()


def test_a_live_gates_record_is_never_swept(tmp_path: Path) -> None:
    """Its lock is held (taken under a staging name before the record exists)."""
    record = state.GateRecord.create(spill=None)
    try:
        state.sweep()
        assert os.path.exists(os.path.join(record.directory, f"{record.gate_id}.lock"))
        assert os.path.exists(os.path.join(record.directory, f"{record.gate_id}.json"))
    finally:
        record.forget(keep_placeholders=False)


def _foreign_pids_parent() -> Path | None:
    """A fresh pids cgroup that is not this process's own base, if we may make one."""
    from shellgate.executors import _bwrap_cgroup as cgroup

    base = cgroup.find_base()
    if base is None:
        return None
    parent = Path(base) / f"sgtest-foreign-{os.getpid()}"
    try:
        parent.mkdir()
    except OSError:
        return None
    return parent


def test_a_dead_gates_cgroup_in_another_cgroup_is_still_swept() -> None:
    # A gate killed in another cgroup (another session's scope, a service) made its
    # pids cgroup under that base. The sweep compared it with the sweeper's own base,
    # called it "not ours", dropped the record and leaked the cgroup and its processes.
    from shellgate.executors import _bwrap_cgroup as cgroup

    parent = _foreign_pids_parent()
    if parent is None:
        pytest.skip("cannot create a pids cgroup here")
    dead = parent / "shellgate-999999-deadbeef"
    sleeper: subprocess.Popen[bytes] | None = None
    try:
        procs = cgroup.create(str(parent), dead.name, 16)
        sleeper = subprocess.Popen(
            ["sh", "-c", f"echo $$ > {procs} && exec sleep 31.4701"],
        )
        assert wait_until(lambda: (dead / "cgroup.procs").read_text().strip() != "", 5)
        assert cgroup.sweep(str(dead))
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        assert not dead.exists()
        # ...but never anything that is not a shellgate cgroup below a cgroup mount.
        assert cgroup.sweep(str(parent / ".." / "shellgate-x"))
        assert cgroup.sweep("/tmp/shellgate-not-a-cgroup")
        assert parent.exists()
    finally:
        if sleeper is not None and sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        for d in (dead, parent):
            with __import__("contextlib").suppress(OSError):
                d.rmdir()
