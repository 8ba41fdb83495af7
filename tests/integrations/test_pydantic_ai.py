"""pydantic-ai adapter: pydantic-ai's own fake models drive real tool calls through a real gate.

Real casbin policy files in tmp, real processes, the real audit log. ``FunctionModel``
plays the model: it calls one tool, then says what the tool answered (the outcome
pydantic-ai recorded and the text the model read), so every assert is on what the
model saw.
"""

from __future__ import annotations

import asyncio
import dataclasses
import getpass
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved
from pydantic_ai.toolsets import FunctionToolset

from shellgate.approval import Approval
from shellgate.audit.reader import verify
from shellgate.errors import ShellgateError
from shellgate.gate import Gate
from shellgate.integrations.pydantic_ai import (
    APPROVAL_METADATA_KEY,
    GatedToolset,
    ShellgateToolset,
    ShellTool,
)
from tests.conftest import ROOT, pids_with_arg, unique_seconds
from tests.integrations.pausing import pausing_gate, records

Output = str | DeferredToolRequests


def one_call(tool: str, args: dict[str, Any], call_id: str = "call-1") -> FunctionModel:
    """A model that makes one tool call, then reports what it read back."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(
                    parts=[TextPart(f"{part.outcome}|{part.model_response_str()}")]
                )
        return ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=call_id)])

    return FunctionModel(model)


def agent(toolset: Any, tool: str, args: dict[str, Any]) -> Agent[None, Output]:
    return Agent(one_call(tool, args), toolsets=[toolset], output_type=[str, DeferredToolRequests])


def touch(name: str = "made") -> dict[str, Any]:
    return {"command": f"touch {name}", "description": "make a file"}


async def said(ag: Agent[None, Output]) -> str:
    """Run to the end: what the model said about the tool's answer."""
    result = await ag.run("go")
    assert isinstance(result.output, str)
    return result.output


async def paused_run(ag: Agent[None, Output]) -> tuple[DeferredToolRequests, list[ModelMessage]]:
    result = await ag.run("go")
    assert isinstance(result.output, DeferredToolRequests)
    return result.output, result.all_messages()


async def resume(
    ag: Agent[None, Output], history: list[ModelMessage], results: DeferredToolResults
) -> str:
    result = await ag.run(message_history=history, deferred_tool_results=results)
    assert isinstance(result.output, str)
    return result.output


# -- ShellgateToolset ---------------------------------------------------------------------


async def test_model_sees_the_gates_tools(gate: Gate) -> None:
    model = TestModel(call_tools=[])
    await Agent(model, toolsets=[ShellgateToolset(gate)]).run("go")
    assert model.last_model_request_parameters is not None
    seen = {t.name: t for t in model.last_model_request_parameters.function_tools}
    for schema in gate.schemas("mcp"):
        assert seen[schema["name"]].description == schema["description"]
        assert seen[schema["name"]].parameters_json_schema == schema["inputSchema"]


async def test_test_model_calls_are_decided_by_the_policy(gate: Gate, tmp_path: Path) -> None:
    # TestModel makes up arguments for every tool: a made-up command hits the default deny.
    model = TestModel(call_tools=["bash"])
    result = await Agent(model, toolsets=[ShellgateToolset(gate)]).run("go")
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_name, p.outcome) for p in returns] == [("bash", "failed")]
    assert "denied by default" in returns[0].model_response_str()
    assert [r["decision"] for r in records(tmp_path)] == ["deny"]


async def test_allow_runs_once_on_one_decision(gate: Gate, tmp_path: Path) -> None:
    ag = agent(ShellgateToolset(gate), "bash", {"command": "mkdir built", "description": "mk"})
    assert (await said(ag)).startswith("success|")
    assert (tmp_path / "ws" / "built").is_dir()
    ag = agent(ShellgateToolset(gate), "bash", {"command": "echo hello-there", "description": "x"})
    out = await said(ag)
    assert out.startswith("success|")
    assert "hello-there" in out
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "result"] * 2
    assert recs[0]["via"] == "decide"
    assert recs[0]["call_id"] == recs[1]["call_id"]  # one call, one decision


