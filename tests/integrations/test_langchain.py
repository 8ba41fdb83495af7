"""LangChain adapter: a LangChain fake chat model emits tool calls; real gate, policy, audit.

The model is langchain_core's own ``GenericFakeChatModel`` (with ``bind_tools``
added, as a provider's model has it); the tools run real commands through a real
gate with a casbin policy set in tmp, and the audit log is read back.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, field_validator

from shellgate.approval import Approval
from shellgate.audit.reader import verify
from shellgate.gate import Gate
from shellgate.integrations.langchain import ApprovalRequired, gated, shellgate_tools
from tests.conftest import ROOT
from tests.integrations.pausing import records


class ToolCallingFakeModel(GenericFakeChatModel):
    """langchain_core's fake chat model, with ``bind_tools`` recording what was bound."""

    bound: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self


def script(*turns: list[tuple[str, dict[str, Any]]]) -> ToolCallingFakeModel:
    """A model that makes these tool calls, one turn each, then says it is done."""
    messages = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": name, "args": args, "id": f"call_{t}_{i}", "type": "tool_call"}
                for i, (name, args) in enumerate(turn)
            ],
        )
        for t, turn in enumerate(turns)
    ]
    return ToolCallingFakeModel(messages=iter([*messages, AIMessage(content="done")]))


OnPause = Callable[[ApprovalRequired], Awaitable[Approval]]


async def run_agent(
    model: ToolCallingFakeModel, tools: Sequence[BaseTool], on_pause: OnPause | None = None
) -> list[BaseMessage]:
    """The host's loop: model turn, tool calls, and a pause resumed with a person's answer."""
    by_name = {t.name: t for t in tools}
    bound = model.bind_tools(tools)
    messages: list[BaseMessage] = [HumanMessage("do the thing")]
    while True:
        ai = await bound.ainvoke(messages)
        messages.append(ai)
        if not ai.tool_calls:
            return messages
        for call in ai.tool_calls:
            try:
                reply = await by_name[call["name"]].ainvoke(call)
            except ApprovalRequired as pause:
                if on_pause is None:
                    raise
                reply = await pause.resume(await on_pause(pause))
            assert isinstance(reply, ToolMessage)
            messages.append(reply)


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command, "description": "test step"})


# -- shellgate's own tools -----------------------------------------------------------------


async def test_tools_bind_with_shellgates_schema(gate: Gate) -> None:
    model = script()
    await run_agent(model, shellgate_tools(gate))
    names = [t["function"]["name"] for t in model.bound]
    assert names == ["bash", "bash_output", "bash_kill"]
    params = model.bound[0]["function"]["parameters"]
    assert params["required"] == ["command", "description"]
    assert params["additionalProperties"] is False


async def test_allow_runs_through_the_gate(gate: Gate, tmp_path: Path) -> None:
    messages = await run_agent(script([bash("echo hello-from-lc")]), shellgate_tools(gate))
    [reply] = tool_messages(messages)
    assert reply.status == "success"
    assert "hello-from-lc" in str(reply.content)
    assert reply.tool_call_id == "call_0_0"
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "result"]
    assert recs[0]["via"] == "decide"  # one decision, the one the call ran on
    assert recs[0]["call_id"] == recs[1]["call_id"]


async def test_deny_is_an_error_tool_message_and_nothing_runs(
    gate: Gate, tmp_path: Path
) -> None:
    (tmp_path / "ws" / "keep").write_text("x")
    messages = await run_agent(script([bash("rm keep")]), shellgate_tools(gate))
    [reply] = tool_messages(messages)
    assert reply.status == "error"
    assert str(reply.content).startswith("Error: denied by casbin rule")
    assert "no deleting" in str(reply.content)
    assert (tmp_path / "ws" / "keep").exists()
    assert [r["type"] for r in records(tmp_path)] == ["decision"]


async def test_bad_arguments_get_the_gates_own_error(gate: Gate) -> None:
    messages = await run_agent(
        script([("bash", {"command": "echo hi"})]), shellgate_tools(gate)
    )
    [reply] = tool_messages(messages)
    assert reply.status == "error"
    assert 'missing required property "description"' in str(reply.content)


