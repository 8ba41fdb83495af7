"""Fixtures shared by every test package: configs in tmp dirs, gates, process checks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from shellgate.approval import AllowApprover
from shellgate.config import Config, load_config
from shellgate.gate import Gate

ROOT = Path(__file__).resolve().parent.parent

# CI replays the same examples every run (a landing must not hinge on the draw);
# developers' runs keep exploring, which is how the parser bugs above were found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def make_config(tmp_path: Path, **sections: dict[str, Any]) -> Config:
    """A config rooted in ``tmp_path``: workspace ``tmp_path/ws``, audit in tmp, no policy files."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    base: dict[str, dict[str, Any]] = {
        "executor": {"workspace": str(ws), "grace_ms": 400},
        "audit": {"path": str(tmp_path / "audit.jsonl")},
        # The tests' closing default is ask (the packaged one, sandbox, runs what no
        # rule names under bwrap: tests that mean that say so).
        "policy": {"paths": [], "default": "ask"},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    return load_config(None, **base)


@pytest.fixture
def config_factory(tmp_path: Path) -> Callable[..., Config]:
    return lambda **sections: make_config(tmp_path, **sections)


@pytest.fixture
async def open_gate(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await open_gate(**sections)``: a gate that approves every ask (closed after the test)."""
    gates: list[Gate] = []

    async def factory(approver: Any = None, **sections: dict[str, Any]) -> Gate:
        gate = Gate(make_config(tmp_path, **sections), approver=approver or AllowApprover())
        await gate.open()
        gates.append(gate)
        return gate

    yield factory
    for gate in gates:
        await gate.aclose()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host directory outside the workspace that sandboxed calls must not write: in
    /var/tmp, since a sandbox's /tmp is private and a target there would prove nothing."""
    path = Path(tempfile.mkdtemp(prefix="sg-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def pids_with_arg(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def pids_running(command: str) -> list[int]:
    """Live processes whose whole command line is ``command``: the program itself, not
    a shell or a bwrap whose arguments merely mention it (those exist before it runs)."""
    return [pid for pid in pids_with_arg(command) if _cmdline(pid) == command]


def _cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ").decode()
    except (OSError, UnicodeDecodeError):
        return None


def unique_seconds(whole: int = 31) -> str:
    """A ``sleep`` argument no other process on the machine has, for :func:`pids_with_arg`.

    That scans every process: a fixed marker (``sleep 31.4105``) is also running in the
    other executor's variant on another xdist worker, or in another checkout's run, and
    "it is gone" then fails for nothing. GNU sleep reads any number of decimals.
    """
    return f"{whole}.{secrets.randbelow(10**9):09d}"


def zombie_children() -> dict[int, str]:
    """This process's children that died and were not reaped: pid -> name."""
    found: dict[int, str] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            kids = Path(f"/proc/self/task/{tid}/children").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        for pid in kids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            name, rest = stat.split("(", 1)[1].rsplit(")", 1)
            if rest.split()[0] == "Z":
                found[int(pid)] = name
    return found


def reap_orphans(before: dict[int, str]) -> None:
    """Reap zombies that a test's own orphans left (this process is a subreaper).

    For tests that deliberately orphan processes outside any gate (a killed host,
    a bare ``bash -c``); the gate's own leftovers must never need this.
    """
    for pid in set(zombie_children()) - set(before):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.fixture(autouse=True)
def _no_unreaped_children() -> Iterator[None]:
    """Every test leaves no zombie child behind: the gate reaps all it starts.

    The gate process is a child subreaper, so anything a call orphans becomes its
    child; one it never reaps stays a zombie and counts against the process limit
    of a long-lived server (each bwrap call once leaked one).
    """
    before = zombie_children()
    yield

    def left() -> dict[int, str]:
        return {p: n for p, n in zombie_children().items() if p not in before}

    assert wait_until(lambda: not left(), timeout_s=2), (
        f"unreaped children left: {left()} ({_stat_lines(left())})"
    )


def _stat_lines(pids: dict[int, str]) -> str:
    """/proc stat lines (ppid, pgid, start time...) for a leak report."""
    lines = []
    for pid in pids:
        with contextlib.suppress(OSError):
            lines.append(Path(f"/proc/{pid}/stat").read_text()[:160])
    return "; ".join(lines)


def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``predicate`` until true (a bounded wait on an observable condition)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


async def wait_until_async(predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """:func:`wait_until` for tests on the gate's loop: the loop keeps running meanwhile
    (a blocking wait would stall the gate's own reaping, which runs on it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


def bwrap_works() -> bool:
    return shutil.which("bwrap") is not None


# -- database stores (docs/fleet.md) ---------------------------------------------------


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """One throwaway PostgreSQL cluster for the whole run (tests/pgcluster.py)."""
    from tests.pgcluster import Cluster

    with Cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Any) -> str:
    """A fresh, empty PostgreSQL database for one test."""
    url: str = pg_cluster.create_database()
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test over both stores: a new SQLite file, then a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("pg_cluster").create_database()
    return url
