"""A spare call supervisor: ``sg-exec --request``, started ahead of its call.

A local call's supervisor (``sg-exec --subreaper``) is spawned, starts, arms its
parent-death signal, closes every inherited descriptor, sets no_new_privs and
forks the hardened command before the command can exec: about 0.2 ms on the
call's path, a sixth of a trivial command's whole run. A spare does all of
that between calls; its command's process then waits on a socket. The call
writes its working directory, its command and its environment there in one
write and closes the socket; from then on the spare is exactly the supervisor a
fresh spawn would have started, with the same hardening (the spare's argv
carries the same limits, and it is used only by a call whose limits match), in
a session of its own, with the call's output pipes and status pipe in place.

Rules that keep it equivalent to a fresh spawn:

* At most one idle spare per executor. A call takes it (it is then that call's
  leader, never another's) and a new one is started on the event loop's next
  turn after the call ended, off the call's path. (Started during the call
  instead, it cost that call more than it saved: ratio 1.44 against 1.36 in
  one process, docs/performance.md.)
* An idle spare is a child of the gate that belongs to no call (its pid is in
  ``_spawn.IDLE_SPARES`` until a call takes it): a call's look for what it left
  behind skips it, so one call's end is not slowed by the next call's spare.
* A spare is used only in the process and on the thread that started it: its
  parent-death signal follows that thread, and a forked child of the gate does
  not own it; and only while the gate's credentials, groups, limits, affinity
  and nice value are what they were when it started (:func:`process_state`):
  a host that dropped root since gets a fresh spawn as its new user. The
  command takes the gate's umask as it is when the call comes.
* The request is shut down after its write, so a fork of the host holding a
  copy of our end cannot hold the call, and sent with ``MSG_NOSIGNAL``.
* The request travels over a Unix socket, which unlike a pipe no other process
  of the user can open through ``/proc/<gate>/fd`` to slip its own request in.
* A request that would not fit the socket in one non-blocking write (over
  :data:`REQUEST_MAX`, or a buffer the kernel made smaller) is never sent in
  part: the spare is killed and the call spawns afresh. A spare that died
  while idle (the write fails) is reaped and the call spawns afresh.
* The spare's own environment is ``SHELLGATE_SPARE=1`` alone (nothing of the
  gate's leaks into an idle process), and it closes every descriptor but its
  status pipe and request socket when it starts, so a descriptor the host opens later
  never reaches it.
* The spare forks its command's process ahead of the call too; that process,
  hardened, waits for the request, which must end with its end mark (a request
  cut short runs nothing: exit 126). A stop before the request kills the
  waiting process, and the spare exits as it did (``receive_request`` in
  sg-exec.c).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import signal
import socket
import threading
from collections.abc import Mapping, Sequence

from shellgate.executors._spawn import IDLE_SPARES, SUPERVISOR_FD, Child, above, prepare_output

log = logging.getLogger("shellgate.executors")

#: Largest request sent to a spare (a pipe's default capacity; a socket's buffer
#: is larger): workdir,
#: command and environment, NUL-separated. Larger calls spawn afresh.
REQUEST_MAX = 64 * 1024
#: The helper's own bounds on a request (sg-exec.c REQUEST_ARGS, REQUEST_ENVS).
_MAX_ARGS = 64
_MAX_ENVS = 4096
#: A spare's own environment (and its idle command's, until the request comes).
_SPARE_ENV = {"SHELLGATE_SPARE": "1"}
#: The descriptors the spare finds its status pipe and request socket at.
_STATUS_FD, _REQUEST_FD = SUPERVISOR_FD, SUPERVISOR_FD + 1


def encode_request(workdir: str, argv: Sequence[str], env: Mapping[str, str]) -> bytes | None:
    """The request for a spare, or None where the call must spawn afresh.

    Raises ``ValueError`` for what ``os.posix_spawn`` refuses (a NUL byte, an
    environment name with ``=``), with its messages, so either path fails alike.
    """
    if len(argv) > _MAX_ARGS or len(env) > _MAX_ENVS or not argv:
        return None
    if any(not name or "=" in name[1:] for name in env):  # as os.posix_spawn checks
        raise ValueError("illegal environment variable name")
    fields = [workdir, str(len(argv)), *argv, *[f"{name}={value}" for name, value in env.items()]]
    text = "\0".join(fields)
    if text.count("\0") != len(fields) - 1:
        raise ValueError("embedded null byte")
    request = os.fsencode(text) + b"\0\0"  # the last field's end, then an empty one: the end mark
    return request if len(request) <= REQUEST_MAX else None


def process_state() -> tuple[object, ...]:
    """What a spare inherits from the gate that the host may change between calls
    and that a fresh spawn would take as it is then: credentials, supplementary
    groups, resource limits, CPU affinity and nice value (about 8 µs).

    The umask the spare's command takes from the gate when its call comes
    (sg-exec.c reads it from ``/proc/PPID/status``); the rest of a fresh spawn's
    inheritance comes from the configuration or is reset.
    """
    return (
        os.getresuid(),
        os.getresgid(),
        tuple(sorted(os.getgroups())),
        tuple(resource.getrlimit(limit) for limit in _RLIMITS),
        frozenset(os.sched_getaffinity(0)),
        os.getpriority(os.PRIO_PROCESS, 0),
    )


_RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))


class Spare:
    """One idle supervisor: its pid, our ends of its pipes and socket, and what it
    was started with."""

    def __init__(
        self,
        argv: tuple[str, ...],
        pid: int,
        fds: tuple[int, int],
        status_r: int,
        request: socket.socket,
        state: tuple[object, ...],
    ) -> None:
        self.argv = argv
        self.pid = pid
        self.fds = fds
        self.status_r = status_r
        self.request = request
        self.state = state
        self.owner = (os.getpid(), threading.get_ident())

    @property
    def request_w(self) -> int:
        """Our end of the request socket (its descriptor)."""
        return self.request.fileno()

    @classmethod
    def start(cls, argv: Sequence[str]) -> Spare:
        """Spawn ``argv`` (``Hardening.spare_argv``) as ``spawn_child`` spawns a call."""
        state = process_state()
        opened: list[int] = []
        try:
            for _ in range(3):
                opened.extend(os.pipe2(os.O_CLOEXEC))
            # The request goes over a socket, not a pipe: another process of the
            # user could open a pipe through /proc/<gate>/fd and write a request
            # of its own ahead of the gate's; a socket cannot be opened that way.
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            opened += (theirs.detach(), ours.detach())  # close-on-exec, as every fd here
            for index, fd in enumerate(opened):
                opened[index] = above(fd, _REQUEST_FD)
            out_r, out_w, err_r, err_w, status_r, status_w, request_r, request_w = opened
            pid = os.posix_spawn(
                argv[0],
                list(argv),
                # Its own, naming what it is: the command's comes with its request.
                # Never empty: an empty environ reads as a process caught mid-exec
                # (``_procfs.carries``), which would hold every other call's end.
                dict(_SPARE_ENV),
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDWR, 0),
                    (os.POSIX_SPAWN_DUP2, out_w, 1),
                    (os.POSIX_SPAWN_DUP2, err_w, 2),
                    (os.POSIX_SPAWN_DUP2, status_w, _STATUS_FD),
                    (os.POSIX_SPAWN_DUP2, request_r, _REQUEST_FD),
                ],
                setsid=True,
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
                setsigmask=(),
            )
        except BaseException:
            for fd in opened:
                os.close(fd)
            raise
        for fd in (out_w, err_w, status_w, request_r):
            os.close(fd)
        ours_end = socket.socket(fileno=request_w)
        spare = cls(tuple(argv), pid, (out_r, err_r), status_r, ours_end, state)
        try:
            spare.request.setblocking(False)
            os.set_blocking(status_r, False)
            prepare_output(out_r)
            prepare_output(err_r)
        except BaseException:
            spare.discard()
            raise
        IDLE_SPARES.add(pid)
        return spare

    def hand(self, request: bytes) -> Child | None:
        """Give the spare its call; the call's :class:`Child`, or None (spawn afresh).

        None means nothing of the call runs: the spare was dead already, or the
        request did not fit in one write, and a request cut short lacks its end
        mark, which the spare refuses (exit 126) before anything runs.
        """
        IDLE_SPARES.discard(self.pid)  # a call's from here on
        try:
            # MSG_NOSIGNAL: a spare that died idle is EPIPE here, never a SIGPIPE
            # that would end a host that gave SIGPIPE its default action.
            written = self.request.send(request, socket.MSG_NOSIGNAL)
        except OSError:  # EPIPE: it died idle; EAGAIN: a buffer too small for any of it
            written = -1
        if written != len(request):
            self.discard()
            return None
        self._end_request()
        return Child(self.pid, self.fds, None, self.status_r, prepared=True)

    def _end_request(self) -> None:
        """The request's EOF for the spare, even where a fork of the gate holds a
        copy of our end (closing ours alone would not end it then)."""
        with contextlib.suppress(OSError):
            self.request.shutdown(socket.SHUT_WR)
        self.request.close()

    def discard(self) -> None:
        """Let the spare go: its request's EOF ends it (exit 0, its waiting command
        first), and a SIGKILL to its group makes sure; reap both and close our ends.

        The EOF comes first: a host that has dropped its privileges since the
        spare started may no longer signal it, and then the EOF alone ends it.
        """
        IDLE_SPARES.discard(self.pid)
        self._end_request()
        if self.owner[0] == os.getpid():  # a forked gate's copy is not its parent
            Child(self.pid, self.fds, None).kill()
        for fd in (*self.fds, self.status_r):
            with contextlib.suppress(OSError):
                os.close(fd)


class Spares:
    """An executor's idle supervisor: at most one, for the next call its argv fits."""

    def __init__(self) -> None:
        self._idle: Spare | None = None
        self._wanted: tuple[str, ...] | None = None
        self._closed = False

    def take(self, argv: Sequence[str], request: bytes) -> Child | None:
        """The idle spare started with ``argv``, given ``request``; None: spawn afresh."""
        spare, self._idle = self._idle, None
        if spare is None:
            return None
        if (
            spare.argv != tuple(argv)
            or spare.owner != (os.getpid(), threading.get_ident())
            or spare.state != process_state()
        ):
            # Other limits (a reload), another thread, a forked gate, or a host
            # that changed its credentials, limits or scheduling since (say, it
            # dropped root): the spare would run the call as the gate was then.
            spare.discard()
            return None
        return spare.hand(request)

    def refill_soon(self, argv: Sequence[str]) -> None:
        """Start a spare for ``argv`` on the loop's next turn, if none is idle then."""
        if self._closed:
            return
        self._wanted = tuple(argv)
        asyncio.get_running_loop().call_soon(self._refill)

    def _refill(self) -> None:
        argv = self._wanted
        if self._closed or argv is None or self._idle is not None:
            return
        try:
            self._idle = Spare.start(argv)
        except OSError as exc:  # EMFILE, EAGAIN: calls spawn afresh meanwhile
            log.debug("no spare supervisor: %s", exc)

    def close(self) -> None:
        """Kill the idle spare; start none any more."""
        self._closed = True
        spare, self._idle = self._idle, None
        if spare is not None:
            spare.discard()

    @property
    def idle(self) -> Spare | None:
        """The spare waiting for the next call, if any."""
        return self._idle
