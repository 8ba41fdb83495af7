"""The process limit for a gate running as root: a pids cgroup for the gate's sandboxes.

``RLIMIT_NPROC`` does not bind host uid 0 (the kernel exempts the init user's
processes whatever their capabilities), and bwrap maps the sandbox to the caller's
uid, so under a root gate a fork bomb inside the sandbox is only stopped by
``pids.max``. The gate makes one cgroup below its own, and the first process of
every call moves itself into it *before* it execs anything (``sg-exec --cgroup``,
or a ``/bin/sh`` trampoline on the setpriv fallback: see
``Hardening.prefix``), so no descendant can be forked outside it. Moving the pid from
the gate after spawning would race with bwrap's first ``clone``.

Availability: a cgroup v1 ``pids`` hierarchy, or cgroup v2 where ``pids`` is
already enabled for the gate's children (a delegated subtree). Without either
:func:`find_base` returns ``None`` and the caller says so (docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import os
import time

_RMDIR_TRIES = 100  # x 2 ms: reaped processes leave the cgroup a moment after exit


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    out: list[tuple[str, str, str]] = []
    try:
        with open("/proc/self/mountinfo") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((fields[4].replace("\\040", " "), tail[0], tail[2]))
    return out


def _own_paths() -> dict[str, str]:
    """Controller list (``""`` for v2) → the gate's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh.read().splitlines():
                _, controllers, path = line.split(":", 2)
                paths[controllers] = path
    except (OSError, ValueError):
        pass
    return paths


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return ""


_base: list[str | None] = []  # the process's own, looked up once (see join_thread)


def find_base() -> str | None:
    """A writable directory below which the gate's pids cgroup can be created: the
    one this process started in (found once, as a thread that joined a gate's
    cgroup makes ``/proc/self/cgroup`` name that one)."""
    if not _base:
        _base.append(_find_base())
    return _base[0]


def _find_base() -> str | None:
    own = _own_paths()
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options.split(","):
            path = next((p for c, p in own.items() if "pids" in c.split(",")), None)
        elif fstype == "cgroup2":
            path = own.get("")
            if path is not None:
                here = os.path.join(mount, path.lstrip("/"))
                if "pids" not in _read(os.path.join(here, "cgroup.subtree_control")).split():
                    continue
        else:
            continue
        if path is None:
            continue
        base = os.path.join(mount, path.lstrip("/"))
        if os.path.isdir(base) and os.access(base, os.W_OK):
            return base
    return None


def create(base: str, name: str, max_pids: int) -> str:
    """Make ``base/name`` with ``pids.max``; returns its ``cgroup.procs`` path."""
    path = os.path.join(base, name)
    os.mkdir(path, 0o755)
    try:
        with open(os.path.join(path, "pids.max"), "w") as fh:
            fh.write(str(max_pids))
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(path)
        raise
    return os.path.join(path, "cgroup.procs")


def join_thread(procs_file: str, tid: int) -> bool:
    """Move the thread ``tid`` (the one that spawns) into the cgroup (v1 only, where
    threads of a process may live apart); False where that is not possible.

    Every process that thread forks is then born in the cgroup, and a call's
    first process need not move itself there: on cgroup v1 each move waits for an
    RCU grace period (``cgroup_threadgroup_rwsem``), ~10 ms on a loaded 2-core host.
    """
    tasks = os.path.join(os.path.dirname(procs_file), "tasks")
    if not os.path.exists(tasks):
        return False
    try:
        with open(tasks, "w") as fh:
            fh.write(str(tid))
    except OSError:
        return False
    return thread_in(procs_file, tid)


def thread_in(procs_file: str, tid: int) -> bool:
    """Whether the thread ``tid`` of this process is in the cgroup now."""
    directory = os.path.dirname(procs_file)
    name = "/" + os.path.basename(directory)
    text = _read(f"/proc/self/task/{tid}/cgroup")
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return path.endswith(name) and directory.endswith(path)
    return False


def leave_threads(procs_file: str) -> None:
    """Move every thread of this process that is in the cgroup back to the process's
    own: the spawning thread, and any thread it started meanwhile (they are born
    where it is), so that the cgroup can be removed."""
    base = find_base()
    if base is None:
        return
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return
    for tid in tids:
        if thread_in(procs_file, tid):
            with contextlib.suppress(OSError), open(os.path.join(base, "tasks"), "w") as fh:
                fh.write(str(tid))


def sweep(directory: str) -> bool:
    """Remove a dead gate's cgroup: kill what is left in it (its sandboxes'
    processes: the kernel lists only current members, so no pid is stale), then
    remove it. ``directory`` must be a ``shellgate-*`` cgroup below our base."""
    if not _could_be_ours(directory):
        return True  # not one we could have made: nothing of ours to remove
    if not os.path.isdir(directory):
        return True
    # Killed processes leave the cgroup once reaped, by whoever inherited them
    # (init may take a second): kill and retry for up to ~3 s.
    for _ in range(15):
        for pid in _read(os.path.join(directory, "cgroup.procs")).split():
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid), 9)
        if remove(os.path.join(directory, "cgroup.procs")):
            return True
    return False


def _could_be_ours(directory: str) -> bool:
    """A ``shellgate-*`` directory in a cgroup hierarchy with the pids controller.

    Not "below *this* process's base": the dead gate may have started in another
    cgroup (another login session's scope, a service's own cgroup), and comparing
    with the sweeper's own base dropped its record and leaked its cgroup."""
    norm = os.path.normpath(directory)
    if not os.path.basename(norm).startswith("shellgate-") or norm != directory.rstrip("/"):
        return False
    for mount, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" not in options.split(","):
            continue
        if fstype in ("cgroup", "cgroup2") and norm.startswith(mount.rstrip("/") + "/"):
            return True
    return False


def remove(procs_file: str) -> bool:
    """Remove a cgroup once its processes are gone (False if it stays)."""
    path = os.path.dirname(procs_file)
    for _ in range(_RMDIR_TRIES):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.002)
    return False