async def test_deny_refuses_and_the_model_reads_why(gate: Gate, tmp_path: Path) -> None:
    (tmp_path / "ws" / "keep").write_text("x")
    ag = agent(ShellgateToolset(gate), "bash", {"command": "rm keep", "description": "rm"})
    out = await said(ag)
    assert out.startswith("failed|")  # a ToolFailed: an error the model reads, not a retry
    assert "Error: denied by casbin rule" in out
    assert "no deleting" in out
    assert (tmp_path / "ws" / "keep").exists()
    assert [(r["type"], r["decision"]) for r in records(tmp_path)] == [("decision", "deny")]


async def test_ask_pauses_and_a_persons_yes_runs_it(gate: Gate, tmp_path: Path) -> None:
    shell = ShellgateToolset(gate)
    ag = agent(shell, "bash", touch())
    requests, history = await paused_run(ag)
    [call] = requests.approvals
    meta = requests.metadata[call.tool_call_id]
    assert "touch made" in meta["question"]
    assert meta["decision_id"]
    assert not (tmp_path / "ws" / "made").exists()

    results = shell.approve(requests, call.tool_call_id, "alice@example.com")
    assert results.answered_by == {call.tool_call_id: "alice@example.com"}
    assert results.metadata[call.tool_call_id][APPROVAL_METADATA_KEY].startswith("sga1.")
    out = await resume(ag, history, results)
    assert out.startswith("success|")
    assert (tmp_path / "ws" / "made").exists()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert {r["call_id"] for r in recs} == {meta["decision_id"]}
    assert recs[1]["approver"] == "alice@example.com"
    assert recs[1]["answer"] == "allow_once"
    assert recs[2]["exit_code"] == 0
    assert verify(tmp_path / "audit.jsonl").ok


async def test_a_persons_no_is_what_the_model_reads(gate: Gate, tmp_path: Path) -> None:
    shell = ShellgateToolset(gate)
    ag = agent(shell, "bash", touch())
    requests, history = await paused_run(ag)
    [call] = requests.approvals
    results = shell.deny(requests, call.tool_call_id, "carol", message="not on a Friday")
    out = await resume(ag, history, results)
    assert out.startswith("denied|")
    assert "carol: not on a Friday" in out
    assert not (tmp_path / "ws" / "made").exists()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "result"]
    assert (recs[1]["approver"], recs[1]["answer"]) == ("carol", "deny")
    assert recs[2]["outcome"] == "not approved"
    with pytest.raises(ShellgateError, match="not waiting"):  # answered once
        shell.approve(requests, call.tool_call_id, "carol")


async def test_a_replayed_approval_is_refused(gate: Gate, tmp_path: Path) -> None:
    shell = ShellgateToolset(gate)
    ag = agent(shell, "bash", touch())
    requests, history = await paused_run(ag)
    results = shell.approve(requests, requests.approvals[0].tool_call_id, "alice")
    assert (await resume(ag, history, results)).startswith("success|")
    (tmp_path / "ws" / "made").unlink()
    out = await resume(ag, history, results)
    assert out.startswith("failed|")
    assert "already used" in out
    assert not (tmp_path / "ws" / "made").exists()


def _altered(token: str, **change: Any) -> str:
    return dataclasses.replace(Approval.parse(token), **change).token


@pytest.mark.parametrize(
    ("forge", "why"),
    [
        (lambda t: _altered(t, approver="mallory"), "forged or altered"),
        (lambda t: _altered(t, expires_at=4e9), "forged or altered"),
        (lambda t: "sga1.e30.x", "malformed"),
        (lambda t: t[:-4] + "0000", "forged or altered"),
    ],
)
async def test_a_forged_approval_is_refused(
    gate: Gate, tmp_path: Path, forge: Any, why: str
) -> None:
    shell = ShellgateToolset(gate)
    ag = agent(shell, "bash", touch())
    requests, history = await paused_run(ag)
    cid = requests.approvals[0].tool_call_id
    token = shell.approve(requests, cid, "alice").metadata[cid][APPROVAL_METADATA_KEY]
    forged = DeferredToolResults(
        approvals={cid: ToolApproved()}, metadata={cid: {APPROVAL_METADATA_KEY: forge(token)}}
    )
    out = await resume(ag, history, forged)
    assert out.startswith("failed|")
    assert why in out
    assert not (tmp_path / "ws" / "made").exists()


