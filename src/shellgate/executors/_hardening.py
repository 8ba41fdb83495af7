"""Child-side hardening in the argv, and the gate-side part (subreaper).

The settings every command gets — parent-death signal, ``no_new_privs``, hard and
soft rlimits, an empty capability bounding set under root, a cgroup to join —
are applied by the static ``sg-exec`` helper (``_helper/sg-exec.c``) in front of
the command, because a ``preexec_fn`` would cost CPython its vfork fast path
(0.7 ms -> 2.5-3 ms a spawn, far worse with a large parent). Without the helper
(no C compiler at install), ``setpriv`` + ``prlimit`` from util-linux do the same
at about 1 ms more per call. python-prctl does what belongs in the gate process
itself: making it a child subreaper.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shellgate.config import Limits
from shellgate.executors._helper_lookup import locate_helper
from shellgate.executors._spawn import SUPERVISOR_FD
from shellgate.executors._which import find_program

HELPER: Path = locate_helper()  # next to this module, or an editable install's
log = logging.getLogger("shellgate.executors")

_subreaper_pid: int | None = None


def ensure_subreaper() -> None:
    """Make this process a child subreaper (idempotent; once per process)."""
    global _subreaper_pid
    if _subreaper_pid == os.getpid():
        return
    import prctl  # python-prctl: work that belongs in the gate process itself

    prctl.set_child_subreaper(1)
    unignore_internal_signals()
    _subreaper_pid = os.getpid()


#: rt_sigaction's number where the kernel's sigaction starts with the handler.
_RT_SIGACTION = {"x86_64": 13, "aarch64": 134, "riscv64": 134, "loongarch64": 134}
_SIG_IGN = 1


def unignore_internal_signals() -> list[int]:
    """Give glibc's internal signals 32 and 33 their default disposition in this
    process if they are ignored; returns the ones changed.

    glibc's ``posix_spawn`` (GNU make 4.3 starts its recipes with it) leaves
    them ignored in the child, ignored signals stay ignored across exec, and so
    this process would hand that on to every command it spawns with ``Popen``
    (``sg-exec`` resets them itself). Python's ``signal`` module and glibc's
    ``sigaction`` refuse these two numbers, so the system call is made directly.
    glibc installs its own handlers before it ever sends them.
    """
    import ctypes
    import platform

    number = _RT_SIGACTION.get(platform.machine())
    if number is None or sys.maxsize <= 2**32:  # pragma: no cover - other ABIs: as inherited
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    buffer = ctypes.POINTER(ctypes.c_ulong)
    syscall.argtypes = [ctypes.c_long, ctypes.c_long, buffer, buffer, ctypes.c_long]
    changed = []
    for sig in (32, 33):
        old = (ctypes.c_ulong * 8)()
        if syscall(number, sig, None, old, 8) != 0 or old[0] != _SIG_IGN:
            continue
        default = (ctypes.c_ulong * 8)()  # all zero: SIG_DFL, no flags, empty mask
        if syscall(number, sig, default, None, 8) == 0:
            changed.append(sig)
    return changed


def _trusted_helper() -> str | None:
    """The sg-exec helper, if it is present and nobody but us/root could swap it."""
    try:
        st = HELPER.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or not os.access(HELPER, os.X_OK):
        return None
    if st.st_uid not in (0, os.getuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return str(HELPER)


_probed: dict[tuple[str, int, int], str | None] = {}


def _helper_features(helper: str) -> str | None:
    """What this helper binary can do here: "spare", "subreaper", "full", "basic" or None.

    "spare": it can also wait, started ahead of its call, for that call's
    workdir, command and environment on a socket (``--request``, see ``_spare``);
    "subreaper": it can also stay as the call's supervisor (``--subreaper``);
    "full": it enters the workdir and closes descriptors (``--chdir``,
    ``--close-fds``); "basic": only the hardening; None: it cannot run at all.
    Run once per binary and process: a helper left from an older build (an
    editable install whose extension was not rebuilt) lacks the newer options; a
    wrong-architecture one cannot run at all. Either way every command would
    fail with exit 126, so the gate finds out up front.
    """
    st = os.stat(helper)
    key = (helper, st.st_mtime_ns, st.st_size)
    if key in _probed:
        return _probed[key]
    base = [str(os.getpid()), "0", "0", "0", "0", "0", "0", "--", "/bin/sh", "-c", "exit 0"]
    found: str | None = None
    status_r, status_w = os.pipe()
    request_r, request_w = os.pipe()
    os.close(request_w)  # no request: a spare that gets none exits 0
    enter = ["--chdir", "/", "--close-fds"]
    spare = ["--close-fds", "--subreaper", str(status_w), "--request", str(request_r)]
    levels: tuple[tuple[str, list[str]], ...] = (
        ("spare", [*spare, *base[:8]]),  # no program: the request names it
        ("subreaper", [*enter, "--subreaper", str(status_w), *base]),
        ("full", [*enter, *base]),
        ("basic", base),
    )
    try:
        for features, tail in levels:
            try:
                done = subprocess.run(
                    [helper, *tail],
                    capture_output=True,
                    timeout=10,
                    check=False,
                    pass_fds=(status_w, request_r),
                )
            except (OSError, subprocess.TimeoutExpired):
                break
            if done.returncode == 0:
                found = features
                break
    finally:
        for fd in (status_r, status_w, request_r):
            os.close(fd)
    if found not in ("spare", "subreaper"):
        # Without the supervisor, what a call leaves would outlive a killed gate.
        log.warning("the sg-exec helper %s is %s; rebuild it (pip install -e .)", helper,
                    "out of date" if found else "unusable")  # fmt: skip
    _probed[key] = found
    return found


@dataclass(frozen=True)
class Hardening:
    """How child-side settings get into the argv on this host."""

    prefix_kind: str  # "sg-exec" | "setpriv"
    helper: str | None
    setpriv: str | None
    prlimit: str | None
    helper_enters: bool = True  # the helper has --chdir and --close-fds
    helper_subreaps: bool = True  # ... and --subreaper
    helper_spares: bool = True  # ... and --request

    @classmethod
    def detect(cls, untrusted: Sequence[str] = ()) -> Hardening:
        """``untrusted``: roots a sandboxed call can write; setpriv and prlimit are
        never taken from there (``_which``)."""
        helper = _trusted_helper()
        features = _helper_features(helper) if helper is not None else None
        if helper is not None and features is not None:
            return cls(
                "sg-exec",
                helper,
                None,
                None,
                helper_enters=features in ("spare", "subreaper", "full"),
                helper_subreaps=features in ("spare", "subreaper"),
                helper_spares=features == "spare",
            )
        setpriv, prlimit = find_program("setpriv", untrusted), find_program("prlimit", untrusted)
        if setpriv is None or prlimit is None:
            from shellgate.errors import ExecutionError

            raise ExecutionError(
                "cannot harden commands: neither the sg-exec helper nor setpriv + prlimit "
                "(util-linux) are available"
            )
        return cls("setpriv", None, setpriv, prlimit)

    @property
    def enters_workdir(self) -> bool:
        """Whether :meth:`prefix` can enter the workdir and close inherited fds."""
        return self.helper is not None and self.helper_enters

    @property
    def supervises(self) -> bool:
        """Whether :meth:`prefix` can keep a supervisor for the call (``status_fd``).

        The supervisor is what makes every process of a call die with the gate,
        however the gate dies; the setpriv fallback has none (docs/tools.md).
        """
        return self.enters_workdir and self.helper_subreaps

    @property
    def spares(self) -> bool:
        """Whether :meth:`spare_argv` can start a supervisor ahead of its call."""
        return self.supervises and self.helper_spares

    def spare_argv(self, limits: Limits, *, drop_caps: bool) -> list[str]:
        """A supervisor started ahead of its call (``sg-exec --request``).

        Everything :meth:`prefix` with a workdir and a status descriptor does,
        but the workdir, the command and its environment come later, on the
        request socket at ``status fd + 1`` (:mod:`shellgate.executors._spare`).
        """
        assert self.spares, "this helper cannot wait for a call"
        return self.prefix(
            limits, drop_caps=drop_caps, status_fd=SUPERVISOR_FD, request_fd=SUPERVISOR_FD + 1
        )

    def prefix(
        self,
        limits: Limits,
        *,
        drop_caps: bool,
        cgroup_procs: str | None = None,
        workdir: str | None = None,
        status_fd: int | None = None,
        request_fd: int | None = None,
    ) -> list[str]:
        """argv prefix that applies pdeathsig, no_new_privs, rlimits (and caps).

        ``cgroup_procs``: join that cgroup before anything else (and so before any
        descendant can be forked outside it). ``workdir`` (only where
        :attr:`enters_workdir`): enter it and close every descriptor above stderr,
        so the spawn itself needs neither. ``status_fd`` (only where
        :attr:`supervises`): stay as the call's supervisor, reporting there.
        ``request_fd`` (only with ``status_fd`` and no ``workdir``, where
        :attr:`spares`): start ahead of the call, closing every other descriptor,
        and take its workdir and command from there (:meth:`spare_argv`).
        """
        nums = _limit_numbers(limits)
        if self.helper is not None:
            join = ["--cgroup", cgroup_procs] if cgroup_procs is not None else []
            enter = ["--chdir", workdir, "--close-fds"] if workdir is not None else []
            supervise = ["--subreaper", str(status_fd)] if status_fd is not None else []
            assert status_fd is None or self.supervises, "this helper cannot supervise"
            if request_fd is not None:
                assert status_fd is not None, "a spare is its call's supervisor"
                assert workdir is None, "a spare's workdir comes with its request"
                assert self.spares, "this helper cannot wait for a call"
                enter = ["--close-fds"]
                supervise += ["--request", str(request_fd)]
            return [
                self.helper,
                *join,
                *enter,
                *supervise,
                str(os.getpid()),
                *map(str, nums),
                "1" if drop_caps else "0",
                "--",
            ]
        assert self.setpriv is not None
        assert self.prlimit is not None
        assert workdir is None, "setpriv cannot enter a workdir; check enters_workdir"
        assert status_fd is None, "setpriv cannot supervise; check supervises"
        assert request_fd is None, "setpriv cannot wait for a call; check spares"
        caps = ["--bounding-set", "-all", "--inh-caps", "-all", "--ambient-caps", "-all"]
        trampoline = (
            ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', cgroup_procs]
            if cgroup_procs is not None
            else []
        )
        return [
            *trampoline,
            self.setpriv,
            "--pdeathsig",
            "KILL",
            "--no-new-privs",
            *(caps if drop_caps else []),
            "--",
            self.prlimit,
            f"--nofile={nums[0]}",
            f"--nproc={nums[1]}",
            f"--cpu={nums[2]}",
            f"--fsize={nums[3]}",
            f"--as={nums[4]}",
            "--",
        ]


def _limit_numbers(limits: Limits) -> list[int]:
    """The helper's NOFILE NPROC CPU FSIZE AS, in its argv's order."""
    return [
        limits.open_files,
        limits.processes,
        limits.cpu_seconds,
        limits.file_size_bytes,
        limits.address_space_bytes,
    ]
