"""``sg-exec --request``: a call's supervisor started ahead of its call, on its own.

The spare does everything a supervisor does before its command exists, forks
that command, which waits hardened for the request (workdir, argv, environment,
then an empty field as the end mark) and execs it. A request that is malformed,
cut short or too long runs nothing (exit 126). Each test runs the installed helper
and the same source built over libc.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from shellgate.executors import _hardening
from shellgate.executors._procfs import children, read_proc, stat_fields
from shellgate.executors._spare import Spare, encode_request
from shellgate.executors._spawn import IDLE_SPARES
from tests.conftest import reap_orphans, wait_until, zombie_children

pytestmark = pytest.mark.skipif(
    _hardening._trusted_helper() is None, reason="the sg-exec helper was not built here"
)


def spare_argv(binary: Path, nofile: int = 0, *extra: str) -> list[str]:
    return [
        str(binary), "--close-fds", "--subreaper", "3", "--request", "4", str(os.getpid()),
        str(nofile), "0", "0", "0", "0", "0", "--", *extra,
    ]  # fmt: skip


def finish(spare: Spare, request: bytes | None) -> tuple[int, bytes, bytes]:
    """Send ``request`` (None: none at all), wait; (exit code, stdout, stderr)."""
    IDLE_SPARES.discard(spare.pid)  # this test's, not a gate's
    spare.request.setblocking(True)
    if request is not None:
        spare.request.sendall(request)  # the spare reads as it comes, however long
    spare.request.shutdown(socket.SHUT_WR)
    spare.request.close()
    _, status = os.waitpid(spare.pid, 0)
    outputs = []
    for fd in spare.fds:
        os.set_blocking(fd, True)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        outputs.append(b"".join(chunks))
        os.close(fd)
    os.close(spare.status_r)
    return os.waitstatus_to_exitcode(status), outputs[0], outputs[1]


def raw(*fields: str) -> bytes:
    return b"".join(field.encode() + b"\0" for field in fields)


def test_a_request_runs_exactly_its_command_in_its_directory(
    helper_binary: Path, tmp_path: Path
) -> None:
    script = 'pwd; printf "%s|" "$@"; echo; env | sort; exit 7'
    request = encode_request(
        str(tmp_path), ["/bin/sh", "-c", script, "sh", "a b", ""], {"A": "1", "B": "x y=z"}
    )
    assert request is not None
    code, out, err = finish(Spare.start(spare_argv(helper_binary)), request)
    assert (code, err) == (7, b"")
    lines = out.decode().splitlines()
    assert lines[:2] == [str(tmp_path), "a b||"]
    # Exactly the request's environment (sh adds PWD itself), nothing of the spare's.
    assert [line for line in lines[2:] if not line.startswith("PWD=")] == ["A=1", "B=x y=z"]


def test_the_waiting_command_is_hardened_ahead_and_holds_none_of_the_pipes(
    helper_binary: Path, tmp_path: Path
) -> None:
    spare = Spare.start(spare_argv(helper_binary, 123))
    # Forked ahead of the call, it waits for the request with the spare's own
    # environment and nothing of the gate's.
    assert wait_until(lambda: len(children(spare.pid)) == 1, 5)
    (waiting,) = children(spare.pid)
    assert read_proc(f"/proc/{spare.pid}/environ") == b"SHELLGATE_SPARE=1\0"
    assert read_proc(f"/proc/{waiting}/environ") == b"SHELLGATE_SPARE=1\0"
    script = "grep -E '^(NoNewPrivs|SigIgn)' /proc/self/status; ulimit -n; ls /proc/self/fd"
    request = encode_request(str(tmp_path), ["/bin/sh", "-c", script], {})
    assert request is not None
    code, out, _ = finish(spare, request)
    assert code == 0
    # 0-2 and the descriptor ls reads the listing through: no status or request pipe.
    assert out.decode() == "SigIgn:\t0000000000000000\nNoNewPrivs:\t1\n123\n0\n1\n2\n3\n"


def test_no_request_at_all_runs_nothing(helper_binary: Path) -> None:
    assert finish(Spare.start(spare_argv(helper_binary)), None) == (0, b"", b"")


def _touching(tmp_path: Path) -> list[str]:
    return ["/bin/sh", "-c", f"touch {tmp_path}/ran"]


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("no end mark", lambda d, cmd: raw(d, "3", *cmd)),
        ("relative directory", lambda d, cmd: raw("ws", "3", *cmd) + b"\0"),
        ("no arguments", lambda d, cmd: raw(d, "0") + b"\0"),
        ("too many arguments", lambda d, cmd: raw(d, "65", *(["x"] * 65)) + b"\0"),
        ("a count that is no number", lambda d, cmd: raw(d, "3x", *cmd) + b"\0"),
        ("fewer arguments than counted", lambda d, cmd: raw(d, "9", *cmd) + b"\0"),
        ("bytes after the end mark", lambda d, cmd: raw(d, "3", *cmd) + b"\0junk\0"),
        ("no NUL at the end", lambda d, cmd: raw(d, "3", *cmd)[:-1]),
        ("over the helper's bound", lambda d, cmd: raw(d, "3", *cmd, "X=" + "y" * 300_000) + b"\0"),
    ],
)
def test_a_malformed_request_runs_nothing(
    helper_binary: Path, tmp_path: Path, name: str, build: object
) -> None:
    assert callable(build)
    request: bytes = build(str(tmp_path), _touching(tmp_path))
    code, _, err = finish(Spare.start(spare_argv(helper_binary)), request)
    assert code == 126, (name, err)
    assert b"shellgate: cannot harden the command (request" in err, err
    assert not (tmp_path / "ran").exists()


def test_every_request_cut_short_runs_nothing(helper_binary: Path, tmp_path: Path) -> None:
    """However the write is cut, the end mark is missing: nothing runs, ever."""
    request = encode_request(str(tmp_path), _touching(tmp_path), {"A": "1", "B": "2"})
    assert request is not None
    for cut in range(1, len(request)):
        code, _, err = finish(Spare.start(spare_argv(helper_binary)), request[:cut])
        assert code == 126, (cut, err)
    assert not (tmp_path / "ran").exists()
    assert finish(Spare.start(spare_argv(helper_binary)), request)[0] == 0
    assert (tmp_path / "ran").exists()


def test_a_stop_before_the_request_ends_the_spare_as_killed(
    helper_binary: Path, tmp_path: Path
) -> None:
    """The group's SIGTERM (a call stopped as it starts) before the command exists."""
    spare = Spare.start(spare_argv(helper_binary))
    assert wait_until(lambda: len(children(spare.pid)) == 1, 5)
    os.killpg(spare.pid, signal.SIGTERM)
    request = encode_request(str(tmp_path), _touching(tmp_path), {})
    assert request is not None
    with contextlib.suppress(BrokenPipeError):  # the waiting command is gone already
        spare.request.send(request, socket.MSG_NOSIGNAL)
    code, _, _ = finish(spare, None)
    assert code == -signal.SIGTERM
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(["--request", "4", "--close-fds"], id="no-subreaper"),
        pytest.param(["--request", "4", "--subreaper", "3"], id="no-close-fds"),
        pytest.param(["--chdir", "/", "--close-fds", "--subreaper", "3", "--request", "4"], id="chdir"),
        pytest.param(["--close-fds", "--subreaper", "3", "--request", "3"], id="same-fd"),
    ],
)
def test_a_spare_needs_its_options(helper_binary: Path, options: list[str]) -> None:
    argv = [str(helper_binary), *options, str(os.getpid()), "0", "0", "0", "0", "0", "0", "--"]
    done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    assert done.returncode == 126, done.stderr