@pytest.mark.parametrize(
    "yes",
    [
        pytest.param(lambda cid: {cid: True}, id="True"),
        pytest.param(lambda cid: {cid: ToolApproved()}, id="ToolApproved"),
    ],
)
async def test_pydantic_ais_own_yes_runs_it_approved_by_nobody_named(
    gate: Gate, tmp_path: Path, yes: Any
) -> None:
    """pydantic-ai's documented way to approve (``DeferredToolResults(approvals={id: True})``)."""
    shell = ShellgateToolset(gate)
    ag = agent(shell, "bash", touch())
    requests, history = await paused_run(ag)
    cid = requests.approvals[0].tool_call_id
    out = await resume(ag, history, DeferredToolResults(approvals=yes(cid)))
    assert out.startswith("success|")
    assert (tmp_path / "ws" / "made").exists()
    decision, approval, result = records(tmp_path)
    assert approval["approver"] == "pydantic-ai-user:agent"  # an unnamed person of the app
    assert (approval["answer"], approval["via"]) == ("allow_once", "approve")
    assert "names nobody" in approval["message"]
    assert {decision["call_id"], result["call_id"]} == {approval["call_id"]}
    assert result["exit_code"] == 0
    # A yes answers one paused call: replayed, it finds none, so the call is asked again.
    (tmp_path / "ws" / "made").unlink()
    replay = DeferredToolResults(approvals=yes(cid))
    again = await ag.run(message_history=history, deferred_tool_results=replay)
    assert isinstance(again.output, DeferredToolRequests)
    assert again.output.metadata[cid]["decision_id"] != decision["call_id"]
    assert not (tmp_path / "ws" / "made").exists()


async def test_a_bare_yes_with_require_named_runs_nothing(tmp_path: Path) -> None:
    async with pausing_gate(tmp_path, approval={"require_named": True}) as gate:
        shell = ShellgateToolset(gate)
        ag = agent(shell, "bash", touch())
        requests, history = await paused_run(ag)
        out = await resume(ag, history, requests.build_results(approve_all=True))
    assert out.startswith("failed|")
    assert "needs a person's approval" in out
    assert not (tmp_path / "ws" / "made").exists()
    assert records(tmp_path)[-2]["approver"] == "shellgate"  # the refusal is on the record


async def test_an_approval_covers_its_own_call_only(gate: Gate, tmp_path: Path) -> None:
    shell = ShellgateToolset(gate)
    requests, _ = await paused_run(agent(shell, "bash", touch()))
    results = shell.approve(requests, requests.approvals[0].tool_call_id, "alice")
    # Another run presents it for another command under the same tool call id.
    other = agent(shell, "bash", touch("other"))
    other_requests, other_history = await paused_run(other)
    out = await resume(other, other_history, results)
    assert out.startswith("failed|")
    assert "arguments differ" in out
    assert not list((tmp_path / "ws").iterdir())
    with pytest.raises(ShellgateError, match="identity"):
        shell.approve(other_requests, other_requests.approvals[0].tool_call_id, " ")
    with pytest.raises(ShellgateError, match="not a call shellgate paused"):
        shell.approve(other_requests, "no-such-call", "alice")


@pytest.mark.parametrize("yes", [True, False])
async def test_answered_inline_by_a_deferred_call_handler(
    gate: Gate, tmp_path: Path, yes: bool
) -> None:
    shell = ShellgateToolset(gate)

    async def ask_frank(
        ctx: RunContext[None], requests: DeferredToolRequests
    ) -> DeferredToolResults:
        answers = DeferredToolResults()
        for call in requests.approvals:
            if yes:
                answers.update(shell.approve(requests, call.tool_call_id, "frank"))
            else:
                answers.update(shell.deny(requests, call.tool_call_id, "frank", message="no"))
        return answers

    ag = Agent(
        one_call("bash", touch()),
        toolsets=[shell],
        capabilities=[HandleDeferredToolCalls(handler=ask_frank)],
    )
    out = (await ag.run("go")).output  # one run: the handler answers while it is paused
    assert out.startswith("success|") if yes else out.startswith("denied|")
    assert yes or "frank: no" in out
    assert (tmp_path / "ws" / "made").exists() is yes
    assert [(r["type"], r.get("approver")) for r in records(tmp_path)] == [
        ("decision", None),
        ("approval", "frank"),
        ("result", None),
    ]


