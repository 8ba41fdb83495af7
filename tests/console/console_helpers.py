"""A real ``shellgate serve`` process on a free loopback port, and an httpx client for it.

The server listens on ``127.0.0.1:0`` and announces its URL on stderr, which
:class:`ConsoleProcess` waits for (a deadline, no sleep).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx

from shellgate.policy.loader import SHIPPED_MODEL
from tests.mcp.mcp_helpers import server_env

ALICE = "alice-console-token-0123456789abcdef"
BOB = "bob-console-token-fedcba9876543210"
TOKENS = f"""
# TOKEN PERSON
{ALICE} alice@example.com
{BOB}   bob
"""
RULES = """
p, agent, *, echo *, allow, echoing is harmless
p, agent, *, touch *, ask, writes files
p, agent, *, rm -rf *, deny, removes a tree
"""
TESTS = "agent, default, allow, echo hi\nagent, default, deny, rm -rf /tmp/x\n"
ANNOUNCED = re.compile(r"console at (http://\S+)/")


def write_tokens(path: Path, text: str = TOKENS, mode: int = 0o600) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    path.chmod(mode)
    return path


def write_setup(tmp_path: Path, *, extra: str = "", audit: str = 'path = "audit.jsonl"') -> Path:
    """A shellgate.toml with its own policy set ("team"), workspace, audit log, tokens file."""
    policy = tmp_path / "team"
    policy.mkdir(exist_ok=True)
    shutil.copy(SHIPPED_MODEL, policy / "model.conf")
    (policy / "policy.csv").write_text(textwrap.dedent(RULES).lstrip(), encoding="utf-8")
    (policy / "tests.csv").write_text(TESTS, encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    write_tokens(tmp_path / "tokens")
    toml = tmp_path / "shellgate.toml"
    toml.write_text(
        textwrap.dedent(
            f"""\
            [executor]
            workspace = "ws"
            [policy]
            paths = ["team"]
            default = "ask"
            [audit]
            {audit}
            [console]
            tokens_file = "tokens"
            """
        )
        + textwrap.dedent(extra),
        encoding="utf-8",
    )
    return toml


def serve_argv(config: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "shellgate.cli", "serve", "--config", str(config), *args]


class ConsoleProcess:
    """``shellgate serve --listen 127.0.0.1:0`` as a subprocess; :attr:`url` once it listens."""

    def __init__(self, config: Path, *args: str) -> None:
        self.stderr_path = config.with_name("console-stderr.log")
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            serve_argv(config, "--listen", "127.0.0.1:0", "--log-level", "DEBUG", *args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env=server_env(),
        )
        try:
            self.url = self._wait_for_url()
        except BaseException:
            self.close()
            raise

    def _wait_for_url(self, timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = ANNOUNCED.search(self.stderr())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"the console exited {self.proc.returncode}: {self.stderr()}")
            time.sleep(0.02)
        raise AssertionError(f"the console never announced its address: {self.stderr()}")

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

    def __enter__(self) -> ConsoleProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def client(self) -> httpx.Client:
        """A client sending the console's own Origin on every request (as its pages do)."""
        return httpx.Client(base_url=self.url, headers={"Origin": self.url}, timeout=30.0)


CSRF = re.compile(r'name="csrf" value="([^"]+)"')
NONCE = re.compile(r'name="nonce" value="([^"]+)"')


def login(client: httpx.Client, token: str = ALICE) -> httpx.Response:
    """Log in through the form; the client keeps the session cookie."""
    page = client.get("/login")
    nonce = NONCE.search(page.text)
    assert nonce, page.text
    return client.post("/login", data={"nonce": nonce.group(1), "token": token})


def csrf_of(client: httpx.Client, path: str = "/playground") -> str:
    page = client.get(path, headers={"Accept": "text/html"})
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)