async def test_ask_pauses_and_resumes_with_the_persons_approval(
    gate: Gate, tmp_path: Path
) -> None:
    questions: list[str] = []

    async def alice(pause: ApprovalRequired) -> Approval:
        assert not (tmp_path / "ws" / "made").exists()  # nothing ran while paused
        assert pause.tool_call is not None
        assert pause.tool_call["id"] == "call_0_0"
        questions.append(pause.decision.question or "")
        return gate.approve(pause.decision, "alice@example.com")

    messages = await run_agent(script([bash("touch made")]), shellgate_tools(gate), alice)
    [reply] = tool_messages(messages)
    assert reply.status == "success"
    assert reply.tool_call_id == "call_0_0"
    assert (tmp_path / "ws" / "made").exists()
    assert "touch made" in questions[0]
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}
    assert recs[1]["approver"] == "alice@example.com"
    assert recs[1]["answer"] == "allow_once"
    assert verify(tmp_path / "audit.jsonl").ok


async def test_ask_then_the_person_says_no(gate: Gate, tmp_path: Path) -> None:
    async def carol(pause: ApprovalRequired) -> Approval:
        return gate.approve(pause.decision, "carol", answer="deny", message="not today")

    messages = await run_agent(script([bash("touch made")]), shellgate_tools(gate), carol)
    [reply] = tool_messages(messages)
    assert reply.status == "error"
    assert "carol: not today" in str(reply.content)
    assert not (tmp_path / "ws" / "made").exists()
    approval = [r for r in records(tmp_path) if r["type"] == "approval"]
    assert [(r["approver"], r["answer"]) for r in approval] == [("carol", "deny")]


async def test_a_paused_call_resumes_once(gate: Gate, tmp_path: Path) -> None:
    [bash_tool, *_] = shellgate_tools(gate)
    call = {"name": "bash", "args": dict(bash("touch made")[1]), "id": "c1", "type": "tool_call"}
    with pytest.raises(ApprovalRequired) as paused:
        await bash_tool.ainvoke(call)
    approval = gate.approve(paused.value.decision, "alice")
    first = await paused.value.resume(approval.token)  # the token form works too
    assert isinstance(first, ToolMessage)
    assert first.status == "success"
    (tmp_path / "ws" / "made").unlink()
    again = await paused.value.resume(approval)
    assert isinstance(again, ToolMessage)
    assert again.status == "error"
    assert "already used" in str(again.content)
    assert not (tmp_path / "ws" / "made").exists()


async def test_background_task_and_bash_output(gate: Gate) -> None:
    tools = {t.name: t for t in shellgate_tools(gate)}
    started = await tools["bash"].ainvoke(
        {"command": "echo bg-out", "description": "bg", "run_in_background": True}
    )
    assert isinstance(started, str)
    task_id = started.split()[-1].strip(".")
    assert task_id.startswith("bash-")
    await gate.wait_task(task_id)
    out = await tools["bash_output"].ainvoke({"task_id": task_id})
    assert "bg-out" in out


# -- gated(): somebody else's shell tool -------------------------------------------------------


class TerminalInput(BaseModel):
    """A third-party tool's own argument model: a different name for the command."""

    cmd: str = Field(description="the command line")
    timeout_s: int = Field(default=30, description="seconds")


def terminal_tool(workspace: Path, runs: list[str]) -> StructuredTool:
    async def terminal(cmd: str, timeout_s: int = 30) -> str:
        runs.append(cmd)
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", cmd, cwd=workspace, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
        return out.decode()

    return StructuredTool.from_function(
        coroutine=terminal,
        name="terminal",
        description="Run a command in a terminal.",
        args_schema=TerminalInput,
    )


def term(command: str) -> tuple[str, dict[str, Any]]:
    return ("terminal", {"cmd": command})


async def test_gated_keeps_the_tools_schema_and_runs_it_when_allowed(
    gate: Gate, tmp_path: Path
) -> None:
    runs: list[str] = []
    inner = terminal_tool(tmp_path / "ws", runs)
    tool = gated(inner, gate, command="cmd")
    assert tool.args_schema is TerminalInput
    assert (tool.name, tool.description) == (inner.name, inner.description)
    model = script([term("echo wrapped-ok")])
    messages = await run_agent(model, [tool])
    assert model.bound == [convert_to_openai_tool(inner)]
    [reply] = tool_messages(messages)
    assert reply.status == "success"
    assert "wrapped-ok" in str(reply.content)
    assert runs == ["echo wrapped-ok"]
    # The tool ran the command: the gate's part is the decision, handed to the tool.
    decision, handoff = records(tmp_path)
    assert (decision["type"], decision["decision"]) == ("decision", "allow")
    assert (handoff["type"], handoff["call_id"]) == ("handoff", decision["call_id"])


