"""The OpenAI Agents SDK adapter, driven offline by the SDK's own ScriptedModel.

Real gate, real casbin policy files, real processes, the real audit log; the
SDK's Runner plans, approves, guards and invokes the tools as it would with a
hosted model (tracing off, no network, no API key).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, RunResult, RunState, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseFunctionShellToolCall

from shellgate.approval import DenyApprover
from shellgate.audit.reader import verify
from shellgate.gate import Gate
from shellgate.integrations.openai_agents import ShellgateTools
from tests.conftest import ROOT, make_config

set_tracing_disabled(True)



@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def records_in(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def records(tmp_path: Path, kind: str | None = None) -> list[dict[str, Any]]:
    found = records_in(tmp_path / "audit.jsonl")
    return [r for r in found if kind is None or r["type"] == kind]


def bash(command: str, call_id: str) -> Any:
    """A bash call as a strict-schema model sends it: every property, nulls for unset ones."""
    args = {
        "command": command,
        "description": "a step of the test",
        "timeoutMs": None,
        "workdir": None,
        "run_in_background": None,
    }
    return function_call("bash", args, call_id=call_id)


def shell(commands: list[str], call_id: str) -> ResponseFunctionShellToolCall:
    return ResponseFunctionShellToolCall(
        id=f"sh_{call_id}",
        call_id=call_id,
        type="shell_call",
        status="completed",
        action={"commands": commands, "timeout_ms": None, "max_output_length": None},
    )


def outputs_seen(model: ScriptedModel, call: int = -1) -> dict[str, Any]:
    """What the model was sent back for each tool call id, on its ``call``-th turn."""
    seen: dict[str, Any] = {}
    for item in model.calls[call].input:
        if isinstance(item, dict) and item.get("type") in (
            "function_call_output",
            "shell_call_output",
        ):
            seen[item["call_id"]] = item["output"]
    return seen


def agent_for(tools: ShellgateTools, model: ScriptedModel, *, shell_tool: bool = False) -> Agent:
    extra = [tools.shell_tool()] if shell_tool else []
    return Agent(name="dev", model=model, tools=[*tools.tools, *extra])


async def test_the_tools_are_the_gates_in_strict_form(gate: Gate) -> None:
    tools = ShellgateTools(gate)
    wanted = {s["function"]["name"]: s["function"] for s in gate.schemas("openai")}
    assert [t.name for t in tools.tools] == ["bash", "bash_output", "bash_kill"]
    for tool in tools.tools:
        assert tool.description == wanted[tool.name]["description"]
        assert tool.strict_json_schema
        schema = tool.params_json_schema
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(wanted[tool.name]["parameters"]["properties"])
    props = tools.tools[0].params_json_schema["properties"]
    assert props["command"]["type"] == "string"  # required: not nullable
    assert props["workdir"]["type"] == ["string", "null"]  # optional: null means "not given"


async def test_an_allowed_call_runs_on_one_decision(gate: Gate, tmp_path: Path) -> None:
    model = ScriptedModel([[bash("echo hello from the gate", "c1")], [assistant_message("ok")]])
    result = await Runner.run(agent_for(ShellgateTools(gate), model), "say hello")
    assert result.final_output == "ok"
    assert "hello from the gate" in outputs_seen(model)["c1"]
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "result"]
    assert recs[0]["via"] == "decide"
    assert recs[0]["decision"] == "allow"
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}
    assert verify(tmp_path / "audit.jsonl").ok


async def test_a_denied_call_never_runs_and_the_model_reads_why(gate: Gate, tmp_path: Path) -> None:
    (tmp_path / "ws" / "keep").write_text("precious")
    model = ScriptedModel([[bash("rm keep", "c1")], [assistant_message("ok")]])
    result = await Runner.run(agent_for(ShellgateTools(gate), model), "clean up")
    assert result.final_output == "ok"
    assert (tmp_path / "ws" / "keep").exists()
    seen = outputs_seen(model)["c1"]
    assert seen.startswith("Error: denied by")
    assert "no deleting" in seen
    assert [r["type"] for r in records(tmp_path)] == ["decision"]  # nothing ran
    assert records(tmp_path)[0]["decision"] == "deny"
    assert result.tool_input_guardrail_results[0].output.behavior["type"] == "reject_content"


async def test_an_ask_pauses_and_resumes_with_the_persons_approval(
    gate: Gate, tmp_path: Path
) -> None:
    tools = ShellgateTools(gate)
    model = ScriptedModel([[bash("touch made", "c1")], [assistant_message("done")]])
    agent = agent_for(tools, model)
    first = await Runner.run(agent, "make a file")
    [item] = first.interruptions
    assert not (tmp_path / "ws" / "made").exists()
    assert model.remaining_steps == 1  # the run stopped before the model saw anything
    assert "touch made" in await tools.question(item)

    state = first.to_state()
    await tools.approve(state, item, "alice@example.com")
    # The approval survives the state's trip through JSON (the host may store it).
    restored = await RunState.from_string(agent, state.to_string())
    second = await Runner.run(agent, restored)

    assert second.final_output == "done"
    assert (tmp_path / "ws" / "made").exists()
    assert not outputs_seen(model)["c1"].startswith("Error")
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}
    assert recs[1]["approver"] == "alice@example.com"
    assert recs[1]["answer"] == "allow_once"
    assert (recs[2]["exit_code"], recs[2]["is_error"]) == (0, False)
    assert verify(tmp_path / "audit.jsonl").ok


async def test_a_rejection_runs_nothing_and_gives_the_model_the_persons_words(
    gate: Gate, tmp_path: Path
) -> None:
    tools = ShellgateTools(gate)
    model = ScriptedModel([[bash("touch made", "c1")], [assistant_message("understood")]])
    agent = agent_for(tools, model)
    first = await Runner.run(agent, "make a file")
    # The host stored the paused run and picks it up again before asking the person.
    state = await RunState.from_string(agent, first.to_state().to_string())
    [item] = state.get_interruptions()
    await tools.reject(state, item, "carol", "not on a Friday")
    second = await Runner.run(agent, state)

    assert second.final_output == "understood"
    assert not (tmp_path / "ws" / "made").exists()
    seen = outputs_seen(model)["c1"]
    assert "carol: not on a Friday" in seen
    assert seen.startswith("Error: not approved")
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert recs[1]["approver"] == "carol"
    assert recs[1]["answer"] == "deny"
    assert recs[2]["outcome"] == "not approved"


async def test_approving_in_the_sdk_alone_runs_nothing(gate: Gate, tmp_path: Path) -> None:
    """state.approve without a person's sealed approval: the gate refuses, on the record."""
    model = ScriptedModel([[bash("touch made", "c1")], [assistant_message("ok")]])
    agent = agent_for(ShellgateTools(gate), model)
    first = await Runner.run(agent, "make a file")
    state = first.to_state()
    [item] = first.interruptions
    state.approve(item, always_approve=True)
    await Runner.run(agent, state)
    assert not (tmp_path / "ws" / "made").exists()
    seen = outputs_seen(model)["c1"]
    assert seen.startswith("Error: not approved")
    assert "needs a person's approval" in seen
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert recs[1]["approver"] == "shellgate"
    assert recs[2]["outcome"] == "not approved"


