"""What the kernel says about processes: /proc readers and guarded signals.

Everything here reads one process at a time and tolerates it vanishing mid-read
(``None`` / empty answers); nothing here blocks.
"""

from __future__ import annotations

import contextlib
import os

_WALL = 0x40000000  # __WALL: every child, whatever signal it reports its exit with
_PF_EXITING = 0x4  # task flag: in do_exit, past the last instruction of its own


def read_proc(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of ``pid`` from /proc, or None if it is gone."""
    raw = read_proc(f"/proc/{pid}/stat")
    if raw is None:
        return None
    rest = raw[raw.rfind(b")") + 2 :].split()
    return rest[0].decode(), int(rest[1]), int(rest[2])


def ending(pid: int, parent: int) -> bool:
    """Whether ``pid``, a child of ``parent``, is a zombie or already exiting.

    An exiting task (``PF_EXITING``, set as ``do_exit`` begins) runs no more code
    of its own: whatever it was, it is now only the kernel's cleanup. False when
    it is gone, belongs to another parent, or still runs.
    """
    raw = read_proc(f"/proc/{pid}/stat")
    if raw is None:
        return False
    rest = raw[raw.rfind(b")") + 2 :].split()
    if int(rest[1]) != parent:
        return False
    return rest[0] == b"Z" or bool(int(rest[6]) & _PF_EXITING)


def children(pid: int) -> list[int]:
    """``pid``'s children, alive or zombie (every thread's list)."""
    kids: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tids:
        raw = read_proc(f"/proc/{pid}/task/{tid}/children")
        if raw:
            kids.extend(int(x) for x in raw.split())
    return kids


def descendants(pid: int, *, limit: int = 100_000) -> list[int]:
    """Every process below ``pid`` (breadth first; at most ``limit``)."""
    found: list[int] = []
    level = children(pid)
    while level and len(found) < limit:
        found.extend(level)
        level = [kid for parent in level for kid in children(parent)]
    return found[:limit]


def carries(pid: int, marker: bytes) -> bool | None:
    """Whether ``pid``'s environment holds ``marker``; None when it cannot be read yet.

    A process inside ``execve`` (or just forked) can show an empty environ for
    a moment: that is "unknown, look again", never "not ours".
    """
    raw = read_proc(f"/proc/{pid}/environ")
    if not raw:
        fields = stat_fields(pid)
        return False if fields is None or fields[0] in ("Z", "X") else None
    return marker in raw.split(b"\0")


def has_children() -> bool:
    """Whether this process has any child at all, alive or zombie (one system call)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT | _WALL)
    except ChildProcessError:
        return False
    except OSError:  # pragma: no cover - unexpected: assume there are, and look
        return True
    return True


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a reused pgid of another user
        return False
    return True


def signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
