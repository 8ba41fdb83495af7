"""A real ``shellgate mcp --http`` process, and clients for it (the SDK's, and plain HTTP).

The server listens on ``127.0.0.1:0`` and announces its URL on stderr, which
:class:`HttpServer` waits for (a deadline, no sleep).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession, ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from shellgate.policy.loader import SHIPPED_MODEL
from tests.serverproc import ServerProcess

ALICE = "alice-token-0123456789abcdef0123"  # alice, team-a
BOB = "bob-token-fedcba9876543210fedcba98"  # bob, team-b
TOKENS = f"""
# TOKEN SUBJECT TENANT
{ALICE} alice team-a
{BOB}   bob   team-b
"""
RULES = """
g, alice, agent, *
g, bob, agent, *
p, agent, *, echo *, allow
p, agent, *, sleep *, allow
p, agent, *, touch *, ask, writes files
p, agent, *, write:**, allow
"""
ANNOUNCED = re.compile(r"serving MCP over HTTP at (http://\S+)")


def write_setup(tmp_path: Path, *, tokens: str = TOKENS, extra: str = "") -> Path:
    """A shellgate.toml with its own policy set, workspace, audit log and tokens file."""
    policy = tmp_path / "policy"
    policy.mkdir(exist_ok=True)
    shutil.copy(SHIPPED_MODEL, policy / "model.conf")
    (policy / "policy.csv").write_text(textwrap.dedent(RULES).lstrip(), encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    write_tokens(tmp_path / "tokens", tokens)
    toml = tmp_path / "shellgate.toml"
    toml.write_text(
        textwrap.dedent(
            """
            [executor]
            workspace = "ws"
            grace_ms = 300
            [policy]
            paths = ["policy"]
            default = "ask"
            [approval]
            mode = "deny"
            timeout_ms = 10000
            [audit]
            path = "audit.jsonl"
            [mcp]
            tokens_file = "tokens"
            """
        )
        + textwrap.dedent(extra),
        encoding="utf-8",
    )
    return toml


def write_tokens(path: Path, text: str, mode: int = 0o600) -> None:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    path.chmod(mode)


class HttpServer(ServerProcess):
    """``shellgate mcp --http 127.0.0.1:0`` as a subprocess; :attr:`url` once it listens."""

    def __init__(self, config: Path, *args: str, log_level: str = "DEBUG") -> None:
        argv = [sys.executable, "-m", "shellgate.cli", "mcp", "--config", str(config),
                "--http", "127.0.0.1:0", "--log-level", log_level, *args]  # fmt: skip
        super().__init__(argv, config.with_name("server-stderr.log"), ANNOUNCED)


@asynccontextmanager
async def connect(
    url: str, token: str | None, *, elicitation: ElicitationFnT | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session over Streamable HTTP with ``token`` (legacy handshake)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def post(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A plain POST of an ``initialize`` request: (status, headers, body)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "plain", "version": "0"},
            },
        }
    ).encode()
    request = urllib.request.Request(  # noqa: S310 - a loopback http URL the test started
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def audit_records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