def test_a_program_in_the_argv_is_refused(helper_binary: Path) -> None:
    """The request names the program; one in the argv is a usage error, never run."""
    argv = spare_argv(helper_binary, 0, "/bin/sh", "-c", "echo ran")
    done = subprocess.run(argv, capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 126
    assert done.stdout == b""
    assert b"usage: sg-exec" in done.stderr


def test_an_idle_spare_dies_with_its_gate(helper_binary: Path, tmp_path: Path) -> None:
    """The gate killed while its spare waits: the spare and its waiting command go."""
    host = tmp_path / "host.py"
    host.write_text(
        textwrap.dedent(
            f"""
            import os, sys, time
            from shellgate.executors._procfs import children
            from shellgate.executors._spare import Spare
            from shellgate.executors._hardening import ensure_subreaper
            ensure_subreaper()
            spare = Spare.start([{str(helper_binary)!r}, "--close-fds", "--subreaper", "3",
                                 "--request", "4", str(os.getpid()), "0", "0", "0", "0",
                                 "0", "0", "--"])
            while not children(spare.pid):
                time.sleep(0.001)
            print(spare.pid, *children(spare.pid), flush=True)
            time.sleep(60)
            """
        )
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root}"}
    zombies = zombie_children()
    with subprocess.Popen([sys.executable, str(host)], stdout=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None
        pids = [int(pid) for pid in proc.stdout.readline().split()]
        assert len(pids) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def ended(pid: int) -> bool:
        fields = stat_fields(pid)
        return fields is None or fields[0] == "Z"

    deadline = time.monotonic() + 5
    while not all(ended(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(ended(pid) for pid in pids)
    reap_orphans(zombies)  # orphaned to this process, a subreaper
