"""Claude Agent SDK adapter, driven through the SDK's Transport seam.

``FakeClaudeCode`` plays the CLI's side of the control protocol, as a real
``claude`` process would over stdio: it answers ``initialize``, then for each
Bash tool use of its script sends the ``hook_callback`` requests its registered
``PreToolUse`` matchers call for and, when it would prompt, a ``can_use_tool``
request; it records the SDK's responses and ends with a ``result``. The SDK's
own ``query()`` runs unchanged on top; no network, no CLI. Real gate, real
casbin policy in tmp, real audit log.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    ResultMessage,
    Transport,
    query,
)

from shellgate.audit.reader import verify
from shellgate.gate import Gate
from shellgate.hookspecs import hookimpl
from shellgate.integrations.claude_agent_sdk import (
    ClaudePermissions,
    PersonAnswer,
    can_use_tool,
    pre_tool_use_hook,
)
from shellgate.models import CallInfo, Decision
from shellgate.tools.resume import GateDecision
from tests.conftest import ROOT
from tests.integrations.pausing import pausing_gate, records

DEADLINE_S = 30.0  # a hung exchange fails the test instead of the run


class FakeClaudeCode(Transport):
    """The CLI's side of the SDK control protocol, scripted: one turn of tool uses."""

    def __init__(self, tool_uses: list[tuple[str, dict[str, Any]]], *, prompts: bool) -> None:
        self.tool_uses = tool_uses
        self.prompts = prompts  # as with --permission-prompt-tool stdio (can_use_tool set)
        self.outcomes: list[dict[str, Any]] = []
        self.matchers: list[tuple[str | None, list[str]]] = []
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._sent = 0
        self._turn: asyncio.Task[None] | None = None
        self._ready = False

    async def connect(self) -> None:
        self._ready = True

    def is_ready(self) -> bool:
        return self._ready

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request" and message["request"]["subtype"] == "initialize":
                hooks = message["request"].get("hooks") or {}
                self.matchers = [
                    (m.get("matcher"), m["hookCallbackIds"]) for m in hooks.get("PreToolUse", [])
                ]
                await self._out.put(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": message["request_id"],
                            "response": {
                                "commands": [],
                                "hook_on_failure_supported": True,
                                "hooks_applied": True,
                            },
                        },
                    }
                )
            elif kind == "user":
                self._turn = asyncio.get_running_loop().create_task(self._play())
            elif kind == "control_response":
                response = message["response"]
                self._waiting.pop(response["request_id"]).set_result(response)

    async def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        self._sent += 1
        request_id = f"cli_{self._sent}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self._out.put({"type": "control_request", "request_id": request_id, "request": request})
        response = await asyncio.wait_for(future, DEADLINE_S)
        if response["subtype"] != "success":
            return {"error": response.get("error")}
        return dict(response["response"])

    async def _play(self) -> None:
        for n, (tool, tool_input) in enumerate(self.tool_uses):
            use_id = f"toolu_{n}"
            outcome: dict[str, Any] = {"tool_use_id": use_id, "ran": False}
            decision = None
            for matcher, ids in self.matchers:
                if matcher is not None and not re.fullmatch(matcher, tool):
                    continue
                for callback_id in ids:
                    answer = await self._request(
                        {
                            "subtype": "hook_callback",
                            "callback_id": callback_id,
                            "tool_use_id": use_id,
                            "input": {
                                "session_id": "sess-1",
                                "transcript_path": "/tmp/t.jsonl",
                                "cwd": "/tmp",
                                "hook_event_name": "PreToolUse",
                                "tool_name": tool,
                                "tool_input": tool_input,
                                "tool_use_id": use_id,
                            },
                        }
                    )
                    outcome["hook"] = answer
                    decision = answer.get("hookSpecificOutput", {}).get("permissionDecision")
            if decision == "allow":
                outcome["ran"] = True
            elif decision != "deny" and self.prompts:
                reason = outcome.get("hook", {}).get("hookSpecificOutput", {})
                answer = await self._request(
                    {
                        "subtype": "can_use_tool",
                        "tool_name": tool,
                        "input": tool_input,
                        "tool_use_id": use_id,
                        "permission_suggestions": None,
                        "decision_reason": reason.get("permissionDecisionReason"),
                    }
                )
                outcome["permission"] = answer
                outcome["ran"] = answer.get("behavior") == "allow"
            self.outcomes.append(outcome)
        await self._out.put(
            {
                "type": "result",
                "subtype": "success",
                "duration_ms": 1,
                "duration_api_ms": 1,
                "is_error": False,
                "num_turns": 1,
                "session_id": "sess-1",
                "result": "done",
            }
        )

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await asyncio.wait_for(self._out.get(), DEADLINE_S)) is not None:
            yield message

    async def end_input(self) -> None:
        await self._out.put(None)  # stdin closed: the CLI finishes and exits

    async def close(self) -> None:
        self._ready = False
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        await self._out.put(None)


