"""Starting one command and watching it: the spawn, the pidfd, the pipes.

The low level under :class:`shellgate.executors._process.Proc`: ``posix_spawn``
(or ``Popen`` where descriptors are passed down) in a new session, a pidfd for
the leader, non-blocking pipe readers on the event loop, and the status pipe of
a supervising helper (``sg-exec --subreaper``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import os
import select
import signal
import subprocess
import time
import weakref
from collections.abc import Callable, Sequence

from shellgate.executors._output import StreamBuffer
from shellgate.executors._procfs import children, group_alive, stat_fields

POLL_S = 0.01  # retry interval for a leader said to have exited, at most
#: Where a supervising helper (``sg-exec --subreaper``) finds its status pipe.
SUPERVISOR_FD = 3

#: This process's idle spare supervisors (``_spare``): children of the gate that
#: belong to no call yet (nothing of a call runs below them), which a call's look
#: for what it left behind skips.
IDLE_SPARES: set[int] = set()

_READ_BYTES = 64 * 1024  # per pipe read (see _on_readable)
_PIPE_BYTES = 1024 * 1024  # pipe capacity we ask for


class Child:
    """A spawned leader: its pid, our read ends of its pipes, and how to reap it.

    Spawned by ``posix_spawn`` when the argv's helper enters the working
    directory and closes inherited descriptors itself (the fast path: no Python
    between fork and exec, the environment encoded in C), else by ``Popen``.
    """

    def __init__(
        self,
        pid: int,
        fds: tuple[int, int],
        popen: subprocess.Popen[bytes] | None,
        status_fd: int | None = None,
        *,
        prepared: bool = False,
    ) -> None:
        self.pid = pid
        self.fds = fds
        self.popen = popen
        self.status_fd = status_fd  # read end of a supervising helper's status pipe
        #: Our read ends are non-blocking and the output pipes enlarged already
        #: (a spare supervisor's, done before its call: see _spare).
        self.prepared = prepared
        self.returncode: int | None = None

    def close_fds(self) -> None:
        for fd in (*self.fds, self.status_fd):
            if fd is not None:
                os.close(fd)

    def reap(self) -> bool:
        """Collect the exit status if the leader has exited; never blocks.

        Called when the pidfd said it exited, so it normally succeeds at once.
        """
        if self.returncode is not None:
            return True
        if self.popen is not None:
            code = self.popen.poll()
            self.returncode = code
            return code is not None
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped behind our back (a host's SIGCHLD handler)
            self.returncode = 0  # what Popen reports then, too
            return True
        if pid == 0:
            return False
        self.returncode = os.waitstatus_to_exitcode(status)
        return True

    def kill(self) -> None:
        """SIGKILL the group and reap the leader (a failure right after the spawn).

        The leader is still unreaped, so its pid (the group's id) cannot have been
        reused; whatever it started is in its new session's group too.
        """
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.popen is not None:
            self.returncode = self.popen.wait()  # SIGKILLed: a moment at most
        else:
            with contextlib.suppress(ChildProcessError):
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
        # A supervising leader may have forked the command already: orphaned by
        # the kill, it is now the gate's (subreaper) to reap. SIGKILLed, so the
        # group empties at once; the bound only guards against the impossible.
        deadline = time.monotonic() + 1.0
        while group_alive(self.pid) and time.monotonic() < deadline:
            for pid in children(os.getpid()):
                fields = stat_fields(pid)
                if fields is not None and fields[0] == "Z" and fields[2] == self.pid:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
            time.sleep(0.001)


def prepare_output(fd: int) -> None:
    """Make our read end of an output pipe non-blocking, and the pipe large.

    A 1 MiB pipe (the default limit for any user) means 16x fewer wake-ups on a
    flood of output; best effort, the default still works.
    """
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


def _status_pipe() -> tuple[int, int]:
    """A pipe for a supervising helper's status line; the write end is never fd 3.

    posix_spawn's dup2 onto the same number would leave it close-on-exec.
    """
    r, w = os.pipe2(os.O_CLOEXEC)
    try:
        w = above(w, SUPERVISOR_FD)
    except BaseException:
        os.close(r)
        os.close(w)
        raise
    return r, w


def above(fd: int, taken: int) -> int:
    """``fd`` itself if its number is above ``taken``, else a close-on-exec copy
    that is (``fd`` then closed; left open if the copy fails).

    posix_spawn's dup2 onto the number a descriptor already has would leave it
    close-on-exec, and one onto a number another source still holds would
    clobber it: sources above every target number have neither problem.
    """
    if fd > taken:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, taken + 1)
    os.close(fd)
    return moved


def spawn_child(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: dict[str, str],
    pass_fds: Sequence[int],
    supervised: bool = False,
) -> Child:
    """Start ``argv`` in a new session, stdin ``/dev/null``, stdout/stderr piped.

    ``cwd=None`` means the argv enters the working directory and closes every
    inherited descriptor itself (``sg-exec --chdir --close-fds``): then
    ``posix_spawn`` is safe and cheaper. Our read ends are close-on-exec.
    ``supervised``: the argv's helper stays as the call's supervisor and reports
    on :data:`SUPERVISOR_FD` (``--subreaper``), which gets a pipe's write end.
    """
    # posix_spawn keeps every inheritable fd: only the helper's --close-fds may
    # stand in for close_fds, and it has nothing to pass through.
    assert cwd is not None or not pass_fds, "cwd=None (helper path) cannot pass fds"
    assert cwd is None or not supervised, "a supervising helper is spawned by posix_spawn"
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    status_r, status_w = _status_pipe() if supervised else (None, None)
    try:
        if cwd is None and not pass_fds:
            actions: list[tuple[int, int, int] | tuple[int, int, str, int, int]] = [
                # O_RDWR as Popen's DEVNULL: `echo x >&0` works as it does there.
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDWR, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ]
            if status_w is not None:
                actions.append((os.POSIX_SPAWN_DUP2, status_w, SUPERVISOR_FD))
            pid = os.posix_spawn(
                argv[0],
                list(argv),
                env,
                file_actions=actions,
                setsid=True,
                # Python ignores SIGPIPE and SIGXFSZ; ignored dispositions survive
                # exec, so reset them (as Popen's restore_signals does), and clear
                # any mask a host thread may have set.
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
                setsigmask=(),
            )
            child = Child(pid, (out_r, err_r), None, status_r)
        else:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
                close_fds=True,
                bufsize=0,
            )
            child = Child(popen.pid, (out_r, err_r), popen)
    except BaseException:
        for fd in (out_r, err_r, status_r):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, status_w):
            if fd is not None:
                os.close(fd)
    return child


class Poller:
    """One epoll set for the descriptors of every command watched on one event loop.

    The set itself is the loop's one reader while any command is watched: a
    command's descriptors (pidfd, pipes, status pipe) go in and out of it with
    one ``epoll_ctl`` each, and their readiness is dispatched from one callback.
    asyncio's own ``add_reader``/``remove_reader`` cost several Python frames, a
    selector key, a handle and a caught ``KeyError`` for each of a call's four
    descriptors, twice; its one handle per ready descriptor runs here as a call.

    Callbacks are plain calls, each on its own: one that raises is reported to
    the loop's exception handler, as a reader's callback would be, and the rest
    still run. A descriptor must be removed (:meth:`remove`) before it is closed,
    else its number, reused, would reach the old callback.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # weak: the loop is the key of its poller
        self._epoll = select.epoll()  # close-on-exec; closed when the loop is collected
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._reading = False

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Poller:
        poller = _POLLERS.get(loop)
        if poller is None:
            poller = _POLLERS[loop] = cls(loop)
        return poller

    def add(self, fd: int, callback: Callable[[], None]) -> None:
        self._epoll.register(fd, select.EPOLLIN)
        self._callbacks[fd] = callback
        if not self._reading:
            self._the_loop().add_reader(self._epoll.fileno(), self._dispatch)
            self._reading = True

    def remove(self, fd: int) -> None:
        if self._callbacks.pop(fd, None) is not None:
            self._epoll.unregister(fd)
        if not self._callbacks and self._reading:
            # Nothing watched: the loop holds no reader of ours (a loop may be
            # closed with no command running).
            self._the_loop().remove_reader(self._epoll.fileno())
            self._reading = False

    def _the_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop()
        assert loop is not None, "a poller outlived its loop"  # the loop is its key
        return loop

    def _dispatch(self) -> None:
        for fd, _ in self._epoll.poll(0):
            # Looked up at its turn: an earlier callback may have removed it.
            callback = self._callbacks.get(fd)
            if callback is None:
                continue
            try:
                callback()
            except Exception as exc:  # as asyncio's handle of a reader would
                self._the_loop().call_exception_handler(
                    {"message": f"exception in the watch of fd {fd}", "exception": exc}
                )


#: Each loop's poller, dropped (its epoll set closed) with the loop.
_POLLERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Poller] = (
    weakref.WeakKeyDictionary()
)


