"""[observability] log_format = "json": one object a line, with the call_id of the call."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shellgate.gate import Gate
from shellgate.models import ApprovalAnswer, ApprovalRequest
from shellgate.ops.logs import JsonFormatter, configure_logging
from tests.console.console_helpers import ConsoleProcess
from tests.console.console_helpers import write_setup as write_console_setup
from tests.mcp.mcp_helpers import RawServer, audit_records, call_text, server_env, write_config
from tests.mcp_http.http_helpers import ALICE as HTTP_ALICE
from tests.mcp_http.http_helpers import HttpServer
from tests.mcp_http.http_helpers import connect as connect_http
from tests.mcp_http.http_helpers import write_setup as write_http_setup
from tests.ops.ops_helpers import gate_config

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
JSON_LOGS = """
    [observability]
    log_format = "json"
"""


@pytest.fixture
def root_logging() -> Iterator[None]:
    """Put the root logger back as it was (configure_logging changes the process's)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def lines_of(text: str) -> list[dict[str, Any]]:
    parsed = []
    for line in text.splitlines():
        record = json.loads(line)  # every line is one JSON object, nothing else
        assert isinstance(record, dict)
        parsed.append(record)
    return parsed


def _record(message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            info = sys.exc_info()
    return logging.LogRecord("shellgate.test", logging.ERROR, __file__, 1, message, args, info)


def test_the_fields_of_a_line_outside_any_call() -> None:
    line = json.loads(JsonFormatter().format(_record("hello %s", "world")))
    assert list(line) == ["time", "level", "logger", "message"]
    assert TIME.fullmatch(line["time"])
    assert line["level"] == "ERROR"
    assert line["logger"] == "shellgate.test"
    assert line["message"] == "hello world"


def test_an_exception_is_one_field() -> None:
    text = JsonFormatter().format(_record("failed", exc=True))
    assert "\n" not in text
    line = json.loads(text)
    assert line["message"] == "failed"
    assert line["exc"].startswith("Traceback (most recent call last):")
    assert line["exc"].rstrip().endswith("ValueError: boom")


def test_extra_fields_and_text_that_is_not_utf8() -> None:
    record = _record("echo \udcff")
    record.env = {"SECRET": "hunter2"}  # an extra= field: never copied
    text = JsonFormatter().format(record)
    text.encode("utf-8")  # writable as UTF-8
    assert json.loads(text)["message"] == "echo \udcff"
    assert "hunter2" not in text


def test_configure_logging_replaces_its_own_handler(
    tmp_path: Path, root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    json_config = gate_config(tmp_path, observability={"log_format": "json"})
    text_config = gate_config(tmp_path)
    configure_logging(json_config, level="INFO")
    configure_logging(json_config, level="INFO")
    logging.getLogger("shellgate.test").info("once")
    assert [line["message"] for line in lines_of(capsys.readouterr().err)] == ["once"]
    configure_logging(text_config, text_format="x: %(levelname)s %(name)s: %(message)s")
    logging.getLogger("shellgate.test").warning("plain")
    assert capsys.readouterr().err == "x: WARNING shellgate.test: plain\n"
    configure_logging(text_config, text_format=None)  # text as Python leaves it: ours removed
    assert not [h for h in logging.getLogger().handlers if type(h).__name__ == "_Handler"]


class FailingApprover:
    name = "broken"

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        raise RuntimeError("the approver fell over")


async def test_a_gate_call_logs_with_its_call_id(
    tmp_path: Path, root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = gate_config(tmp_path, observability={"log_format": "json"})
    configure_logging(config)
    async with Gate(config, approver=FailingApprover()) as gate:
        result = await gate.call("bash", {"command": "touch made", "description": "t"})
        assert result.outcome == "not approved"  # a failing approver is a deny
        logging.getLogger("shellgate.test").warning("between calls")
    (failed, between) = lines_of(capsys.readouterr().err)
    assert config.audit.path is not None
    decision = json.loads(config.audit.path.read_text().splitlines()[0])
    assert failed["logger"] == "shellgate.approval"
    assert failed["call_id"] == decision["call_id"]
    assert (failed["subject"], failed["tenant"], failed["tool"]) == ("agent", "default", "bash")
    assert "RuntimeError: the approver fell over" in failed["exc"]
    assert "call_id" not in between


def test_shellgate_mcp_logs_json_with_the_audit_records_call_id(tmp_path: Path) -> None:
    config = write_config(tmp_path, approval="allow", extra=JSON_LOGS)
    with RawServer(config) as server:
        server.initialize()  # no elicitation: the headless approver (allow) answers
        text, is_error = call_text(server.call(2, "bash", {"command": "touch made",
                                                           "description": "t"}))
        assert not is_error, text
        server.close_stdin()
        assert server.wait() == 0
        stderr = server.stderr()
    lines = lines_of(stderr)
    (decision,) = [r for r in audit_records(tmp_path) if r.get("type") == "decision"]
    in_call = [line for line in lines if "call_id" in line]
    assert in_call, stderr
    assert {line["call_id"] for line in in_call} == {decision["call_id"]}
    assert any("without asking anyone" in line["message"] for line in in_call)
    assert all(TIME.fullmatch(line["time"]) for line in lines)
    assert any(line["logger"] == "shellgate.mcp" and "call_id" not in line for line in lines)


def test_shellgate_run_logs_json_too(tmp_path: Path) -> None:
    config = write_config(tmp_path, approval="allow", extra=JSON_LOGS)
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(config), "touch", "made"],
        capture_output=True, text=True, env=server_env(), cwd=tmp_path, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stderr)
    (decision,) = [r for r in audit_records(tmp_path) if r.get("type") == "decision"]
    assert [line["call_id"] for line in lines if "call_id" in line] == [decision["call_id"]]


def test_text_stays_the_default(tmp_path: Path) -> None:
    config = write_config(tmp_path, approval="allow")
    with RawServer(config) as server:
        server.initialize()
        server.close_stdin()
        assert server.wait() == 0
        stderr = server.stderr()
    assert stderr.startswith("shellgate mcp: WARNING shellgate.mcp: approval mode 'allow'"), stderr
    assert "{" not in stderr


class InterleavedApprover:
    """Holds both calls inside the approver, then logs from each: lines must not mix."""

    name = "interleaved"

    def __init__(self) -> None:
        self.arrived = 0
        self.both = asyncio.Event()

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.arrived += 1
        if self.arrived == 2:
            self.both.set()
        await self.both.wait()
        await asyncio.to_thread(  # a thread the call starts carries its call_id too
            logging.getLogger("shellgate.test").warning, "asked about %s", request.call.command
        )
        return ApprovalAnswer(answer="allow_once", approver=self.name)


async def test_concurrent_calls_log_their_own_call_ids(
    tmp_path: Path, root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = gate_config(tmp_path, observability={"log_format": "json"})
    configure_logging(config)
    async with Gate(config, approver=InterleavedApprover()) as gate:
        await asyncio.gather(
            *(gate.call("bash", {"command": f"touch f{i}", "description": "t"}) for i in (1, 2))
        )
    lines = lines_of(capsys.readouterr().err)
    assert config.audit.path is not None
    decisions = {
        r["command"]: r["call_id"]
        for r in map(json.loads, config.audit.path.read_text().splitlines())
        if r["type"] == "decision"
    }
    assert len(lines) == 2
    for line in lines:
        command = line["message"].removeprefix("asked about ")
        assert line["call_id"] == decisions[command]


class JsonHttpServer(HttpServer):
    """``shellgate mcp --http`` whose address line is a JSON object too."""

    def _wait_for_url(self, timeout_s: float = 60.0) -> str:
        return super()._wait_for_url(timeout_s).split('"', 1)[0]


async def test_shellgate_mcp_http_logs_json_only(tmp_path: Path) -> None:
    config = write_http_setup(tmp_path, extra=JSON_LOGS)
    config.write_text(config.read_text().replace('mode = "deny"', 'mode = "allow"'))
    with JsonHttpServer(config, log_level="INFO") as server:
        async with connect_http(server.url, HTTP_ALICE) as session:
            result = await session.call_tool("bash", {"command": "touch made", "description": "t"})
            assert not result.is_error
        assert server.stop() == 0
        stderr = server.stderr()
    lines = lines_of(stderr)  # the address line included: nothing but JSON objects
    assert any(line["message"].startswith("serving MCP over HTTP at http://") for line in lines)
    (decision,) = [r for r in audit_records(tmp_path) if r.get("type") == "decision"]
    in_call = [line for line in lines if "call_id" in line]
    assert in_call, stderr
    assert {line["call_id"] for line in in_call} == {decision["call_id"]}
    assert {(line["subject"], line["tenant"]) for line in in_call} == {("alice", "team-a")}


def test_shellgate_serve_logs_json_only(tmp_path: Path) -> None:
    setup = write_console_setup(tmp_path, extra=JSON_LOGS)
    server = ConsoleProcess(setup)  # finds its address in the JSON address line
    try:
        assert httpx.get(server.url + "/login").status_code == 200
        assert server.stop() == 0
        stderr = server.stderr()
    finally:
        server.close()
    lines = lines_of(stderr)
    assert any(line["message"] == f"console at {server.url}/" for line in lines)
    assert any(line["logger"].startswith("uvicorn") for line in lines)
