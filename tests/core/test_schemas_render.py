"""Tool schemas per model API, and the render module's less common paths."""

from __future__ import annotations

import types

import pytest

import shellgate
from shellgate.models import Decision, OutputView, RunResult
from shellgate.tools import render
from shellgate.tools.schemas import input_schema, schemas


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_every_format_lists_the_three_tools(fmt: str) -> None:
    tools = schemas(fmt)  # type: ignore[arg-type]
    names = [t["function"]["name"] if fmt == "openai" else t["name"] for t in tools]
    assert names == ["bash", "bash_output", "bash_kill"]


def test_bash_schema_shape() -> None:
    schema = input_schema("bash")
    assert schema["required"] == ["command", "description"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["timeoutMs"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": schema["properties"]["timeoutMs"]["description"],
    }
    assert schema["properties"]["run_in_background"]["type"] == "boolean"
    assert "sandbox_permissions" not in schema["properties"]


def test_escalation_arguments_only_when_sandboxed() -> None:
    schema = input_schema("bash", sandboxed=True)
    assert schema["properties"]["sandbox_permissions"]["enum"] == [
        "read-only",
        "workspace-write",
        "full-access",
    ]
    assert schema["properties"]["justification"]["type"] == "string"
    assert schema["required"] == ["command", "description"]


def test_task_schemas() -> None:
    for tool in ("bash_output", "bash_kill"):
        schema = input_schema(tool)
        assert schema["required"] == ["task_id"]
        assert list(schema["properties"]) == ["task_id"]


def test_public_names_match_all() -> None:
    """``__all__`` is the public surface: each name resolves, and nothing else is public."""
    assert set(shellgate.__all__) == set(shellgate._EXPORTS) | {"__version__"}
    for name in shellgate.__all__:
        assert getattr(shellgate, name) is not None
    # Submodules become attributes once anything imports them: they are not the API.
    modules = {n for n in dir(shellgate) if isinstance(getattr(shellgate, n), types.ModuleType)}
    public = {n for n in dir(shellgate) if not n.startswith("_")} - modules
    assert public == set(shellgate.__all__) - {"__version__"}
    with pytest.raises(AttributeError):
        _ = shellgate.NotAThing


def _result(**kw: object) -> RunResult:
    return RunResult(**kw)


def test_truncation_notices_on_both_streams() -> None:
    result = _result(
        stdout=OutputView(text="tail", truncated=True, spill_path="/s/out"),
        stderr=OutputView(text="etail", truncated=True, spill_path=None),
        exit_code=1,
    )
    assert render.run_result(result) == (
        "tail\n[output truncated; full output: /s/out]\n[stderr]\netail\n"
        "[output truncated; full output: (unavailable)]\n[exit code: 1]"
    )


def test_sandbox_markers_come_first_in_order() -> None:
    result = _result(
        stderr=OutputView(text="touch: Read-only file system\n"),
        exit_code=1,
        executor="bwrap",
        sandbox_mode="read-only",
        sandbox_denied=True,
        escalation_available=True,
        timed_out=True,
        timeout_ms=5,
    )
    lines = render.run_result(result).split("\n")
    assert lines[-4:] == [
        "[sandbox: file access denied under read-only mode]",
        render.ESCALATION_HINT,
        "[timed out after 5ms]",
        "[exit code: 1]",
    ]


def test_policy_denial_names_the_rule() -> None:
    decision = Decision(effect="deny", reason="catastrophic", layer="casbin", rule="p.csv:3")
    assert render.policy_denied(decision) == "Error: denied by casbin rule p.csv:3: catastrophic"


def test_dropped_output_notice() -> None:
    text = render.task_output("x", "", lost=True, spill_paths=["/a", "/b"], result=None)
    assert (
        text == "x\n[some output was dropped from memory; full output: /a, /b]\n[status: running]"
    )
    none = render.task_output("", "", lost=True, spill_paths=[], result=None)
    assert "full output: (unavailable)]" in none


def test_notices_on_top() -> None:
    assert render.with_notices(["n1", "n2"], "body") == "n1\nn2\n\nbody"
    assert render.with_notices([], "body") == "body"


def test_approval_denied_names_the_approver_and_the_reason_asked() -> None:
    ask = Decision(effect="ask", reason="network access", layer="casbin", rule="p.csv:9")
    assert render.approval_denied(ask, "deny", "nobody could be asked") == (
        "Error: not approved (deny: nobody could be asked); "
        "approval was required by casbin rule p.csv:9: network access"
    )
    allow = Decision(effect="allow", reason="ok", layer="casbin")
    assert render.approval_denied(allow, "prompt", None, escalation="full-access") == (
        "Error: not approved (prompt); the escalation to 'full-access' mode was refused"
    )
