"""What a bwrap gate leaves on disk, on record, so the next gate removes a dead one's.

A gate (one :class:`~shellgate.executors.bwrap.BwrapExecutor`) keeps things outside
its memory: placeholders in the workspace (they persist for the executor's life),
a pids cgroup (root gates), a spill directory, and the lock files of its writable
roots. Each gate lists them in its record, ``<lock dir>/gates/<id>.json``, and
holds an exclusive ``flock`` on ``<id>.lock`` for its whole life. The kernel drops
that lock however the gate dies, so "the lock can be taken" means "its owner is
gone" — no pid is compared, so pid reuse cannot make a live gate look dead.

A gate closing normally removes what it made and its record. One SIGKILLed leaves
them; every gate sweeps dead records when it opens and when it closes:

* placeholders first (they are files in the user's workspace), and only under an
  exclusive lock on their root's lock file (no live sandbox of any gate mounts
  them then; see :mod:`._bwrap_placeholders`), and only the very inode that was
  recorded, still empty. When a live gate holds the root, they stay on record
  and that gate's own close removes them;
* the cgroup: processes still in it are killed (they are the dead gate's), then
  it is removed;
* the spill directory.

A record lists a placeholder only after it was made (a crash between the two
leaves one empty file that is never removed: the inode is unknown, so it is not
provably ours). The lock file is created under a staging name, locked, and only
then renamed to ``<id>.lock``, so a sweeper never takes the lock of a gate that is
starting.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from typing import Any

from shellgate.executors import _bwrap_cgroup as cgroup
from shellgate.executors import _bwrap_placeholders as placeholders

_log = logging.getLogger("shellgate.executors")


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A placeholder this gate made: where, what (``null`` file, ``empty`` dir), which inode."""

    root: str
    path: str
    how: str
    dev: int
    ino: int


def gates_dir() -> str:
    path = os.path.join(placeholders.lock_dir(), "gates")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    return path