class Watch:
    """Leader exit (a pidfd) and the two pipes, read straight from the event loop.

    asyncio's subprocess transport would do, but its default child watcher on
    Python 3.11 starts one thread per process (≈0.5 ms a call) and its
    ``Process.wait()`` only returns once the pipes close — which a ``cmd &``
    holding stdout delays forever. A pidfd is readable exactly when the leader
    exits; reaping it is then a non-blocking ``waitpid``.

    Under a supervising helper the leader is the supervisor, which outlives the
    command while other processes of the call do: it then says on its status
    pipe how the command ended. ``exited`` means "the command ended": that line,
    or the leader's exit, whichever comes first; the pidfd stays watched until
    the leader is reaped.
    """

    def __init__(self, child: Child, stdout: StreamBuffer, stderr: StreamBuffer) -> None:
        self.loop = asyncio.get_running_loop()
        self._poller = Poller.of(self.loop)
        self.child = child
        self.exited: asyncio.Future[None] = self.loop.create_future()
        # Called as ``exited`` is set, in the same callback: a future's own
        # callbacks run a loop turn later, and a trivial command is a few
        # milliseconds in all (see _ending.first_of).
        self.listener: Callable[[], None] | None = None
        self.eof: dict[int, asyncio.Future[None]] = {}
        self.reported: int | None = None  # the command's returncode, from the status line
        self._fds: list[int] = []  # pipes still registered with the loop
        self._ended_fds: list[int] = []  # pipes read to EOF, no longer registered
        self._pidfd = -1
        self._status = b""
        self._status_fd = -1
        self._retry: asyncio.TimerHandle | None = None
        poller = self._poller
        try:
            self._pidfd = os.pidfd_open(child.pid)
            poller.add(self._pidfd, self._on_exit)
            if child.status_fd is not None:
                if not child.prepared:
                    os.set_blocking(child.status_fd, False)
                poller.add(child.status_fd, self._on_status)
                self._status_fd = child.status_fd
            for fd, buf in zip(child.fds, (stdout, stderr), strict=True):
                if not child.prepared:
                    prepare_output(fd)
                done: asyncio.Future[None] = self.loop.create_future()
                self.eof[fd] = done
                poller.add(fd, functools.partial(self._on_readable, fd, buf, done))
                self._fds.append(fd)
        except BaseException:
            # Leave the loop with no registration of ours; the pipes are the caller's.
            for fd in self._fds:
                poller.remove(fd)
            if self._status_fd >= 0:
                poller.remove(self._status_fd)
            if self._pidfd >= 0:
                poller.remove(self._pidfd)
                os.close(self._pidfd)
            raise

    def _on_exit(self) -> None:
        self._retry = None
        if self._pidfd >= 0:
            self._poller.remove(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if not self.child.reap():
            # Said to have exited, not yet collectable: look again shortly
            # (never a blocking wait on the loop's thread).
            self._retry = self.loop.call_later(POLL_S / 10, self._on_exit)
            return
        self._ended()

    def _ended(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
            if self.listener is not None:
                self.listener()

    def _on_status(self) -> None:
        """The supervisor's one line: ``exit N`` or ``signal N`` (then EOF)."""
        try:
            data = os.read(self._status_fd, 64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self._status += data
        if data and b"\n" not in self._status:
            return
        self._poller.remove(self._status_fd)
        kind, _, value = self._status.decode("ascii", "replace").strip().partition(" ")
        if value.isdigit() and kind in ("exit", "signal"):
            self.reported = int(value) if kind == "exit" else -int(value)
            self._ended()

    def _on_readable(self, fd: int, buf: StreamBuffer, done: asyncio.Future[None]) -> None:
        # 64 KiB reads: a larger os.read allocates past glibc's mmap/trim thresholds
        # and page-faults its buffer in on every call (1 MiB reads made a 1 GiB
        # stream 60 % slower). The 1 MiB pipe still lets a writer run ahead.
        try:
            data = os.read(fd, _READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            buf.feed(data)
            return
        self._poller.remove(fd)
        self._fds.remove(fd)  # read to the end: only closing it is left (see close)
        self._ended_fds.append(fd)
        buf.close()
        if not done.done():
            done.set_result(None)

    def close(self) -> None:
        """Stop reading and close our pipe ends (the group is already stopped)."""
        poller = self._poller
        for fd in self._fds:
            poller.remove(fd)
            os.close(fd)
        for fd in self._ended_fds:
            os.close(fd)
        self._fds = []
        self._ended_fds = []
        if self._status_fd >= 0:
            poller.remove(self._status_fd)
            os.close(self._status_fd)
            self._status_fd = -1
            self.child.status_fd = None
        if self._pidfd >= 0:
            poller.remove(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