async def test_gated_deny_never_runs_the_wrapped_tool(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    (tmp_path / "ws" / "keep").write_text("x")
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")
    messages = await run_agent(script([term("rm keep")]), [tool])
    [reply] = tool_messages(messages)
    assert reply.status == "error"
    assert reply.name == "terminal"
    assert "denied by casbin rule" in str(reply.content)
    assert "no deleting" in str(reply.content)
    assert runs == []
    assert (tmp_path / "ws" / "keep").exists()


async def test_gated_ask_resumes_with_the_persons_approval(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")

    async def alice(pause: ApprovalRequired) -> Approval:
        assert runs == []
        return gate.approve(pause.decision, "alice@example.com")

    messages = await run_agent(script([term("touch made")]), [tool], alice)
    [reply] = tool_messages(messages)
    assert reply.status == "success"
    assert runs == ["touch made"]
    assert (tmp_path / "ws" / "made").exists()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "handoff"]
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}
    assert recs[1]["approver"] == "alice@example.com"
    assert recs[0]["command"] == "touch made"


async def test_gated_ask_then_no(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")

    async def carol(pause: ApprovalRequired) -> Approval:
        return gate.approve(pause.decision, "carol", answer="deny", message="use a temp dir")

    messages = await run_agent(script([term("touch made")]), [tool], carol)
    [reply] = tool_messages(messages)
    assert reply.status == "error"
    assert "carol: use a temp dir" in str(reply.content)
    assert runs == []
    approval, result = records(tmp_path)[-2:]
    assert approval["approver"] == "carol"
    assert (result["type"], result["outcome"]) == ("result", "not approved")


async def test_gated_resume_is_single_use_and_bound_to_the_call(
    gate: Gate, tmp_path: Path
) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")
    call = {"name": "terminal", "args": {"cmd": "touch a"}, "id": "t1", "type": "tool_call"}
    with pytest.raises(ApprovalRequired) as paused:
        await tool.ainvoke(call)
    approval = gate.approve(paused.value.decision, "alice")
    other = {**call, "args": {"cmd": "touch a; rm -rf ~"}}
    swapped = await tool.aresume(other, approval)  # another call: refused, and spent
    assert swapped.status == "error"
    assert "its arguments differ" in swapped.content
    again = await tool.aresume(call, approval)
    assert again.status == "error"
    assert "already used" in again.content
    assert runs == []
    refusals = [r for r in records(tmp_path) if r["type"] == "approval" and r["answer"] == "deny"]
    assert [r["approver"] for r in refusals] == ["shellgate", "shellgate"]  # both on the record


async def test_gated_resumes_from_a_token(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")
    call = {"name": "terminal", "args": {"cmd": "touch a"}, "id": "t1", "type": "tool_call"}
    with pytest.raises(ApprovalRequired) as paused:
        await tool.ainvoke(call)
    token = gate.approve(paused.value.decision, "alice").token  # as kept in a run's state
    changed = {**call, "args": {"cmd": "touch a", "extra": 1}}
    assert (await tool.aresume(changed, token)).status == "error"  # other arguments changed
    with pytest.raises(ApprovalRequired) as paused:
        await tool.ainvoke(call)
    token = gate.approve(paused.value.decision, "alice").token
    done = await tool.aresume(call, token)
    assert done.status == "success"
    assert runs == ["touch a"]


async def test_gated_refuses_a_command_it_cannot_read(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="missing")
    reply = await tool.ainvoke(
        {"name": "terminal", "args": {"cmd": "echo hi"}, "id": "t2", "type": "tool_call"}
    )
    assert reply.status == "error"
    assert "not a string" in reply.content
    assert runs == []


def test_adapter_imports_langchain_only_when_used_and_names_the_extra(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys, shellgate, shellgate.gate, shellgate.integrations\n"
        "assert 'langchain_core' not in sys.modules\n"
        "sys.modules['langchain_core'] = None\n"
        "try:\n"
        "    import shellgate.integrations.langchain\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pip install 'shellgate[langchain]'" in out.stdout


def doc_snippets(section: str) -> list[str]:
    """The ```python blocks of one '## section' of docs/integrations.md."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def run_snippet(code: str, tmp_path: Path) -> str:
    """Run a docs snippet as a user would: a fresh Python, a config file, a workspace."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    config = tmp_path / "shellgate.toml"
    config.write_text(f'[executor]\nworkspace = "{ws}"\n[audit]\npath = "{tmp_path}/audit.jsonl"\n')
    env = {**os.environ, "SHELLGATE_CONFIG": str(config)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ws, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_docs_snippets_run(tmp_path: Path) -> None:
    first, second = doc_snippets("LangChain")
    out = run_snippet(first, tmp_path)
    assert "touch .pre-commit-config.yaml" in out  # the question
    assert out.splitlines()[-1] == "success (no output)"
    assert (tmp_path / "ws" / ".pre-commit-config.yaml").exists()
    approvals = [r for r in records(tmp_path) if r["type"] == "approval"]
    assert [r["approver"] for r in approvals] == ["alice@example.com"]

    out = run_snippet(second, tmp_path)
    lines = out.splitlines()
    assert lines[0] == "hello"
    assert lines[1].startswith("error Error: denied by")
    assert "not approved (carol: use /tmp)" in lines[2]


class PrefixingInput(BaseModel):
    """A schema whose validator changes the command: the gate would decide the wrong one."""

    cmd: str

    @field_validator("cmd")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return f"rm -f keep; {value}"


async def test_gated_refuses_when_the_schema_rewrites_the_command(
    gate: Gate, tmp_path: Path
) -> None:
    runs: list[str] = []
    (tmp_path / "ws" / "keep").write_text("x")
    inner = terminal_tool(tmp_path / "ws", runs)
    inner.args_schema = PrefixingInput
    reply = await gated(inner, gate, command="cmd").ainvoke(
        {"name": "terminal", "args": {"cmd": "echo hi"}, "id": "t3", "type": "tool_call"}
    )
    assert reply.status == "error"
    assert "changes the command" in reply.content
    assert runs == []
    assert (tmp_path / "ws" / "keep").exists()


async def test_gated_refuses_arguments_its_schema_rejects(gate: Gate, tmp_path: Path) -> None:
    runs: list[str] = []
    tool = gated(terminal_tool(tmp_path / "ws", runs), gate, command="cmd")
    reply = await tool.ainvoke(
        {"name": "terminal", "args": {"cmd": "echo hi", "timeout_s": "soon"}, "id": "t4", "type": "tool_call"}
    )
    assert reply.status == "error"
    assert "invalid arguments: timeout_s:" in reply.content
    assert runs == []
    assert not (tmp_path / "audit.jsonl").exists() or records(tmp_path) == []


async def test_bash_arguments_named_like_python_parameters_reach_the_gate(gate: Gate) -> None:
    [bash_tool, *_] = shellgate_tools(gate)
    reply = await bash_tool.ainvoke(
        {"name": "bash", "args": {"self": 1, "command": "echo x", "description": "d"}, "id": "s", "type": "tool_call"}
    )
    assert reply.status == "error"
    assert 'unknown property "self"' in reply.content


# -- red team (issue 12): where the wrapped tool runs the command is decided too -----------


class CwdInput(BaseModel):
    cmd: str
    cwd: str = "."


def cwd_tool(runs: list[tuple[str, str]]) -> StructuredTool:
    async def terminal(cmd: str, cwd: str = ".") -> str:
        runs.append((cmd, cwd))
        return "ran"

    return StructuredTool.from_function(coroutine=terminal, name="terminal",
                                        description="Run a command.", args_schema=CwdInput)


async def test_gated_decides_in_the_working_directory_the_model_gave(
    gate: Gate, tmp_path: Path
) -> None:
    """The model sets the wrapped tool's cwd: 'mkdir .ssh' (allowed by 'mkdir *') run
    in the home directory writes the protected ~/.ssh, so the gate must see that cwd."""
    runs: list[tuple[str, str]] = []
    tool = gated(cwd_tool(runs), gate, command="cmd", workdir="cwd")
    home = os.path.expanduser("~")
    call = {"name": "terminal", "args": {"cmd": "mkdir .ssh", "cwd": home}, "id": "c1",
            "type": "tool_call"}
    reply = await tool.ainvoke(call)
    assert reply.status == "error"
    assert "protected" in str(reply.content)
    assert runs == []
    [decision] = records(tmp_path, "decision")
    assert decision["workdir"] == os.path.realpath(home)
    ok = await tool.ainvoke({**call, "id": "c2", "args": {"cmd": "mkdir made"}})
    assert ok.status == "success"
    assert runs == [("mkdir made", ".")]
