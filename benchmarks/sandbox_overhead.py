"""Per-call overhead of the bwrap executor (and of the local one beside it).

Interleaved, in one process, so load on a shared machine hits every series alike:

* ``bwrap executor``: ``true`` through ``BwrapExecutor.run`` (workspace-write);
* ``bare bwrap``: ``bwrap --ro-bind / / true`` spawned directly (the issue's baseline);
* ``bare profile``: the executor's own bwrap argv spawned directly, so the
  executor's machinery is separated from the cost of the profile's mounts;
* ``mandated flags``: bare bwrap with only the flags sandbox.md requires of every
  call (namespaces, session, die-with-parent, no userns, caps, /dev, /proc, /tmp)
  running ``true`` — the floor any conforming executor starts from;
* ``local executor`` vs ``bare bash -c true``.

Usage: ``python benchmarks/sandbox_overhead.py [ROUNDS]`` (default 40).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

from shellgate.config import load_config
from shellgate.executors import make_executor
from shellgate.executors.base import ExecRequest
from shellgate.executors.bwrap import BwrapExecutor

#: issue 14: the executor against its own argv spawned bare, and that argv against the floor.
TARGET_MACHINERY = 1.15
TARGET_PROFILE = 1.5


def mandated(bwrap: str) -> list[str]:
    return [
        bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--unshare-net", "--new-session", "--die-with-parent",
        "--disable-userns", "--assert-userns-disabled", "--cap-drop", "ALL",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "true",
    ]  # fmt: skip


def _spawn(argv: list[str], pass_fds: tuple[int, ...] = ()) -> None:
    subprocess.run(argv, check=True, pass_fds=pass_fds, stdin=subprocess.DEVNULL)


def _reap_strays() -> None:
    """Reap the sandbox inits the bare series orphan to this process (a subreaper).

    Outside the timed region. Left alone they pile up as zombie children of the
    gate, and every local call's look at the gate's children reads each of them
    (that once made the local series 4-6x bash instead of ~1.5x).
    """
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


async def main(rounds: int) -> None:
    ws = tempfile.mkdtemp(prefix="sg-bench-", dir="/var/tmp")
    cfg = load_config(
        None, executor={"workspace": ws}, audit={"path": None}, policy={"paths": []}
    )
    bw = make_executor(cfg, "bwrap")
    local = make_executor(cfg, "local")
    await bw.open()
    await local.open()
    if bw.unavailable_reason is not None:
        raise SystemExit(f"sandbox unavailable: {bw.unavailable_reason}")
    assert isinstance(bw, BwrapExecutor)
    bwrap = shutil.which("bwrap") or "bwrap"
    spec = bw.resolve(ExecRequest(command="true"))

    def bare_profile() -> None:
        plan = bw._spawn_plan(spec)  # the exact argv of a call, minus the executor
        try:
            _spawn(plan.argv, plan.pass_fds)
        finally:
            if plan.cleanup is not None:
                plan.cleanup()

    series: dict[str, Callable[[], Awaitable[object] | None]] = {
        "bwrap executor": lambda: bw.run(ExecRequest(command="true")),
        "bare bwrap": lambda: _spawn([bwrap, "--ro-bind", "/", "/", "true"]),
        "bare profile": bare_profile,
        "mandated flags": lambda: _spawn(mandated(bwrap)),
        "local executor": lambda: local.run(ExecRequest(command="true")),
        "bare bash -c true": lambda: _spawn(["bash", "-c", "true"]),
    }
    times: dict[str, list[float]] = {name: [] for name in series}
    for _ in range(3):  # warm-up
        for fn in series.values():
            out = fn()
            if out is not None:
                await out
    for _ in range(rounds):
        for name, fn in series.items():
            _reap_strays()
            start = time.perf_counter()
            out = fn()
            if out is not None:
                await out
            times[name].append((time.perf_counter() - start) * 1000)
    await bw.aclose()
    await local.aclose()
    shutil.rmtree(ws, ignore_errors=True)
    med = {name: statistics.median(v) for name, v in times.items()}
    for name, value in med.items():
        print(f"{name:>20}: {value:7.2f} ms median over {rounds}")
    machinery = med["bwrap executor"] / med["bare profile"]
    profile = med["bare profile"] / med["mandated flags"]
    print(f"bwrap executor / bare profile = {machinery:.2f} (target <= {TARGET_MACHINERY})")
    print(f"bare profile / mandated       = {profile:.2f} (target <= {TARGET_PROFILE})")
    print(f"bwrap executor / mandated     = {med['bwrap executor'] / med['mandated flags']:.2f}")
    print(f"mandated flags / bare bwrap   = {med['mandated flags'] / med['bare bwrap']:.2f}")
    print(f"bwrap executor / bare bwrap   = {med['bwrap executor'] / med['bare bwrap']:.2f}")
    print(f"local executor / bare bash    = {med['local executor'] / med['bare bash -c true']:.2f}")
    print(f"cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