async def test_an_approval_does_not_travel_to_another_gate(gate: Gate, tmp_path: Path) -> None:
    """A state approved here and resumed by another process's gate is decided there, not run."""
    tools = ShellgateTools(gate)
    model = ScriptedModel([[bash("touch made", "c1")], [assistant_message("ok")]])
    first = await Runner.run(agent_for(tools, model), "make a file")
    state = first.to_state()
    [item] = first.interruptions
    await tools.approve(state, item, "alice")
    stored = state.to_string()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    pol = tmp_path / "pol"
    other = Gate(
        make_config(elsewhere, policy={"paths": [str(pol)], "default": "deny"}),
        approver=DenyApprover(),
    )
    async with other:
        agent = agent_for(ShellgateTools(other), model)
        await Runner.run(agent, await RunState.from_string(agent, stored))
    assert not (tmp_path / "ws" / "made").exists()
    assert not (elsewhere / "ws" / "made").exists()
    assert "needs a person's approval" in outputs_seen(model)["c1"]
    there = records(elsewhere)
    assert [r["type"] for r in there] == ["decision", "approval", "result"]
    assert there[2]["outcome"] == "not approved"


async def test_a_paused_run_is_answered_where_it_resumes(gate: Gate, tmp_path: Path) -> None:
    """Stored before the person answered, a run resumes in another process's gate: asked there."""
    model = ScriptedModel([[bash("touch made", "c1")], [assistant_message("ok")]])
    first = await Runner.run(agent_for(ShellgateTools(gate), model), "make a file")
    stored = first.to_state().to_string()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = Gate(
        make_config(elsewhere, policy={"paths": [str(tmp_path / "pol")], "default": "deny"}),
        approver=DenyApprover(),
    )
    async with other:
        tools = ShellgateTools(other)
        agent = agent_for(tools, model)
        state = await RunState.from_string(agent, stored)
        [item] = state.get_interruptions()
        assert "touch made" in await tools.question(item)
        await tools.approve(state, item, "frank")
        await Runner.run(agent, state)
    assert (elsewhere / "ws" / "made").exists()
    there = records(elsewhere)
    assert [r["type"] for r in there] == ["decision", "approval", "result"]
    assert there[1]["approver"] == "frank"


