"""The bwrap executor's seccomp filter, built with libseccomp (``pyseccomp``).

The filter allows everything by default and answers a short deny list with an
errno (never a kill, so a denied program sees an ordinary error and the
sandbox's denial signature reaches stderr):

* new ``AF_UNIX`` sockets (``socket``/``socketpair`` with domain ``AF_UNIX``) —
  a read-only bind does not stop ``connect()`` to a host daemon's socket (the
  docker socket is host root), so the socket itself must not be creatable;
* ``io_uring_*`` (a second syscall surface that seccomp cannot see into);
* ``ptrace``, ``process_vm_readv``/``writev``;
* namespaces and mounts: ``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*``
  flag, ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API
  (``open_tree``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``,
  ``mount_setattr``);
* kernel attack surface the sandbox never needs: ``keyctl``/``add_key``/
  ``request_key``, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``kexec_*``,
  ``init_module``/``finit_module``/``delete_module``, ``open_by_handle_at``;
* terminal injection: ``ioctl`` ``TIOCSTI`` and ``TIOCLINUX``;
* ``personality`` with anything but ``PER_LINUX`` (as flatpak does; this also
  refuses the ``0xffffffff`` query);
* ``clone3`` answers ``ENOSYS``: its flags live in memory seccomp cannot read, and
  ``ENOSYS`` makes libc fall back to ``clone``, whose flags it can.

Invariants:

* Only the native architecture is in the filter; a syscall made through another
  ABI (i386 ``int 0x80``, x32) hits libseccomp's bad-arch action, which kills —
  otherwise the compat syscall table would walk around every rule above.
* 32-bit arguments (socket domain, ioctl request, personality) are compared on
  their low 32 bits only, so garbage in the upper half cannot dodge a rule.
* Any failure to build raises :class:`SeccompError`; a partial filter is never
  returned.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from typing import Any

_AF_UNIX = 1
_LOW32 = 0xFFFF_FFFF
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_CLONE_NEW_FLAGS = (
    0x0000_0080,  # CLONE_NEWTIME
    0x0002_0000,  # CLONE_NEWNS
    0x0200_0000,  # CLONE_NEWCGROUP
    0x0400_0000,  # CLONE_NEWUTS
    0x0800_0000,  # CLONE_NEWIPC
    0x1000_0000,  # CLONE_NEWUSER
    0x2000_0000,  # CLONE_NEWPID
    0x4000_0000,  # CLONE_NEWNET
)

#: Denied outright with EPERM, whatever the arguments.
DENIED_SYSCALLS: tuple[str, ...] = (
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "ptrace", "process_vm_readv", "process_vm_writev",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at",
)  # fmt: skip

#: Architectures whose ``clone`` takes its flags in the first argument.
_CLONE_FLAGS_FIRST = {"x86_64", "aarch64", "riscv64", "ppc64le", "ppc64", "mips64"}


class SeccompError(Exception):
    """The filter cannot be built on this host (reason in the message)."""


class _Fd:
    """The file-like object libseccomp's exporter wants: just ``fileno()``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd


def build_filter() -> bytes:
    """Compile the filter to a BPF program (bytes, ready for ``bwrap --seccomp``)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so itself is missing
        raise SeccompError(f"libseccomp is not usable: {exc}") from exc
    try:
        arch = os.uname().machine
        filt = seccomp.SyscallFilter(seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        _deny_all(filt, eperm, DENIED_SYSCALLS)
        for name in ("socket", "socketpair"):
            filt.add_rule(eperm, name, seccomp.Arg(0, seccomp.MASKED_EQ, _LOW32, _AF_UNIX))
        for request in (_TIOCSTI, _TIOCLINUX):
            filt.add_rule(eperm, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, _LOW32, request))
        if arch not in _CLONE_FLAGS_FIRST:
            raise SeccompError(f"clone's flag argument is not known for architecture {arch}")
        for flag in _CLONE_NEW_FLAGS:
            filt.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        filt.add_rule(eperm, "personality", seccomp.Arg(0, seccomp.NE, 0))
        filt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        return _export(filt)
    except OSError as exc:
        raise SeccompError(f"libseccomp refused the filter: {exc}") from exc


def _deny_all(filt: Any, action: int, names: Iterable[str]) -> None:
    for name in names:
        try:
            filt.add_rule(action, name)
        except OSError as exc:
            raise SeccompError(f"libseccomp does not know syscall {name}: {exc}") from exc


def _export(filt: Any) -> bytes:
    fd = os.memfd_create("shellgate-seccomp-build", os.MFD_CLOEXEC)
    try:
        filt.export_bpf(_Fd(fd))
        size = os.lseek(fd, 0, os.SEEK_END)
        os.lseek(fd, 0, os.SEEK_SET)
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if not data or len(data) % 8:  # a BPF program is a whole number of 8-byte insns
        raise SeccompError("libseccomp exported an empty or malformed program")
    return data


def filter_fd(program: bytes) -> int:
    """A fresh fd holding ``program`` at offset 0, for one ``bwrap --seccomp FD``.

    bwrap reads the fd to EOF, so every call needs its own; the caller closes it
    after the spawn (``SpawnPlan.cleanup``). The fd is close-on-exec here;
    ``pass_fds`` makes it inheritable in the child only.
    """
    fd = os.memfd_create("shellgate-seccomp", os.MFD_CLOEXEC)
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
