"""Escape attempts against the network, host processes and the kernel.

Each network attempt has a positive control with ``sandbox.network`` (or without
seccomp) on, so a listener that "received nothing" is known to be able to receive.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import pids_with_arg, unique_seconds, wait_until
from tests.sandbox.conftest import Box

pytestmark = pytest.mark.bwrap


@pytest.fixture(params=["deployment", "decision"])
def via(request: pytest.FixtureRequest) -> str:
    """Every escape attempt, against a bwrap deployment and against the executor a
    local deployment runs the calls its policy sandboxes on."""
    return str(request.param)


@pytest.fixture
def tcp() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def received(server: socket.socket) -> bool:
    try:
        server.recv(64)
    except BlockingIOError:
        return False
    return True


CONNECT = (
    "python3 -c 'import socket,sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 2)' {port}; "
    "echo hi > /dev/tcp/127.0.0.1/{port}"
)
SEND_UDP = (
    "python3 -c 'import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
    ".sendto(b\"x\", (\"127.0.0.1\", int(sys.argv[1])))' {port}; echo hi > /dev/udp/127.0.0.1/{port}"
)


async def test_tcp_to_host_loopback_is_cut(box: Box, tcp: socket.socket) -> None:
    result = await box.run(CONNECT.format(port=tcp.getsockname()[1]))
    assert result.exit_code != 0
    assert not accepted(tcp)


async def test_tcp_control_with_network_on(box: Box, tcp: socket.socket) -> None:
    await box.executor(sandbox={"network": True})
    await box.run(CONNECT.format(port=tcp.getsockname()[1]))
    assert wait_until(lambda: accepted(tcp), 5)


async def test_udp_to_host_loopback_is_cut(box: Box, udp: socket.socket) -> None:
    await box.run(SEND_UDP.format(port=udp.getsockname()[1]))
    assert not received(udp)


async def test_udp_control_with_network_on(box: Box, udp: socket.socket) -> None:
    await box.executor(sandbox={"network": True})
    await box.run(SEND_UDP.format(port=udp.getsockname()[1]))
    assert wait_until(lambda: received(udp), 5)


async def test_dns_does_not_resolve(box: Box) -> None:
    result = await box.run("getent hosts example.com || python3 -c 'import socket; socket.getaddrinfo(\"example.com\", 80)'")
    assert result.exit_code != 0
    assert "example.com" not in result.stdout.text


@pytest.fixture
def unix_server(outside: Path) -> Iterator[tuple[socket.socket, Path]]:
    path = outside / "daemon.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    yield server, path
    server.close()


UNIX_CONNECT = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' {path}"


async def test_host_unix_socket_is_unreachable(box: Box, unix_server: tuple[socket.socket, Path]) -> None:
    server, path = unix_server
    result = await box.run(UNIX_CONNECT.format(path=path))
    assert "Operation not permitted" in result.stderr.text
    assert not accepted(server)


async def test_unix_socket_control_without_seccomp(box: Box, unix_server: tuple[socket.socket, Path]) -> None:
    # Shows why the filter exists: a read-only bind alone does not stop connect().
    server, path = unix_server
    await box.executor(sandbox={"seccomp": False})
    await box.run(UNIX_CONNECT.format(path=path))
    assert wait_until(lambda: accepted(server), 5)


async def test_host_process_cannot_be_signalled_or_seen(box: Box) -> None:
    victim = subprocess.Popen(["sleep", "30"])
    try:
        result = await box.run(f"kill -9 {victim.pid}; test -e /proc/{victim.pid} && echo seen; ls /proc | grep -c '^[0-9]'")
        assert victim.poll() is None
        assert "seen" not in result.stdout.text
        assert int(result.stdout.text.split()[-1]) < 10  # only the sandbox's own processes
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("command", ["unshare -U true", "unshare -m true", "unshare -Ur true", "unshare -n true"])
async def test_no_new_namespaces(box: Box, command: str) -> None:
    result = await box.run(command)
    assert result.exit_code != 0


async def test_setsid_nohup_child_does_not_outlive_the_call(box: Box) -> None:
    marker = unique_seconds(1000)
    await box.run(f"setsid nohup sleep {marker} >/dev/null 2>&1 & disown; sleep 0.2; echo started")
    assert wait_until(lambda: not pids_with_arg(marker), 5)


SYSCALLS = r"""python3 - <<'PY'
import ctypes, errno, fcntl, os, pty, socket, termios
libc = ctypes.CDLL(None, use_errno=True)
def err(fn):
    try:
        r = fn()
    except OSError as e:
        return errno.errorcode[e.errno]
    return "ok" if r is None or r >= 0 else errno.errorcode[ctypes.get_errno()]
m, s = pty.openpty()
print("tiocsti", err(lambda: fcntl.ioctl(s, termios.TIOCSTI, b"x")))
print("af_unix", err(lambda: socket.socketpair()))
print("ptrace", err(lambda: libc.ptrace(0, 0, 0, 0)))
print("personality", err(lambda: libc.personality(0x0040000)))
print("clone3", err(lambda: libc.syscall(435, 0, 0)))
print("io_uring", err(lambda: libc.syscall(425, 1, 0)))
print("keyctl", err(lambda: libc.syscall(250, 0, 0)))
print("userns", err(lambda: libc.unshare(0x10000000)))
def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print("fork", err(fork))
PY"""


async def test_seccomp_answers_with_errnos_not_kills(box: Box) -> None:
    result = await box.run(SYSCALLS)
    got = dict(line.split() for line in result.stdout.text.splitlines())
    assert got == {
        "tiocsti": "EPERM", "af_unix": "EPERM", "ptrace": "EPERM", "personality": "EPERM",
        "clone3": "ENOSYS", "io_uring": "EPERM", "keyctl": "EPERM", "userns": "EPERM", "fork": "ok",
    }  # fmt: skip


async def test_fork_bomb_is_bounded_by_the_process_limit(box: Box) -> None:
    await box.executor(executor={"limits": {"processes": 48}})
    result = await box.run(
        "python3 -c '\nimport os, time\nn = 0\ntry:\n    while n < 500:\n"
        "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\n"
        "except OSError as e:\n    print(\"stopped\", n)\n'",
        timeout_ms=8000,
    )
    words = result.stdout.text.split()
    assert words[0] == "stopped"
    assert int(words[1]) < 48


async def test_bash_fork_bomb_ends_with_the_call(box: Box) -> None:
    await box.executor(executor={"limits": {"processes": 48}})
    mark = unique_seconds(1)
    result = await box.run(f":(){{ :|:& }};:; sleep {mark}", timeout_ms=1500)
    assert result.timed_out or result.exit_code is not None
    assert wait_until(lambda: not pids_with_arg(mark), 5)