async def run(fake: FakeClaudeCode, options: ClaudeAgentOptions) -> list[dict[str, Any]]:
    messages = [m async for m in query(prompt="clean up", options=options, transport=fake)]
    assert isinstance(messages[-1], ResultMessage)
    assert len(fake.outcomes) == len(fake.tool_uses)
    return fake.outcomes


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("Bash", {"command": command, "description": "test step"})


class Person:
    """The host's way of asking someone: records the questions, answers as told."""

    def __init__(self, name: str, allow: bool, message: str | None = None) -> None:
        self.answer = PersonAnswer(name, allow, message)
        self.questions: list[str] = []

    async def __call__(self, decision: GateDecision) -> PersonAnswer:
        self.questions.append(decision.question or "")
        return self.answer


# -- can_use_tool ------------------------------------------------------------------------------


async def test_can_use_tool_allows_and_denies(gate: Gate, tmp_path: Path) -> None:
    fake = FakeClaudeCode([bash("echo hi"), bash("rm -r build")], prompts=True)
    [allowed, denied] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate)))
    assert allowed["permission"] == {"behavior": "allow", "updatedInput": bash("echo hi")[1]}
    assert allowed["ran"]
    assert denied["permission"]["behavior"] == "deny"
    assert denied["permission"]["message"].startswith("Error: denied by casbin rule")
    assert "no deleting" in denied["permission"]["message"]
    assert not denied["ran"]
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "handoff", "decision"]
    assert recs[1]["call_id"] == recs[0]["call_id"]  # the allowed call was handed to Claude
    decisions = [r for r in recs if r["type"] == "decision"]
    assert [r["decision"] for r in decisions] == ["allow", "deny"]
    assert [r["command"] for r in decisions] == ["echo hi", "rm -r build"]


async def test_can_use_tool_ask_approved_names_the_person(gate: Gate, tmp_path: Path) -> None:
    alice = Person("alice@example.com", allow=True)
    fake = FakeClaudeCode([bash("touch made")], prompts=True)
    [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate, ask=alice)))
    assert outcome["permission"]["behavior"] == "allow"
    assert outcome["ran"]
    assert "touch made" in alice.questions[0]
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "handoff"]
    assert {r["call_id"] for r in recs} == {recs[0]["call_id"]}
    assert (recs[1]["approver"], recs[1]["answer"]) == ("alice@example.com", "allow_once")
    assert verify(tmp_path / "audit.jsonl").ok


async def test_can_use_tool_ask_refused_by_the_person(gate: Gate, tmp_path: Path) -> None:
    carol = Person("carol", allow=False, message="not in prod")
    fake = FakeClaudeCode([bash("touch made")], prompts=True)
    [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate, ask=carol)))
    assert outcome["permission"]["behavior"] == "deny"
    assert "not approved (carol: not in prod)" in outcome["permission"]["message"]
    assert not outcome["ran"]
    approval = records(tmp_path)[-1]
    assert (approval["type"], approval["approver"], approval["answer"]) == (
        "approval",
        "carol",
        "deny",
    )


