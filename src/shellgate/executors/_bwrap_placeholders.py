"""Placeholders: mount points bwrap creates on the host for missing protected paths.

A placeholder must go once no sandbox mounts it any more, and not before: deleting
a mount point that another mount namespace still uses is allowed and silently
detaches that mount, which would free the protected name inside a running
sandbox. So every call holds a shared ``flock`` per writable root (one open file
description per call, so calls of the same process exclude each other too), and
removal happens only under an exclusive, non-blocking ``flock``: whoever gets it
is the last one out and removes every placeholder this process registered under
that root. Removal walks ``O_NOFOLLOW`` directory fds from the root and deletes
only an empty regular file or an empty directory, so nothing the sandbox planted
(a symlink, content) is followed or destroyed.

The lock files live in a private directory under the host's temp directory,
which confined modes never see (their ``/tmp`` is a private tmpfs). The last one
out also unlinks the lock file, so they do not pile up with every workspace ever
sandboxed; a process that opened the file just before takes its shared lock on
the unlinked inode, sees that the name no longer leads there, and starts over on
the new file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterable

from shellgate.errors import ExecutionError
from shellgate.executors._bwrap_argv import Guard

_LOCK_WAIT_S = 0.5
_registry: dict[str, dict[str, str]] = {}  # root -> {placeholder path: how}


def _lock_dir() -> str:
    """A private directory for the lock files (never inside a confined view)."""
    path = os.path.join(tempfile.gettempdir(), f"shellgate-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ExecutionError(f"unsafe lock directory (not a private directory of ours): {path}")
    return path


class _Held:
    """The shared flocks of one call, by writable root (and their lock files)."""

    def __init__(self, fds: dict[str, int], paths: dict[str, str] | None = None) -> None:
        self.fds = fds
        self.paths = paths if paths is not None else {}

    def release(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}

    def remove_if_last(self) -> None:
        try:
            for root, fd in self.fds.items():
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # another sandbox may still mount them; the last one out cleans
                for path, how in sorted(_registry.pop(root, {}).items(), reverse=True):
                    _remove_placeholder(root, path, how)
                with contextlib.suppress(OSError):  # under the exclusive lock: nobody uses it
                    os.unlink(self.paths[root])
        finally:
            self.release()


def hold_shared(roots: list[str]) -> _Held:
    fds: dict[str, int] = {}
    if not roots:
        return _Held(fds)
    directory = _lock_dir()
    held = _Held(fds)
    try:
        for root in roots:
            name = hashlib.sha256(root.encode()).hexdigest()[:32] + ".lock"
            path = os.path.join(directory, name)
            held.paths[root] = path
            fds[root] = _lock_shared(path, root)
    except BaseException:
        held.release()
        raise
    return held


def _lock_shared(path: str, root: str) -> int:
    """A shared flock on the lock file that ``path`` names *now* (see the docstring)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        fd = os.open(path, flags, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise ExecutionError(
                            f"protected-path placeholders under {root} are locked by another "
                            "process; try again"
                        ) from None
                    time.sleep(0.005)  # an exclusive holder only removes a few files
            held, named = os.fstat(fd), os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            os.close(fd)  # unlinked by the last one out meanwhile: take the new file
            continue
        except BaseException:
            os.close(fd)
            raise
        if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
            return fd
        os.close(fd)


def register(root: str, guards: Iterable[Guard]) -> None:
    entry = _registry.setdefault(root, {})
    for guard in guards:
        entry[guard.path] = guard.how


def _remove_placeholder(root: str, path: str, how: str) -> None:
    """Remove an empty placeholder, walking from ``root`` without following symlinks."""
    parts = path[len(root.rstrip("/")) + 1 :].split("/")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        dfd = os.open(root, flags)
    except OSError:
        return
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags, dir_fd=dfd)
            os.close(dfd)
            dfd = nxt
        st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        if how == "null" and stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(parts[-1], dir_fd=dfd)
        elif how == "empty" and stat.S_ISDIR(st.st_mode):
            os.rmdir(parts[-1], dir_fd=dfd)  # ENOTEMPTY: someone put content there; keep it
    except OSError:
        pass  # gone, replaced or non-empty: never remove what is not ours
    finally:
        os.close(dfd)
