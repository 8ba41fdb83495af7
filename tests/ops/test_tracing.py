"""[observability] otel: one span per real gate call, its attributes from the audit records."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from shellgate.config import Config
from shellgate.errors import ConfigError
from shellgate.gate import Gate
from tests.ops.ops_helpers import Approver, gate_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def traced(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    gates: list[Gate] = []

    async def factory(**sections: dict[str, Any]) -> Gate:
        config = gate_config(tmp_path, observability={"otel": True}, **sections)
        gate = Gate(config, approver=Approver())
        await gate.open()
        gates.append(gate)
        return gate

    yield factory
    for gate in gates:
        await gate.aclose()


def decision_of(config: Config, command: str) -> dict[str, Any]:
    assert config.audit.path is not None
    for line in config.audit.path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "decision" and record.get("command") == command:
            return dict(record)
    raise AssertionError(f"no decision for {command!r}")


def calls(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.parent is None]


def children(exporter: InMemorySpanExporter, span: ReadableSpan) -> list[str]:
    assert span.context is not None
    return [
        s.name for s in sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
        if s.parent is not None and s.parent.span_id == span.context.span_id
    ]


async def test_an_allowed_call(traced: Any, spans: InMemorySpanExporter) -> None:
    gate = await traced()
    result = await gate.call("bash", {"command": "echo hi", "description": "t"})
    assert result.outcome == "ok"
    (span,) = calls(spans)
    record = decision_of(gate.config, "echo hi")
    assert span.name == "shellgate.bash"
    assert span.attributes is not None
    assert dict(span.attributes) == {
        "shellgate.tool": "bash",
        "shellgate.subject": "agent",
        "shellgate.tenant": "default",
        "shellgate.call_id": record["call_id"],
        "shellgate.effect": "allow",
        "shellgate.layer": "casbin",
        "shellgate.rule": record["rule"],
        "shellgate.executor": "local",
        "shellgate.exit_code": 0,
        "shellgate.timed_out": False,
        "shellgate.outcome": "ok",
    }
    assert span.status.status_code == StatusCode.UNSET
    assert children(spans, span) == ["shellgate.decide", "shellgate.execute"]
    for child in spans.get_finished_spans():
        assert child.start_time is not None
        assert child.end_time is not None
        assert child.start_time <= child.end_time
    assert "echo hi" not in json.dumps(dict(span.attributes))  # never the command


async def test_a_denied_call(traced: Any, spans: InMemorySpanExporter) -> None:
    gate = await traced()
    result = await gate.call("bash", {"command": "rm gone", "description": "t"})
    assert result.outcome == "denied"
    (span,) = calls(spans)
    assert span.attributes is not None
    assert span.attributes["shellgate.effect"] == "deny"
    assert span.attributes["shellgate.outcome"] == "denied"
    assert span.attributes["shellgate.call_id"] == decision_of(gate.config, "rm gone")["call_id"]
    assert "shellgate.exit_code" not in span.attributes
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "denied"
    assert children(spans, span) == ["shellgate.decide"]  # nothing executed


async def test_an_asked_call_a_person_refused(traced: Any, spans: InMemorySpanExporter) -> None:
    gate = await traced()
    result = await gate.call("bash", {"command": "touch no-thanks", "description": "t"})
    assert result.outcome == "not approved"
    (span,) = calls(spans)
    assert span.attributes is not None
    assert span.attributes["shellgate.effect"] == "ask"
    assert span.attributes["shellgate.approval.answer"] == "deny"
    assert span.attributes["shellgate.approval.approver"] == "ops-test"
    assert span.status.status_code == StatusCode.ERROR
    assert children(spans, span) == ["shellgate.decide", "shellgate.approve"]


async def test_a_call_that_fails_to_start(traced: Any, spans: InMemorySpanExporter) -> None:
    gate = await traced(executor={"max_tasks": 1})
    arguments = {"command": "sleep 30", "description": "t", "run_in_background": True}
    started = await gate.call("bash", arguments)
    assert started.outcome == "ok"
    result = await gate.call("bash", arguments)  # over the task limit: an execution error
    assert result.outcome == "error"
    background, failed = calls(spans)
    assert background.attributes is not None
    assert failed.attributes is not None
    assert background.attributes["shellgate.outcome"] == "ok"
    assert str(background.attributes["shellgate.task_id"])
    assert background.status.status_code == StatusCode.UNSET
    assert failed.attributes["shellgate.outcome"] == "error"
    assert failed.attributes["shellgate.effect"] == "allow"
    assert failed.status.status_code == StatusCode.ERROR
    assert children(spans, failed) == ["shellgate.decide", "shellgate.execute"]


async def test_an_unknown_tool_and_a_task_tool(traced: Any, spans: InMemorySpanExporter) -> None:
    gate = await traced()
    await gate.call("x" * 10_000, {})
    await gate.call("bash_output", {"task_id": "nope"})
    unknown, output = calls(spans)
    assert unknown.name == "shellgate.unknown_tool"  # a model's tool name is no span name
    assert unknown.attributes is not None
    assert unknown.attributes["shellgate.tool"] == "x" * 100
    assert output.name == "shellgate.bash_output"
    assert unknown.status.status_code == output.status.status_code == StatusCode.ERROR


async def test_decide_then_call_share_the_call_id(
    traced: Any, spans: InMemorySpanExporter
) -> None:
    gate = await traced()
    arguments = {"command": "touch made", "description": "t"}
    decision = await gate.decide("bash", arguments)
    approval = gate.approve(decision, "alice")
    result = await gate.call("bash", arguments, approval=approval)
    assert result.outcome == "ok"
    decided, ran = calls(spans)
    assert decided.attributes is not None
    assert ran.attributes is not None
    assert decided.attributes["shellgate.via"] == "decide"
    assert decided.attributes["shellgate.outcome"] == "decided"
    assert decided.attributes["shellgate.call_id"] == ran.attributes["shellgate.call_id"] == decision.id
    assert ran.attributes["shellgate.exit_code"] == 0


async def test_off_by_default_no_spans(
    open_gate: Callable[..., Any], spans: InMemorySpanExporter
) -> None:
    gate = await open_gate()
    await gate.call("bash", {"command": "echo hi", "description": "t"})
    assert gate.tracer is None
    assert spans.get_finished_spans() == ()


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "src") + ":" + str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        env=env, cwd=tmp_path, timeout=60, check=False,
    )


def test_gate_calls_import_no_opentelemetry_when_off(tmp_path: Path) -> None:
    done = _python(
        """
        import os, sys
        from shellgate.config import load_config
        from shellgate.gate import SyncGate
        os.mkdir("ws")
        config = load_config(None, executor={"workspace": "ws"}, audit={"path": "a.jsonl"},
                             policy={"paths": []}, approval={"mode": "allow"})
        with SyncGate(config) as gate:
            assert gate.call("bash", {"command": "echo hi", "description": "t"}).outcome == "ok"
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("opentelemetry", "prometheus_client"))
        print(loaded)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_otel_without_the_api_is_a_start_up_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "shellgate.ops.tracing", raising=False)
    with pytest.raises(ConfigError, match=r"otel = true needs opentelemetry-api"):
        Gate(gate_config(tmp_path, observability={"otel": True}))


def test_otel_without_the_api_stops_the_cli(tmp_path: Path) -> None:
    (tmp_path / "shellgate.toml").write_text("[observability]\notel = true\n")
    (tmp_path / "ws").mkdir()
    done = _python(
        """
        import sys
        sys.modules["opentelemetry"] = None  # not installed
        from shellgate.cli import main
        main(["run", "--config", "shellgate.toml", "echo", "hi"])
        """,
        tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "error: [observability] otel = true needs opentelemetry-api" in done.stderr
    assert done.stdout == ""