@dataclass
class GateRecord:
    """This gate's record and the lock that says it is alive."""

    directory: str
    gate_id: str
    lock_fd: int
    cgroup: str | None = None
    spill: str | None = None
    placeholders: dict[str, Placeholder] = field(default_factory=dict)

    @classmethod
    def create(cls, *, spill: str | None) -> GateRecord:
        directory = gates_dir()
        gate_id = f"{os.getpid()}-{secrets.token_hex(6)}"
        staging = os.path.join(directory, f".{gate_id}.new")
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(staging, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(staging, os.path.join(directory, f"{gate_id}.lock"))
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(staging)
            raise
        record = cls(directory, gate_id, fd, spill=spill)
        record.save()
        return record

    def _path(self, suffix: str) -> str:
        return os.path.join(self.directory, f"{self.gate_id}{suffix}")

    def save(self) -> None:
        """Replace the record atomically (a reader sees the old or the new one)."""
        data = {
            "cgroup": self.cgroup,
            "spill": self.spill,
            "placeholders": [
                [p.root, p.path, p.how, p.dev, p.ino] for p in self.placeholders.values()
            ],
        }
        _write_json(self._path(".json"), data)

    def forget(self, *, keep_placeholders: bool) -> None:
        """The gate closed: drop the record (or keep what it could not remove — the
        placeholders of a root another gate holds, a busy cgroup — for a later
        sweep) and release the lock."""
        if (keep_placeholders and self.placeholders) or self.cgroup is not None:
            self.spill = None  # the spill store closes itself (and may keep files for a user)
            self.save()
        else:
            with contextlib.suppress(OSError):
                os.unlink(self._path(".json"))
            with contextlib.suppress(OSError):
                os.unlink(self._path(".lock"))
        with contextlib.suppress(OSError):
            os.close(self.lock_fd)
        self.lock_fd = -1


def _write_json(path: str, data: dict[str, Any]) -> None:
    tmp = f"{path}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps(data).encode())
    finally:
        os.close(fd)
    os.rename(tmp, path)


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = json.loads(os.read(fd, 1 << 20))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def _parse_placeholders(data: dict[str, Any]) -> list[Placeholder]:
    out: list[Placeholder] = []
    for item in data.get("placeholders") or []:
        with contextlib.suppress(TypeError, ValueError):
            root, path, how, dev, ino = item
            if isinstance(root, str) and isinstance(path, str) and how in ("null", "empty"):
                out.append(Placeholder(root, path, how, int(dev), int(ino)))
    return out


def recorded_placeholders(directory: str) -> list[Placeholder]:
    """Every gate's recorded placeholders (live or dead): all are placeholders, not
    the user's files, so every gate guards them as missing paths."""
    out: list[Placeholder] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if name.endswith(".json"):
            data = _read_json(os.path.join(directory, name))
            if data is not None:
                out += _parse_placeholders(data)
    return out


def intact(p: Placeholder) -> bool:
    """``p`` is still the recorded inode and still empty (nobody put anything there)."""
    try:
        st = os.lstat(p.path)
    except OSError:
        return False
    if (st.st_dev, st.st_ino) != (p.dev, p.ino):
        return False
    if p.how == "null":
        return stat.S_ISREG(st.st_mode) and st.st_size == 0
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        with os.scandir(p.path) as it:
            return next(it, None) is None
    except OSError:
        return False


def sweep(own: str | None = None, exclusive: dict[str, int] | None = None) -> None:
    """Remove what dead gates left. ``own``: this gate's id (skipped). ``exclusive``:
    roots whose lock this gate already holds exclusively (fd by root)."""
    directory = gates_dir()
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if not name.endswith(".lock") or name.startswith("."):
            continue
        gate_id = name[: -len(".lock")]
        if gate_id == own:
            continue
        try:
            _sweep_one(directory, gate_id, exclusive or {})
        except OSError as exc:  # never let a stranger's leftovers stop this gate
            _log.warning("cannot sweep the leftovers of dead gate %s: %s", gate_id, exc)


def _sweep_one(directory: str, gate_id: str, exclusive: dict[str, int]) -> None:
    lock_path = os.path.join(directory, f"{gate_id}.lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # alive
        try:
            if os.fstat(fd).st_ino != os.stat(lock_path, follow_symlinks=False).st_ino:
                return  # swept and unlinked by another gate meanwhile
        except FileNotFoundError:
            return
        json_path = os.path.join(directory, f"{gate_id}.json")
        data = _read_json(json_path) or {}
        left = _remove_placeholders(_parse_placeholders(data), exclusive)
        spill = data.get("spill")
        if isinstance(spill, str) and _is_spill_dir(spill):
            shutil.rmtree(spill, ignore_errors=True)
        busy = data.get("cgroup") if isinstance(data.get("cgroup"), str) else None
        if busy is not None and cgroup.sweep(busy):
            busy = None
        if busy is not None:
            # Zombies not yet reaped by whoever inherited them still count.
            _log.warning("the cgroup of dead gate %s is still busy: %s", gate_id, busy)
        if left or busy is not None:  # keep what is left on record: try again next time
            _write_json(json_path, {"cgroup": busy, "spill": None, "placeholders": [
                [p.root, p.path, p.how, p.dev, p.ino] for p in left
            ]})  # fmt: skip
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(json_path)
        os.unlink(lock_path)
    finally:
        os.close(fd)


def _is_spill_dir(path: str) -> bool:
    """Only a directory of ours named like a spill store (never follow a link)."""
    if not os.path.basename(path).startswith("shellgate-spill-"):
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def _remove_placeholders(found: list[Placeholder], exclusive: dict[str, int]) -> list[Placeholder]:
    """Remove ``found`` root by root where no live gate holds the root; returns the rest."""
    by_root: dict[str, list[Placeholder]] = {}
    for p in found:
        by_root.setdefault(p.root, []).append(p)
    left: list[Placeholder] = []
    for root, items in by_root.items():
        if root in exclusive:
            remove_all(items)
            continue
        held = placeholders.try_exclusive(root)
        if held is None:
            left += items  # a live gate may mount them: its own close sweeps them
            continue
        try:
            remove_all(items)
        finally:
            placeholders.release_exclusive(held)
    return left


def remove_all(items: list[Placeholder]) -> None:
    """Deepest first; only the recorded inode, only if still empty."""
    for p in sorted(items, key=lambda p: p.path, reverse=True):
        placeholders.remove_placeholder(p.root, p.path, p.how, (p.dev, p.ino))


def release(record: GateRecord | None, held: placeholders.Held) -> None:
    """A gate closes: remove its placeholders (and dead gates' there) from every root
    no other gate holds; a root still held keeps them on record for that gate's
    close. Then drop the record and every root lock."""
    if record is None:
        held.release()
        return
    exclusive = {root: fd for root, fd in held.fds.items() if held.upgrade(root)}
    mine = [p for p in record.placeholders.values() if p.root in exclusive]
    remove_all(mine)
    for p in mine:
        del record.placeholders[p.path]
    sweep(own=record.gate_id, exclusive=exclusive)
    for root in exclusive:
        held.unlink(root)
    held.release()
    record.forget(keep_placeholders=True)