async def test_one_decision_record_per_tool_call(gate: Gate, tmp_path: Path) -> None:
    tools = ShellgateTools(gate)
    turn = [bash("echo one", "c1"), bash("rm keep", "c2"), bash("touch made", "c3")]
    model = ScriptedModel([turn, [bash("echo two", "c4")], [assistant_message("done")]])
    agent = agent_for(tools, model)
    first = await Runner.run(agent, "work")
    state = first.to_state()
    for item in first.interruptions:
        await tools.approve(state, item, "alice")
    await Runner.run(agent, state)

    decisions = records(tmp_path, "decision")
    commands = [r["command"] for r in decisions]
    assert sorted(commands) == ["echo one", "echo two", "rm keep", "touch made"]
    ids = [r["call_id"] for r in decisions]
    assert len(set(ids)) == 4
    results = records(tmp_path, "result")
    assert sorted(r["call_id"] for r in results) == sorted(
        r["call_id"] for r in decisions if r["decision"] != "deny"
    )
    assert (tmp_path / "ws" / "made").exists()


async def test_background_tools_pass_through_the_gate(gate: Gate, tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            [function_call("bash_output", {"task_id": "bash-99"}, call_id="c1")],
            [assistant_message("ok")],
        ]
    )
    await Runner.run(agent_for(ShellgateTools(gate), model), "read")
    assert outputs_seen(model)["c1"].startswith("Error: ")
    [record] = records(tmp_path)
    assert record["type"] == "task"
    assert record["tool"] == "bash_output"


async def test_the_shell_tool_runs_allowed_commands(gate: Gate, tmp_path: Path) -> None:
    model = ScriptedModel([[shell(["echo first", "echo second"], "s1")], [assistant_message("ok")]])
    agent = agent_for(ShellgateTools(gate), model, shell_tool=True)
    result = await Runner.run(agent, "say two things")
    assert result.final_output == "ok"
    [first, second] = outputs_seen(model)["s1"]
    assert "first" in first["stdout"]
    assert "second" in second["stdout"]
    assert first["outcome"] == {"type": "exit", "exit_code": 0}
    recs = records(tmp_path)  # each command decided up front, then run in order
    assert [r["type"] for r in recs] == ["decision", "decision", "result", "result"]
    assert [r["call_id"] for r in recs[:2]] == [r["call_id"] for r in recs[2:]]


async def test_the_shell_tool_runs_nothing_when_a_command_is_denied(
    gate: Gate, tmp_path: Path
) -> None:
    (tmp_path / "ws" / "keep").write_text("precious")
    model = ScriptedModel([[shell(["echo first", "rm keep"], "s1")], [assistant_message("ok")]])
    agent = agent_for(ShellgateTools(gate), model, shell_tool=True)
    result = await Runner.run(agent, "clean up")
    assert result.final_output == "ok"
    assert not result.interruptions
    assert (tmp_path / "ws" / "keep").exists()
    [first, second] = outputs_seen(model)["s1"]
    assert "`rm keep` in the same shell call was denied" in first["stderr"]
    assert second["stderr"].startswith("Error: denied by")
    assert "no deleting" in second["stderr"]
    assert [r["type"] for r in records(tmp_path)] == ["decision", "decision"]


