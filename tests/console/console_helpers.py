"""A real ``shellgate serve`` process on a free loopback port, and an httpx client for it.

The server listens on ``127.0.0.1:0`` and announces its URL on stderr, which
:class:`ConsoleProcess` waits for (a deadline, no sleep).
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
from pathlib import Path

import httpx

from shellgate.policy.loader import SHIPPED_MODEL
from tests.serverproc import ServerProcess

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
p, agent, *, write:**, allow
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


class ConsoleProcess(ServerProcess):
    """``shellgate serve --listen 127.0.0.1:0`` as a subprocess; :attr:`url` once it listens."""

    what = "the console"

    def __init__(self, config: Path, *args: str) -> None:
        argv = serve_argv(config, "--listen", "127.0.0.1:0", "--log-level", "DEBUG", *args)
        super().__init__(argv, config.with_name("console-stderr.log"), ANNOUNCED)

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
