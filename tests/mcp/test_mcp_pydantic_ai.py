"""pydantic-ai's ``MCPToolset`` against a real ``shellgate mcp``: asks get answered.

``MCPToolset`` (pydantic-ai-slim 2.68 and later, FastMCP 4 underneath) negotiates
the modern protocol. Up to some 2.7x release it warned on entering that its
``elicitation_handler`` "will never be called" (2.78 no longer does) — true of
server-initiated elicitation, which the modern protocol has no channel for, but
FastMCP's client answers an ``input_required`` result by dispatching its embedded
elicitation to that same handler (``fastmcp.client.Client._drive_input_required`` →
``session.dispatch_input_request``). So the handler is the hook: the test lets the
warning pass where a release gives it and shows the handler called, once per ask.

The model is pydantic-ai's own ``FunctionModel``, scripted; the tool calls are real.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import mcp_types as types
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from shellgate.mcp.ask import DECLINED
from tests.mcp.mcp_helpers import audit_records, server_argv, server_env, write_config

NEVER_CALLED = ".*`elicitation_handler` will never be called"


class Person:
    """The pydantic-ai elicitation handler: answers from a script, keeps the questions."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)
        self.questions: list[str] = []

    async def __call__(
        self, message: str, response_type: Any, params: Any, context: Any
    ) -> types.ElicitResult:
        self.questions.append(message)
        action: Any = self.actions.pop(0)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)


def scripted(*calls: dict[str, str]) -> FunctionModel:
    """A model that makes these bash calls one per turn, then says "done"."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(m, ModelResponse) for m in messages)
        if turn < len(calls):
            return ModelResponse(parts=[ToolCallPart("bash", calls[turn])])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def toolset(config: Path, person: Person) -> MCPToolset[None]:
    argv = server_argv(config)
    # keep_alive=False: the server process ends with the toolset's session
    transport = StdioTransport(argv[0], argv[1:], env=server_env(), keep_alive=False)
    # a generous start-up deadline: the server process starts on a busy machine
    return MCPToolset(transport, elicitation_handler=person, init_timeout=60)


def tool_answers(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    """What the model read back for each tool call: ('ok'|'retry', text)."""
    seen: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                seen.append(("ok", str(part.content)))
            elif isinstance(part, RetryPromptPart):
                seen.append(("retry", str(part.content)))
    return seen


async def run(config: Path, person: Person, *calls: dict[str, str]) -> list[tuple[str, str]]:
    agent = Agent(scripted(*calls), toolsets=[toolset(config, person)])
    with warnings.catch_warnings():
        # given by the releases that still warn; the handler is called all the same
        warnings.filterwarnings("ignore", message=NEVER_CALLED, category=UserWarning)
        async with agent:
            result = await agent.run("use the shell")
    assert result.output == "done"
    return tool_answers(result.all_messages())


async def test_an_ask_is_approved_through_the_elicitation_handler_and_an_allow_runs(
    tmp_path: Path,
) -> None:
    person = Person("accept")
    answers = await run(
        write_config(tmp_path),
        person,
        {"command": "touch agent.txt", "description": "make the file"},
        {"command": "echo hello", "description": "greet"},
    )
    assert answers == [("ok", "(no output)"), ("ok", "hello\n")]
    assert (tmp_path / "ws" / "agent.txt").exists()
    # "will never be called" — and it was, once, for the ask only
    assert len(person.questions) == 1
    assert person.questions[0].startswith("Allow this command? `touch agent.txt`")

    approvals = [r for r in audit_records(tmp_path) if r.get("type") == "approval"]
    assert [(r["via"], r["answer"], r["approver"]) for r in approvals] == [
        ("approve", "allow_once", "mcp-user:agent")
    ]


async def test_a_declined_ask_reaches_the_model_and_nothing_runs(
    tmp_path: Path,
) -> None:
    person = Person("decline")
    answers = await run(
        write_config(tmp_path),
        person,
        {"command": "touch nope.txt", "description": "make the file"},
    )
    [(_, text)] = answers  # the model reads the refusal (how it is framed is pydantic-ai's)
    assert text.startswith("Error: not approved (mcp-user:agent: ")
    assert DECLINED in text
    assert not (tmp_path / "ws" / "nope.txt").exists()
    assert len(person.questions) == 1
