"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb + pg_ctl in a temp dir.

Debian's ``postgresql`` package (``make test-system`` installs it) puts its programs in
``/usr/lib/postgresql/<version>/bin``, off PATH. As root they run as the
``postgres`` user (initdb refuses root); as anyone else, as that user. The server
listens on a free loopback port and a socket in its own directory, with ``trust``
authentication for loopback only, and is stopped (``pg_ctl stop -m immediate``)
and removed at the end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class ClusterUnavailable(RuntimeError):
    pass


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    if found:
        return found[0]
    path = shutil.which(name)
    if path:
        return path
    raise ClusterUnavailable(
        f"{name} not found: install Debian's postgresql package (`make test` does)"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Cluster:
    """``with Cluster() as c: c.url("db")``; ``c.create_database()`` for a fresh one."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="sg-pg-"))
        self.data = self.root / "data"
        self._prefix: list[str] = []

    def _run(self, *argv: str) -> None:
        done = subprocess.run(
            [*self._prefix, *argv], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise ClusterUnavailable(f"{argv[0]} failed: {done.stderr.strip() or done.stdout}")

    def start(self) -> Cluster:
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chmod(self.root, 0o755)  # noqa: S103 - postgres must enter it
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._prefix = ["runuser", "-u", "postgres", "--"]
        self._run(_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
        fsync = "on" if self.fsync else "off"
        for attempt in range(5):
            self.port = _free_port()
            options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
                       f"-c fsync={fsync} -c max_connections=200")
            try:
                self._run(_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"),
                          "-o", options, "-w", "-t", "30", "start")
                return self
            except ClusterUnavailable:
                if attempt == 4:
                    log = (self.root / "log").read_text(errors="replace")[-2000:]
                    raise ClusterUnavailable(f"postgres did not start:\n{log}") from None
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = name or f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        with contextlib.suppress(ClusterUnavailable, subprocess.TimeoutExpired):
            if self.port:
                self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