@pytest.mark.parametrize(
    ("ask", "why"),
    [
        pytest.param(None, "no person can be asked", id="nobody-to-ask"),
        pytest.param(lambda d: 1 / 0, "ZeroDivisionError", id="ask-raises"),
        pytest.param(lambda d: ("alice", True), "not a PersonAnswer", id="ask-returns-junk"),
        pytest.param(lambda d: PersonAnswer(" ", True), "who answered", id="nobody-named"),
    ],
)
async def test_ask_fails_closed(gate: Gate, tmp_path: Path, ask: Any, why: str) -> None:
    fake = FakeClaudeCode([bash("touch made")], prompts=True)
    [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate, ask=ask)))
    assert outcome["permission"]["behavior"] == "deny"
    assert why in outcome["permission"]["message"]
    assert records(tmp_path)[-1]["approver"] == "shellgate"


async def test_ask_times_out_closed(tmp_path: Path) -> None:
    never = asyncio.Event()

    async def silent(decision: GateDecision) -> PersonAnswer:
        await never.wait()
        raise AssertionError("unreachable")

    async with pausing_gate(tmp_path, approval={"timeout_ms": 200}) as g:
        fake = FakeClaudeCode([bash("touch made")], prompts=True)
        [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(g, ask=silent)))
    assert outcome["permission"]["behavior"] == "deny"
    assert "no answer within 200 ms" in outcome["permission"]["message"]