async def test_background_task_and_its_output(gate: Gate) -> None:
    shell = ShellgateToolset(gate)
    start = {"command": "echo from-the-task", "description": "bg", "run_in_background": True}
    out = await said(agent(shell, "bash", start))
    task_id = out.split("task ", 1)[1].split()[0].strip(".:,")
    await gate.wait_task(task_id)
    read = await said(agent(shell, "bash_output", {"task_id": task_id}))
    assert "from-the-task" in read


async def test_a_cancelled_run_kills_the_command(gate: Gate, tmp_path: Path) -> None:
    command = f"sleep {unique_seconds(317)}"
    ag = agent(ShellgateToolset(gate), "bash", {"command": command, "description": "wait"})
    run = asyncio.ensure_future(ag.run("go"))
    deadline = asyncio.get_running_loop().time() + 20
    while not pids_with_arg(command) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert pids_with_arg(command)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not pids_with_arg(command)  # killed before the cancellation came through
    assert records(tmp_path)[-1]["outcome"] == "aborted"


# -- GatedToolset around another toolset's shell tool ----------------------------------------


def run_shell_toolset(ws: Path, calls: list[str]) -> FunctionToolset[None]:
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool
    def run_shell(
        ctx: RunContext[None], cmd: str, cwd: str | None = None, timeout_s: float = 30
    ) -> str:
        """Run a shell command."""
        calls.append(cmd)
        done = subprocess.run(  # noqa: S602 - the tool under test runs shell text
            cmd,
            shell=True,
            cwd=ws / (cwd or "."),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
        )
        return f"exit {done.returncode}: {done.stdout}"

    @tools.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return tools


@pytest.fixture
def wrapped(gate: Gate, tmp_path: Path) -> tuple[GatedToolset[None], list[str]]:
    calls: list[str] = []
    inner = run_shell_toolset(tmp_path / "ws", calls)
    return GatedToolset(
        inner, gate=gate, shell_tools={"run_shell": ShellTool(command="cmd", workdir="cwd")}
    ), calls


async def test_wrapped_allow_calls_the_wrapped_tool(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path
) -> None:
    toolset, calls = wrapped
    out = await said(agent(toolset, "run_shell", {"cmd": "echo wrapped-ran"}))
    assert out.startswith("success|")
    assert "exit 0: wrapped-ran" in out
    assert calls == ["echo wrapped-ran"]
    decision, handoff = records(tmp_path)
    assert (decision["type"], decision["decision"]) == ("decision", "allow")
    assert decision["command"] == "echo wrapped-ran"
    assert handoff == {**handoff, "type": "handoff", "runner": "host"}
    assert handoff["call_id"] == decision["call_id"]  # one decision, spent by the handoff
    assert await said(agent(toolset, "add", {"a": 2, "b": 3})) == "success|5"


async def test_wrapped_deny_never_calls_it(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path
) -> None:
    toolset, calls = wrapped
    (tmp_path / "ws" / "keep").write_text("x")
    out = await said(agent(toolset, "run_shell", {"cmd": "rm keep"}))
    assert out.startswith("failed|")
    assert "no deleting" in out
    assert calls == []
    assert (tmp_path / "ws" / "keep").exists()


async def test_wrapped_ask_resumes_with_a_person(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path
) -> None:
    toolset, calls = wrapped
    (tmp_path / "ws" / "sub").mkdir()
    ag = agent(toolset, "run_shell", {"cmd": "touch made", "cwd": "sub"})
    requests, history = await paused_run(ag)
    assert calls == []
    cid = requests.approvals[0].tool_call_id
    assert "touch made" in requests.metadata[cid]["question"]
    results = toolset.approve(requests, cid, "dave@example.com")
    out = await resume(ag, history, results)
    assert out.startswith("success|")
    assert calls == ["touch made"]
    assert (tmp_path / "ws" / "sub" / "made").exists()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "handoff"]
    assert recs[0]["workdir"] == str(tmp_path / "ws" / "sub")
    assert recs[1]["approver"] == "dave@example.com"
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}

    again = await resume(ag, history, results)  # replayed
    assert again.startswith("failed|")
    assert "already used" in again
    assert calls == ["touch made"]
    assert records(tmp_path)[-1]["outcome"] == "not approved"  # the replay is on the record


