"""The ``sg-exec`` hardening helper on its own: options, failures, the fd fallback.

The gate spawns the local executor's commands with ``posix_spawn``, which has no
working directory and no ``close_fds`` of its own, so the helper does both; these
tests run the built helper directly (the contract suite covers it through the gate).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellgate.executors import _hardening

pytestmark = pytest.mark.skipif(
    _hardening._trusted_helper() is None, reason="the sg-exec helper was not built here"
)

NO_LIMITS = ["0", "0", "0", "0", "0", "0"]  # NOFILE NPROC CPU FSIZE AS DROPCAPS


def helper(*options: str, script: str) -> list[str]:
    return [str(_hardening.HELPER), *options, str(os.getpid()), *NO_LIMITS, "--", "/bin/sh", "-c", script]


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=10, **kwargs)  # type: ignore[call-overload,no-any-return]


def test_chdir_enters_the_workdir(tmp_path: Path) -> None:
    done = run(helper("--chdir", str(tmp_path), script="pwd"), cwd="/")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{tmp_path}\n", "")


def test_missing_workdir_stops_before_the_command(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    done = run(helper("--chdir", str(gone), script="echo ran"))
    assert done.returncode == 126
    assert done.stdout == ""
    assert done.stderr == f"shellgate: cannot enter the working directory {gone}: errno 2\n"


def _leaky_fd() -> int:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(fd, True)
    return fd


def test_close_fds_closes_inherited_descriptors() -> None:
    fd = _leaky_fd()
    try:
        probe = f"[ -e /proc/self/fd/{fd} ] && echo open || echo closed"
        kept = run(helper(script=probe), close_fds=False)
        closed = run(helper("--close-fds", script=probe), close_fds=False)
    finally:
        os.close(fd)
    assert kept.stdout == "open\n"  # the probe can tell: without the option it leaks
    assert closed.stdout == "closed\n"


#: Run argv[1:] with close_range answering ENOSYS, as on kernels before 5.9: the
#: seccomp filter is installed, then kept across the exec (no preexec_fn needed).
WITHOUT_CLOSE_RANGE = [
    sys.executable,
    "-c",
    "import errno, os, sys, pyseccomp as s; f = s.SyscallFilter(s.ALLOW); "
    "f.add_rule(s.ERRNO(errno.ENOSYS), 'close_range'); f.load(); os.execv(sys.argv[1], sys.argv[1:])",
]


def test_close_fds_falls_back_without_close_range() -> None:
    # First, that the filter really takes close_range away (436 on every 64-bit arch).
    check = "import ctypes; c = ctypes.CDLL(None, use_errno=True); " \
        "print(c.syscall(436, 1000, 1000, 0), ctypes.get_errno())"
    probed = run([*WITHOUT_CLOSE_RANGE, sys.executable, "-c", check])
    assert probed.stdout == f"-1 {errno.ENOSYS}\n"
    fd = _leaky_fd()
    try:
        probe = f"[ -e /proc/self/fd/{fd} ] && echo open || echo closed"
        done = run([*WITHOUT_CLOSE_RANGE, *helper("--close-fds", script=probe)], close_fds=False)
    finally:
        os.close(fd)
    assert (done.returncode, done.stdout, done.stderr) == (0, "closed\n", "")


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(["--chdir"], id="chdir-without-dir"),
        pytest.param(["--bogus"], id="unknown-option"),
    ],
)
def test_bad_options_are_a_usage_error(options: list[str]) -> None:
    done = run([str(_hardening.HELPER), *options, "--", "/bin/true"])
    assert done.returncode == 126
    assert done.stderr.startswith("usage: sg-exec [--cgroup PROCS] [--chdir DIR] [--close-fds]")


def test_options_combine_in_any_order(tmp_path: Path) -> None:
    fd = _leaky_fd()
    try:
        probe = f"pwd; [ -e /proc/self/fd/{fd} ] && echo open || echo closed"
        done = run(helper("--close-fds", "--chdir", str(tmp_path), script=probe), close_fds=False)
    finally:
        os.close(fd)
    assert done.stdout == f"{tmp_path}\nclosed\n"