async def test_the_shell_tool_pauses_on_ask_and_runs_on_approval(
    gate: Gate, tmp_path: Path
) -> None:
    tools = ShellgateTools(gate)
    model = ScriptedModel([[shell(["touch made", "echo after"], "s1")], [assistant_message("ok")]])
    agent = agent_for(tools, model, shell_tool=True)
    first: RunResult = await Runner.run(agent, "make a file")
    [item] = first.interruptions
    assert not (tmp_path / "ws" / "made").exists()
    state = first.to_state()
    await tools.approve(state, item, "dave")
    await Runner.run(agent, state)
    assert (tmp_path / "ws" / "made").exists()
    assert "after" in outputs_seen(model)["s1"][1]["stdout"]
    approvals = records(tmp_path, "approval")
    assert [(r["approver"], r["answer"]) for r in approvals] == [("dave", "allow_once")]
    assert len(records(tmp_path, "decision")) == 2  # one per command, no more


async def test_the_shell_tool_timeout_is_the_gates(gate: Gate, tmp_path: Path) -> None:
    call = shell(["sleep 30"], "s1")
    call.action.timeout_ms = 300
    model = ScriptedModel([[call], [assistant_message("ok")]])
    started = time.monotonic()
    await Runner.run(agent_for(ShellgateTools(gate), model, shell_tool=True), "wait")
    assert time.monotonic() - started < 15  # 30 s asked for; the 300 ms timeout ended it
    [out] = outputs_seen(model)["s1"]
    assert out["outcome"] == {"type": "timeout"}
    assert "[timed out after 300ms]" in out["stdout"]
    assert [r["type"] for r in records(tmp_path)] == ["decision", "result"]
    assert records(tmp_path, "result")[0]["timed_out"] is True


async def test_the_shell_tool_rejected_runs_nothing(gate: Gate, tmp_path: Path) -> None:
    tools = ShellgateTools(gate)
    model = ScriptedModel([[shell(["touch made"], "s1")], [assistant_message("ok")]])
    agent = agent_for(tools, model, shell_tool=True)
    first = await Runner.run(agent, "make a file")
    [item] = first.interruptions
    state = first.to_state()
    await tools.reject(state, item, "erin", "use the scratch dir")
    await Runner.run(agent, state)
    assert not (tmp_path / "ws" / "made").exists()
    [out] = outputs_seen(model)["s1"]
    assert out["stderr"].startswith("Error: not approved (erin: use the scratch dir)")
    approvals = records(tmp_path, "approval")
    assert [(r["approver"], r["answer"]) for r in approvals] == [("erin", "deny")]


def test_without_the_sdk_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)  # what an absent package looks like
    monkeypatch.delitem(sys.modules, "shellgate.integrations.openai_agents")
    with pytest.raises(ImportError, match=r"shellgate\[openai-agents\]"):
        __import__("shellgate.integrations.openai_agents")


def test_nothing_in_core_imports_the_sdk() -> None:
    code = (
        "import sys, shellgate, shellgate.gate, shellgate.mcp_server, shellgate.integrations\n"
        "import shellgate.cli\n"
        "assert 'agents' not in sys.modules, 'agents was imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def docs_snippet() -> str:
    """The runnable example of docs/integrations.md's "OpenAI Agents SDK" section."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("\n## OpenAI Agents SDK\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)
    assert found is not None, "the section has no python example"
    return found.group(1)


@pytest.mark.parametrize(
    ("answer", "made", "said"),
    [
        pytest.param("y", True, "allow_once", id="approved"),
        pytest.param("n", False, "deny", id="rejected"),
    ],
)
def test_the_docs_example_runs(tmp_path: Path, answer: str, made: bool, said: str) -> None:
    (tmp_path / "example.py").write_text(docs_snippet())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHELLGATE_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        env=env,
        input=f"{answer}\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "touch .pre-commit-config.yaml" in done.stdout  # the question the person saw
    assert (tmp_path / ".pre-commit-config.yaml").exists() is made
    approval = next(
        r for r in records_in(tmp_path / "shellgate-audit.jsonl") if r["type"] == "approval"
    )
    assert (approval["approver"], approval["answer"]) == ("alice@example.com", said)
