"""A shellgate server as a subprocess (``shellgate mcp --http``, ``shellgate serve``):
started on a free loopback port, its URL read from the line it announces on stderr."""

from __future__ import annotations

import contextlib
import re
import subprocess
import time
from pathlib import Path
from typing import Self

from tests.mcp.mcp_helpers import server_env


class ServerProcess:
    """``argv`` as a subprocess, stderr in ``log``; :attr:`url` once ``announced`` matches."""

    what = "the server"

    def __init__(
        self, argv: list[str], log: Path, announced: re.Pattern[str], cwd: Path | None = None
    ) -> None:
        self.stderr_path = log
        self._announced = announced
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env=server_env(),
            cwd=cwd,
        )
        try:
            self.url = self._wait_for_url()
        except BaseException:
            self.close()
            raise

    def _wait_for_url(self, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self._announced.search(self.stderr())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.what} exited {self.proc.returncode}: {self.stderr()}")
            time.sleep(0.02)
        raise AssertionError(f"{self.what} never announced its address: {self.stderr()}")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, and the exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=timeout_s)

    def close(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.stop()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