async def test_wrapped_refuses_forged_approvals_and_takes_a_bare_yes(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path
) -> None:
    toolset, calls = wrapped
    ag = agent(toolset, "run_shell", {"cmd": "touch made"})
    requests, history = await paused_run(ag)
    cid = requests.approvals[0].tool_call_id
    token = toolset.approve(requests, cid, "alice").metadata[cid][APPROVAL_METADATA_KEY]
    forged = DeferredToolResults(
        approvals={cid: ToolApproved()},
        metadata={cid: {APPROVAL_METADATA_KEY: _altered(token, approver="mallory")}},
    )
    out = await resume(ag, history, forged)
    assert out.startswith("failed|")
    assert "forged or altered" in out
    assert calls == []
    assert records(tmp_path)[-2]["approver"] == "shellgate"  # refused on the record
    # A forgery cannot burn the person's approval: the genuine one still runs it, once.
    genuine = DeferredToolResults(
        approvals={cid: ToolApproved()}, metadata={cid: {APPROVAL_METADATA_KEY: token}}
    )
    assert (await resume(ag, history, genuine)).startswith("success|")
    assert calls == ["touch made"]

    # pydantic-ai's own bare yes hands it to the wrapped tool, approved by nobody named.
    requests, history = await paused_run(ag)
    bare = await resume(ag, history, requests.build_results(approve_all=True))
    assert bare.startswith("success|")
    assert calls == ["touch made", "touch made"]
    approval, handoff = records(tmp_path)[-2:]
    assert approval["approver"] == "pydantic-ai-user:agent"
    assert (handoff["type"], handoff["call_id"]) == ("handoff", approval["call_id"])


async def test_wrapped_bare_yes_with_require_named_never_calls_it(tmp_path: Path) -> None:
    calls: list[str] = []
    async with pausing_gate(tmp_path, approval={"require_named": True}) as gate:
        toolset = GatedToolset(
            run_shell_toolset(tmp_path / "ws", calls), gate=gate, shell_tools={"run_shell": "cmd"}
        )
        ag = agent(toolset, "run_shell", {"cmd": "touch made"})
        requests, history = await paused_run(ag)
        bare = await resume(ag, history, requests.build_results(approve_all=True))
    assert "needs a person's approval" in bare
    assert calls == []
    assert records(tmp_path)[-2]["approver"] == "shellgate"  # then its result record


@pytest.mark.parametrize(
    "changed", [{"cmd": "touch other"}, {"cmd": "touch made", "timeout_s": 99}]
)
async def test_wrapped_approval_is_bound_to_all_the_arguments(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path, changed: dict[str, Any]
) -> None:
    toolset, calls = wrapped
    ag = agent(toolset, "run_shell", {"cmd": "touch made"})
    requests, history = await paused_run(ag)
    cid = requests.approvals[0].tool_call_id
    results = toolset.approve(requests, cid, "alice")
    # timeout_s is no argument of the gate's, but the person approved the call with its default
    results.approvals[cid] = ToolApproved(override_args=changed)
    out = await resume(ag, history, results)
    assert "arguments differ" in out
    assert calls == []


async def test_wrapped_no_from_a_person(
    wrapped: tuple[GatedToolset[None], list[str]], tmp_path: Path
) -> None:
    toolset, calls = wrapped
    ag = agent(toolset, "run_shell", {"cmd": "touch made"})
    requests, history = await paused_run(ag)
    cid = requests.approvals[0].tool_call_id
    out = await resume(ag, history, toolset.deny(requests, cid, "erin", message="no"))
    assert out.startswith("denied|")
    assert "erin: no" in out
    assert calls == []
    assert records(tmp_path)[1]["approver"] == "erin"


async def test_a_misspelt_shell_tool_is_refused_at_start(gate: Gate, tmp_path: Path) -> None:
    calls: list[str] = []
    toolset = GatedToolset(
        run_shell_toolset(tmp_path / "ws", calls), gate=gate, shell_tools={"run_shel": "cmd"}
    )
    with pytest.raises(ShellgateError, match="'run_shel' not among the tools"):
        await agent(toolset, "run_shell", {"cmd": "echo hi"}).run("go")
    assert calls == []


