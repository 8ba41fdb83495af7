"""Shared builders for the MCP tests: a real server process, real client, real policy files.

Every test talks to ``python -m shellgate.cli mcp`` over stdio, either through the
official client (``stdio_client`` + ``ClientSession`` for the legacy handshake,
``mcp.Client`` negotiating the modern protocol) or as raw JSON lines
(:class:`RawServer`) when the point is what a misbehaving client sends.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext, ClientSession, ElicitationFnT
from mcp.client.stdio import StdioServerParameters, stdio_client

from shellgate.mcp.ask import APPROVAL_INPUT
from shellgate.policy.loader import SHIPPED_MODEL

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

RULES = """
    p, agent, *, echo *, allow
    p, agent, *, printf *, allow
    p, agent, *, sleep *, allow
    p, agent, *, seq *, allow
    p, agent, *, false, allow
    p, agent, *, cat *, allow
    p, agent, *, touch *, ask, writes files
    p, agent, *, rm *, deny, removes files
    p, agent, *, write:**, allow
"""


def write_config(
    tmp_path: Path,
    *,
    rules: str = RULES,
    approval: str = "deny",
    subject: str = "agent",
    tenant: str = "default",
    executor: str = "",
    extra: str = "",
) -> Path:
    """A shellgate.toml in ``tmp_path`` with its own policy set, workspace and audit log.

    ``executor`` is extra lines for the ``[executor]`` table; ``extra`` more tables.
    """
    policy = tmp_path / "policy"
    policy.mkdir(exist_ok=True)
    shutil.copy(SHIPPED_MODEL, policy / "model.conf")
    (policy / "policy.csv").write_text(textwrap.dedent(rules).lstrip("\n"), encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    toml = tmp_path / "shellgate.toml"
    toml.write_text(
        textwrap.dedent(
            f"""
            [executor]
            workspace = "ws"
            grace_ms = 300
            {executor}
            [policy]
            paths = ["policy"]
            subject = "{subject}"
            tenant = "{tenant}"
            default = "ask"
            [approval]
            mode = "{approval}"
            timeout_ms = 10000
            [audit]
            path = "audit.jsonl"
            """
        )
        + textwrap.dedent(extra),
        encoding="utf-8",
    )
    return toml


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("SHELLGATE_CONFIG", None)
    return env


def server_argv(config: Path) -> list[str]:
    return [sys.executable, "-m", "shellgate.cli", "mcp", "--config", str(config)]


@asynccontextmanager
async def connect(
    config: Path, *, elicitation: ElicitationFnT | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised official-client session with a fresh server process."""
    argv = server_argv(config)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env())
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def connect_modern(
    config: Path, *, elicitation: ElicitationFnT | None = None
) -> AsyncIterator[Client]:
    """The SDK's high-level client on a fresh server process, negotiating as it likes.

    ``mode="auto"`` probes ``server/discover`` and settles on the modern
    (2026-07-28) per-request protocol, which shellgate serves; the test asserts it.
    """
    argv = server_argv(config)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env())
    async with Client(params, mode="auto", elicitation_callback=elicitation) as client:
        yield client


def text_of(result: Any) -> str:
    """The single text block of a CallToolResult."""
    assert len(result.content) == 1
    block = result.content[0]
    assert block.type == "text"
    return str(block.text)


class RawServer:
    """A server process driven by raw lines on stdin, read line by line from stdout."""

    def __init__(self, config: Path, env: dict[str, str] | None = None) -> None:
        self._stderr_path = config.with_name("server-stderr.log")
        # a file, not a pipe: nobody reads stderr while the server runs, and a full
        # pipe would block it; closed in close()
        self._stderr = open(self._stderr_path, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            server_argv(config),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=server_env(env),
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send_line(self, line: bytes | str) -> None:
        data = line.encode() if isinstance(line, str) else line
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message))

    def recv(self, timeout_s: float = 20.0) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout_s)
        assert line is not None, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def response(self, request_id: int, timeout_s: float = 20.0) -> dict[str, Any]:
        """The response to ``request_id`` (skipping notifications and other ids)."""
        deadline = time.monotonic() + timeout_s
        while True:
            message = self.recv(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id:
                return message

    def request(
        self, request_id: int, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(request_id)

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, request_id: int, name: str, arguments: Any) -> dict[str, Any]:
        return self.request(request_id, "tools/call", {"name": name, "arguments": arguments})

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout_s: float = 20.0) -> int:
        return self.proc.wait(timeout=timeout_s)

    def stderr(self) -> str:
        return self._stderr_path.read_text(errors="replace")

    def close(self) -> None:
        """Stop the server as a host would (stdin EOF), kill it only if that fails."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            with suppress(OSError):
                self.proc.stdin.close()
            with suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                with suppress(BrokenPipeError):
                    stream.close()
        self._stderr.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def call_text(response: dict[str, Any]) -> tuple[str, bool]:
    """(text, isError) of a raw tools/call response."""
    result = response["result"]
    content = result["content"]
    assert len(content) == 1
    assert content[0]["type"] == "text"
    return content[0]["text"], bool(result.get("isError", False))


def start_call(server: RawServer, request_id: int, command: str) -> None:
    """Send a foreground bash call without waiting for its answer."""
    server.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": command, "description": "long"}},
        }
    )


def audit_records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- asking the user ----------------------------------------------------------------

ACCEPT: types.InputResponses = {APPROVAL_INPUT: types.ElicitResult(action="accept", content={})}
DECLINE: types.InputResponses = {APPROVAL_INPUT: types.ElicitResult(action="decline")}


class ScriptedUser:
    """An elicitation callback answering from a script, keeping every question."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params)
        action: Any = self.actions.pop(0)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)


def touch(name: str) -> dict[str, str]:
    return {"command": f"touch {name}", "description": f"create {name}"}


async def answer(
    client: Client,
    arguments: dict[str, str],
    asked: types.InputRequiredResult,
    responses: types.InputResponses = ACCEPT,
) -> types.CallToolResult | types.InputRequiredResult:
    """The client's retry of an ``input_required`` bash call, with the user's answer."""
    return await client.session.call_tool(
        "bash",
        arguments,
        input_responses=responses,
        request_state=asked.request_state,
        allow_input_required=True,
    )
