"""Placeholders: mount points for missing protected paths, made on the host.

The executor makes a placeholder (an empty file for ``/dev/null``, an empty
directory for a read-only tmpfs) the first time a call needs it and keeps it for
the executor's life, so calls neither create nor remove files in the workspace
(see :mod:`._bwrap_state` for the record that lets the next gate remove a dead
gate's). A placeholder must go once no sandbox mounts it any more, and not
before: deleting a mount point that another mount namespace still uses is
allowed and silently detaches that mount, which would free the protected name
inside a running sandbox. So every gate holds a shared ``flock`` per writable
root for its whole life (one open file description per gate, so gates of the
same process exclude each other too), and removal happens only under an
exclusive, non-blocking ``flock``: whoever gets it is the last one out. Creation
and removal walk ``O_NOFOLLOW`` directory fds from the root; removal deletes only
the recorded inode, still an empty regular file or empty directory, so nothing
the sandbox planted (a symlink, content) is followed or destroyed.

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

from shellgate.errors import ExecutionError

_LOCK_WAIT_S = 0.5


def lock_dir() -> str:
    """A private directory for the lock files (never inside a confined view)."""
    path = os.path.join(tempfile.gettempdir(), f"shellgate-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ExecutionError(f"unsafe lock directory (not a private directory of ours): {path}")
    return path


class Held:
    """A gate's shared flocks, by writable root (and their lock files)."""

    def __init__(self, fds: dict[str, int], paths: dict[str, str] | None = None) -> None:
        self.fds = fds
        self.paths = paths if paths is not None else {}

    def release(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}

    def add(self, root: str) -> None:
        """Also hold ``root`` (a writable root that appeared since)."""
        if root not in self.fds:
            path = _lock_path(root)
            self.fds[root] = _lock_shared(path, root)
            self.paths[root] = path

    def upgrade(self, root: str) -> bool:
        """Exclusive on ``root`` if no one else holds it (then nothing mounts its
        placeholders but what this holder removes now)."""
        try:
            fcntl.flock(self.fds[root], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def unlink(self, root: str) -> None:
        """Under the exclusive lock: nobody uses the lock file, so it goes too."""
        with contextlib.suppress(OSError):
            os.unlink(self.paths[root])


def _lock_path(root: str) -> str:
    name = hashlib.sha256(root.encode()).hexdigest()[:32] + ".lock"
    return os.path.join(lock_dir(), name)


def try_exclusive(root: str) -> tuple[int, str] | None:
    """The root's lock, exclusively, if nobody holds it (for a sweep of dead gates)."""
    path = _lock_path(root)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
            return fd, path
    except OSError:
        pass
    os.close(fd)
    return None


def release_exclusive(held: tuple[int, str]) -> None:
    fd, path = held
    with contextlib.suppress(OSError):
        os.unlink(path)
    os.close(fd)


def hold_shared(roots: list[str]) -> Held:
    fds: dict[str, int] = {}
    if not roots:
        return Held(fds)
    held = Held(fds)
    try:
        for root in roots:
            held.add(root)
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


def make(root: str, path: str, how: str) -> tuple[int, int] | None:
    """Create the placeholder ``path`` under ``root`` (walking ``O_NOFOLLOW``): an empty
    file (``null``) or directory (``empty``). Its (dev, ino), or ``None`` when its
    parent is not a plain directory or the name exists by now (bwrap then mounts
    over what is there, and the next call plans again)."""
    parts = path[len(root.rstrip("/")) + 1 :].split("/")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        dfd = os.open(root, flags)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags, dir_fd=dfd)
            os.close(dfd)
            dfd = nxt
        if how == "null":
            fd = os.open(
                parts[-1],
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o644,
                dir_fd=dfd,
            )
            st = os.fstat(fd)
            os.close(fd)
        else:
            os.mkdir(parts[-1], 0o755, dir_fd=dfd)
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        return st.st_dev, st.st_ino
    except OSError:
        return None
    finally:
        os.close(dfd)


def remove_placeholder(
    root: str, path: str, how: str, inode: tuple[int, int] | None = None
) -> None:
    """Remove an empty placeholder (the inode ``inode`` when given), walking from
    ``root`` without following symlinks."""
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
        if inode is not None and (st.st_dev, st.st_ino) != inode:
            return  # replaced meanwhile: not ours
        if how == "null" and stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(parts[-1], dir_fd=dfd)
        elif how == "empty" and stat.S_ISDIR(st.st_mode):
            os.rmdir(parts[-1], dir_fd=dfd)  # ENOTEMPTY: someone put content there; keep it
    except OSError:
        pass  # gone, replaced or non-empty: never remove what is not ours
    finally:
        os.close(dfd)
