"""The ``sg-exec`` hardening helper on its own: options, failures, the fd fallback.

The gate spawns the local executor's commands with ``posix_spawn``, which has no
working directory and no ``close_fds`` of its own, so the helper does both; these
tests run the built helper directly (the contract suite covers it through the gate).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shellgate.approval import AllowApprover
from shellgate.executors import _hardening
from shellgate.gate import Gate
from tests.conftest import make_config

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


#: Run argv[3:] with close_range failing with errno argv[1] (ENOSYS: kernels
#: before 5.9; EPERM: container seccomp profiles older than close_range), an
#: inheritable descriptor at argv[2] and the soft open-files limit below it.
#: The filter is kept across the exec (no preexec_fn needed).
WITHOUT_CLOSE_RANGE = [
    sys.executable,
    "-c",
    "import os, resource, sys, pyseccomp as s\n"
    "fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, int(sys.argv[2])); os.close(fd)\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
    "f = s.SyscallFilter(s.ALLOW); f.add_rule(s.ERRNO(int(sys.argv[1])), 'close_range'); f.load()\n"
    "os.execv(sys.argv[3], sys.argv[3:])",
]
HIGH_FD = 200  # above the soft limit set there, as a host with many sockets may hold


@pytest.mark.parametrize("error", [errno.ENOSYS, errno.EPERM], ids=["ENOSYS", "EPERM"])
def test_close_fds_falls_back_when_close_range_fails(error: int, helper_binary: Path) -> None:
    # First, that the filter really takes close_range away (436 on every 64-bit arch).
    check = "import ctypes; c = ctypes.CDLL(None, use_errno=True); " \
        "print(c.syscall(436, 1000, 1000, 0), ctypes.get_errno())"
    wrap = [*WITHOUT_CLOSE_RANGE, str(error), str(HIGH_FD)]
    probed = run([*wrap, sys.executable, "-c", check])
    assert probed.stdout == f"-1 {error}\n"
    probe = f"[ -e /proc/self/fd/{HIGH_FD} ] && echo open || echo closed"
    argv = helper(script=probe)
    kept = run([*wrap, str(helper_binary), *argv[1:]])
    assert kept.stdout == "open\n"  # the probe can tell: without the option it leaks
    argv = helper("--close-fds", script=probe)
    done = run([*wrap, str(helper_binary), *argv[1:]])
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


OLD_HELPER = """#!/bin/sh
# An sg-exec from before --chdir/--close-fds: those are usage errors (exit 126).
case "$1" in --*) echo "usage: sg-exec PPID NOFILE NPROC CPU FSIZE AS DROPCAPS --" >&2; exit 126;; esac
shift 8
exec "$@"
"""


async def test_an_out_of_date_helper_is_found_and_worked_around(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A stale helper (editable install, extension not rebuilt) would fail every
    call with exit 126 if used with the new options: the gate probes it once and
    spawns with a working directory of its own instead."""
    old = tmp_path / "sg-exec"
    old.write_text(OLD_HELPER)
    old.chmod(0o755)
    monkeypatch.setattr(_hardening, "HELPER", old)
    assert _hardening._helper_features(str(old)) == "basic"
    assert "out of date" in caplog.text
    hardening = _hardening.Hardening.detect()
    assert (hardening.helper, hardening.enters_workdir) == (str(old), False)
    gate = Gate(make_config(tmp_path), approver=AllowApprover())
    await gate.open()
    try:
        result = await gate.call("bash", {"command": "pwd", "description": "where"})
    finally:
        await gate.aclose()
    assert result.text == f"{os.path.realpath(tmp_path / 'ws')}\n"


def test_an_unusable_helper_falls_back_to_setpriv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "sg-exec"
    broken.write_text("#!/bin/sh\nexit 126\n")
    broken.chmod(0o755)
    monkeypatch.setattr(_hardening, "HELPER", broken)
    if shutil.which("setpriv") is None or shutil.which("prlimit") is None:
        pytest.skip("needs setpriv and prlimit")
    assert _hardening.Hardening.detect().prefix_kind == "setpriv"


_INHERITS_IGNORED = """
import subprocess
from shellgate.executors import _hardening
def ignored():
    out = subprocess.run(["grep", "SigIgn", "/proc/self/status"], capture_output=True, text=True)
    return out.stdout.split()[1]
print(ignored())
_hardening.ensure_subreaper()
print(ignored())
"""


def test_a_gate_started_by_posix_spawn_hands_no_ignored_signal_on(tmp_path: Path) -> None:
    """glibc's posix_spawn (GNU make 4.3 runs recipes with it) leaves signals 32
    and 33 ignored in the child; a gate started that way must not pass that on to
    the commands it spawns with Popen (the setpriv fallback, bwrap)."""
    out_path = tmp_path / "out"
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-c", _INHERITS_IGNORED],
            dict(os.environ),
            file_actions=[(os.POSIX_SPAWN_DUP2, fd, 1)],
        )
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    before, after = out_path.read_text().split()
    assert int(before, 16) & (3 << 31) == 3 << 31  # the premise: both inherited ignored
    assert int(after, 16) & (3 << 31) == 0