async def test_other_tools_go_to_the_fallback_or_are_denied(gate: Gate, tmp_path: Path) -> None:
    read = ("Read", {"file_path": "/etc/hostname"})
    fake = FakeClaudeCode([read], prompts=True)
    [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate)))
    assert outcome["permission"]["behavior"] == "deny"
    assert "decides only Bash" in outcome["permission"]["message"]

    seen: list[str] = []

    async def mine(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen.append(tool)
        return PermissionResultAllow()

    fake = FakeClaudeCode([read], prompts=True)
    [outcome] = await run(fake, ClaudeAgentOptions(can_use_tool=can_use_tool(gate, fallback=mine)))
    assert outcome["permission"]["behavior"] == "allow"
    assert seen == ["Read"]
    assert not (tmp_path / "audit.jsonl").exists() or records(tmp_path) == []


# -- PreToolUse hook ---------------------------------------------------------------------------


async def test_hook_answers_allow_deny_ask_with_reasons(gate: Gate, tmp_path: Path) -> None:
    fake = FakeClaudeCode(
        [bash("echo hi"), bash("rm -r build"), bash("touch made"), ("Read", {"file_path": "x"})],
        prompts=False,
    )
    options = ClaudeAgentOptions(hooks={"PreToolUse": [pre_tool_use_hook(gate)]})
    allowed, denied, asked, other = await run(fake, options)
    out = [o.get("hook", {}).get("hookSpecificOutput", {}) for o in (allowed, denied, asked)]
    assert [o["hookEventName"] for o in out] == ["PreToolUse"] * 3
    assert [o["permissionDecision"] for o in out] == ["allow", "deny", "ask"]
    assert out[0]["permissionDecisionReason"].startswith("shellgate: allow by casbin rule")
    assert "no deleting" in out[1]["permissionDecisionReason"]
    assert "touch made" in out[2]["permissionDecisionReason"]
    assert "hook" not in other  # the matcher is "Bash": Claude Code never asks about Read
    decisions = [r for r in records(tmp_path) if r["type"] == "decision"]
    assert [r["decision"] for r in decisions] == ["allow", "deny", "ask"]


async def test_hook_and_callback_share_one_decision_and_the_person_is_recorded(
    gate: Gate, tmp_path: Path
) -> None:
    alice = Person("alice@example.com", allow=True)
    sg = ClaudePermissions(gate, ask=alice)
    options = ClaudeAgentOptions(
        can_use_tool=sg.can_use_tool, hooks={"PreToolUse": [sg.hook_matcher()]}
    )
    fake = FakeClaudeCode([bash("touch made"), bash("echo fine")], prompts=True)
    asked, allowed = await run(fake, options)
    assert asked["hook"]["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert asked["permission"]["behavior"] == "allow"
    assert asked["ran"]
    assert "permission" not in allowed  # the hook allowed it: no prompt
    assert allowed["ran"]
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["decision", "approval", "handoff", "decision", "handoff"]
    assert recs[1]["call_id"] == recs[0]["call_id"]  # one decision for the asked call
    assert recs[2]["call_id"] == recs[0]["call_id"]
    assert recs[1]["approver"] == "alice@example.com"


async def test_hook_matcher_blocks_on_failure(gate: Gate) -> None:
    matcher = pre_tool_use_hook(gate)
    assert (matcher.matcher, matcher.on_failure) == ("Bash", "block")


def test_adapter_imports_the_sdk_only_when_used_and_names_the_extra() -> None:
    code = (
        "import sys, shellgate, shellgate.gate, shellgate.integrations\n"
        "assert 'claude_agent_sdk' not in sys.modules\n"
        "sys.modules['claude_agent_sdk'] = None\n"
        "try:\n"
        "    import shellgate.integrations.claude_agent_sdk\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pip install 'shellgate[claude-agent-sdk]'" in out.stdout


def test_docs_snippets(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    body = text.split("\n## Claude Agent SDK\n", 1)[1].split("\n## ", 1)[0]
    wiring, offline = re.findall(r"```python\n(.*?)```", body, flags=re.S)
    compile(wiring, "wiring", "exec")  # needs Claude Code and an account to run
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "shellgate.toml"
    config.write_text(f'[executor]\nworkspace = "{ws}"\n[audit]\npath = "{tmp_path}/audit.jsonl"\n')
    done = subprocess.run(
        [sys.executable, "-c", offline],
        capture_output=True,
        text=True,
        env={**os.environ, "SHELLGATE_CONFIG": str(config)},
        cwd=ws,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    allowed, denied, asked, hook = done.stdout.splitlines()
    assert allowed.startswith("PermissionResultAllow(")
    assert denied.startswith("PermissionResultDeny(")
    assert "denied by" in denied
    assert asked.startswith("PermissionResultAllow(")
    assert "'permissionDecision': 'deny'" in hook
    approvals = [r for r in records(tmp_path) if r["type"] == "approval"]
    assert [r["approver"] for r in approvals] == ["alice"]


# -- red team (issue 12): the command is decided where Claude Code runs it ---------------


async def test_the_hook_decides_in_claude_codes_working_directory(tmp_path: Path) -> None:
    """Claude Code runs Bash in the session's cwd (the hook input's ``cwd``), not in the
    gate's workspace. ``mkdir .ssh`` is allowed by the rules; run from the home directory
    it writes ~/.ssh, a protected path: deny, not the workspace's allow."""
    home = os.path.expanduser("~")
    async with pausing_gate(tmp_path) as gate:
        sg = ClaudePermissions(gate)
        hook_input = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": home,
                      "session_id": "s", "tool_input": {"command": "mkdir .ssh"},
                      "tool_use_id": "toolu_home"}
        said = await sg.pre_tool_use(hook_input, "toolu_home", {"signal": None})  # type: ignore[arg-type]
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[typeddict-item]
    [decision] = records(tmp_path, "decision")
    assert decision["workdir"] == os.path.realpath(home)


async def test_an_ask_held_from_the_hook_resumes_with_its_working_directory(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    async with pausing_gate(tmp_path) as gate:
        sg = ClaudePermissions(gate, ask=lambda d: PersonAnswer("alice", allow=True))
        tool_input = {"command": "touch notes.txt"}
        hook_input = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "cwd": str(elsewhere), "session_id": "s", "tool_input": tool_input,
                      "tool_use_id": "toolu_ask"}
        said = await sg.pre_tool_use(hook_input, "toolu_ask", {"signal": None})  # type: ignore[arg-type]
        assert said["hookSpecificOutput"]["permissionDecision"] == "ask"  # type: ignore[typeddict-item]
        from claude_agent_sdk import ToolPermissionContext

        answer = await sg.can_use_tool("Bash", tool_input,
                                       ToolPermissionContext(tool_use_id="toolu_ask"))
    assert isinstance(answer, PermissionResultAllow)
    kinds = [(r["type"], r["call_id"]) for r in records(tmp_path)]
    assert [k for k, _ in kinds] == ["decision", "approval", "handoff"]
    assert len({c for _, c in kinds}) == 1
    assert records(tmp_path, "decision")[0]["workdir"] == str(elsewhere.resolve())


class _AsksThenSandboxes:
    name = "asks-then-sandboxes"

    @hookimpl
    def shellgate_check(self, call: CallInfo) -> Decision | None:
        del call
        return Decision(effect="ask", reason="a person decides, then it runs sandboxed",
                        layer=self.name, require_sandbox=True)


async def test_the_hook_does_not_hand_claude_code_an_ask_that_must_run_sandboxed(
    tmp_path: Path,
) -> None:
    """An ``ask`` goes back to Claude Code, whose own prompt (without can_use_tool) lets
    the person run it on the host: a decision that holds only inside shellgate's
    sandbox must be refused there and then, as an allow of that kind is."""
    async with pausing_gate(tmp_path) as gate:
        gate.decider.register(_AsksThenSandboxes(), name=_AsksThenSandboxes.name)
        sg = ClaudePermissions(gate)
        hook_input = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "touch x"}, "tool_use_id": "toolu_sb"}
        said = await sg.pre_tool_use(hook_input, "toolu_sb", {"signal": None})  # type: ignore[arg-type]
    out = cast(dict[str, Any], said.get("hookSpecificOutput"))
    assert out["permissionDecision"] == "deny"
    assert "sandbox" in out["permissionDecisionReason"]
    assert records(tmp_path)[-1]["outcome"] == "denied"


# -- issue 22: Claude Code runs the command itself, so a sandbox decision asks ---------


async def test_the_hook_asks_for_a_command_the_policy_would_only_confine(tmp_path: Path) -> None:
    """``sandbox`` means "unasked, but confined"; Claude Code would run it bare, so it is
    an ask with that reason, and approved it is handed to Claude Code."""
    async with pausing_gate(tmp_path, policy={"default": "sandbox"}) as gate:
        sg = ClaudePermissions(gate, ask=lambda d: PersonAnswer("alice", allow=True))
        tool_input = {"command": "./build.sh"}
        hook_input = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "cwd": str(gate.executor.workspace), "session_id": "s",
                      "tool_input": tool_input, "tool_use_id": "toolu_conf"}
        said = await sg.pre_tool_use(hook_input, "toolu_conf", {"signal": None})  # type: ignore[arg-type]
        out = cast(dict[str, Any], said.get("hookSpecificOutput"))
        assert out["permissionDecision"] == "ask"
        assert "the host runs the command itself" in out["permissionDecisionReason"]
        from claude_agent_sdk import ToolPermissionContext

        answer = await sg.can_use_tool("Bash", tool_input,
                                       ToolPermissionContext(tool_use_id="toolu_conf"))
        # the neighbour: what the rules allow is still allowed to Claude Code, unasked
        echo = {**hook_input, "tool_input": {"command": "echo hi"}, "tool_use_id": "toolu_ok"}
        allowed = await sg.pre_tool_use(echo, "toolu_ok", {"signal": None})  # type: ignore[arg-type]
    assert isinstance(answer, PermissionResultAllow)
    assert cast(dict[str, Any], allowed.get("hookSpecificOutput"))["permissionDecision"] == "allow"
    decision = records(tmp_path, "decision")[0]
    assert (decision["decision"], decision["layer"]) == ("ask", "sandbox")
    assert [r["type"] for r in records(tmp_path)][:3] == ["decision", "approval", "handoff"]