async def test_an_argv_command_is_decided_as_its_shell_text(gate: Gate, tmp_path: Path) -> None:
    ran: list[list[str]] = []
    tools: FunctionToolset[None] = FunctionToolset()

    @tools.tool_plain
    def execute(argv: list[str]) -> str:
        """Run a program."""
        ran.append(argv)
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout

    toolset = GatedToolset(tools, gate=gate, shell_tools={"execute": "argv"})
    out = await said(agent(toolset, "execute", {"argv": ["echo", "a b"]}))
    assert "a b" in out
    out = await said(agent(toolset, "execute", {"argv": ["rm", "-rf", "x y"]}))
    assert "no deleting" in out
    assert ran == [["echo", "a b"]]
    assert [r["command"] for r in records(tmp_path) if r["type"] == "decision"] == [
        "echo 'a b'",
        "rm -rf 'x y'",
    ]


# -- the docs' examples, run as written ---------------------------------------------------


def docs_blocks() -> list[str]:
    """The ```python blocks of docs/integrations.md's "pydantic-ai" section."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("\n## pydantic-ai\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", section, flags=re.M | re.S)


def test_every_docs_block_is_run_here() -> None:
    program, wrapping = docs_blocks()  # a new block needs a test of its own
    assert "FunctionModel(" in program  # offline: no provider, no API key
    assert "GatedToolset(" in wrapping


@pytest.mark.parametrize(
    ("answer", "made", "read"),
    [
        pytest.param("y\n", True, "The shell said:", id="approved"),
        pytest.param("n\nnot in my workspace\n", False, "not in my workspace", id="denied"),
    ],
)
def test_the_docs_program_runs_as_written(
    tmp_path: Path, answer: str, made: bool, read: str
) -> None:
    """No config, no model provider, no key: what a reader who copies it gets."""
    (tmp_path / "program.py").write_text(docs_blocks()[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "program.py"],
        cwd=tmp_path,
        input=answer,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Allow this command? `touch .pre-commit-config.yaml`" in done.stdout
    assert read in done.stdout
    assert (tmp_path / ".pre-commit-config.yaml").exists() is made
    lines = (tmp_path / "shellgate-audit.jsonl").read_text().splitlines()
    [approval] = [r for r in map(json.loads, lines) if r["type"] == "approval"]
    assert approval["approver"] == getpass.getuser()
    assert approval["answer"] == ("allow_once" if made else "deny")


async def test_the_docs_wrapping_block_gates_the_shell_tools(gate: Gate, tmp_path: Path) -> None:
    """The block as written, given the ``my_toolset`` and ``gate`` it names."""
    ran: list[str] = []
    my_toolset: FunctionToolset[None] = FunctionToolset()

    @my_toolset.tool_plain
    def run_shell(cmd: str, cwd: str = ".", why: str = "") -> str:
        """Run a shell command."""
        ran.append(cmd)
        return "ran"

    @my_toolset.tool_plain(name="exec")
    def run_program(argv: list[str]) -> str:
        """Run a program."""
        ran.append(shlex.join(argv))
        return "ran"

    @my_toolset.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    names: dict[str, Any] = {"my_toolset": my_toolset, "gate": gate}
    exec(docs_blocks()[1], names)  # noqa: S102 - the docs' block, run as written
    tools = names["tools"]
    said_ok = await said(agent(tools, "run_shell", {"cmd": "echo hi", "why": "greet"}))
    assert said_ok == "success|ran"
    assert "no deleting" in await said(agent(tools, "exec", {"argv": ["rm", "x"]}))
    assert await said(agent(tools, "add", {"a": 1, "b": 2})) == "success|3"
    assert ran == ["echo hi"]
    decisions = records(tmp_path, "decision")
    assert [(r["description"], r["decision"]) for r in decisions] == [
        ("greet", "allow"),
        ("exec (wrapped)", "deny"),
    ]


# -- packaging -------------------------------------------------------------------------


def test_missing_pydantic_ai_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "try:\n    import shellgate.integrations.pydantic_ai\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert "pip install 'shellgate[pydantic-ai]'" in out


def test_core_never_imports_integrations() -> None:
    code = (
        "import sys, shellgate, shellgate.gate, shellgate.mcp_server, shellgate.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic_ai', "
        "'shellgate.integrations.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"
