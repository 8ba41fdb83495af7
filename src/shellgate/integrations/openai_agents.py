"""The gate in front of an OpenAI Agents SDK agent's shell.

Install with ``pip install 'shellgate[openai-agents]'``. :class:`ShellgateTools`
gives an agent the gate's three tools as SDK ``FunctionTool``\\ s and, for
models trained on it, a local ``ShellTool`` whose executor is the gate. Built on
the public API only (:meth:`Gate.decide`, :meth:`Gate.approve`, :meth:`Gate.call`):

* **One decision per tool call.** The SDK looks at a call up to three times —
  ``needs_approval`` when it plans the call, the tool input guardrail, the
  invocation. The first look decides (``gate.decide``: one ``decision``
  record); the others reuse that decision, kept under the call's id, and the
  invocation runs on it (``gate.call(decision=…)`` / ``approval=…``).
* **allow** runs; **deny** never runs: the guardrail answers the model with
  the gate's refusal (``reject_content``); **ask** makes ``needs_approval``
  true, so the run stops with an interruption. The host shows
  :meth:`ShellgateTools.question` to a person and answers with
  :meth:`ShellgateTools.approve` / :meth:`ShellgateTools.reject`, which put
  that person on the record and into the SDK's ``RunState``; the resumed run
  executes on the sealed approval.

The approval is kept here as its string token, under the tool call's id, so a
``RunState`` taken to JSON and back (``to_string`` / ``RunState.from_string``)
resumes with it in the same process. Like every gate approval it does not
cross processes: a run resumed elsewhere decides the call again there, and an
``ask`` nobody approved in that process is refused, never run
(docs/integrations.md, "OpenAI Agents SDK").
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

try:
    from agents import (
        FunctionTool,
        RunContextWrapper,
        RunState,
        ShellActionRequest,
        ShellCallOutcome,
        ShellCommandOutput,
        ShellCommandRequest,
        ShellResult,
        ShellTool,
        ToolApprovalItem,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
    )
    from agents.tool_context import ToolContext
except ImportError as exc:  # the extra is missing: say which one
    raise ImportError(
        "shellgate.integrations.openai_agents needs the OpenAI Agents SDK "
        "(openai-agents>=0.24): pip install 'shellgate[openai-agents]'"
    ) from exc

from shellgate.errors import ShellgateError
from shellgate.gate import Gate, ToolResult
from shellgate.integrations._decided_calls import (
    DecidedCall,
    DecisionBook,
    cleaned,
    parsed,
    refusal_text,
)
from shellgate.tools import render

__all__ = ["SHELL_DESCRIPTION", "ShellgateTools"]

#: What a ShellTool command is called on the record (a shell call carries no description).
SHELL_DESCRIPTION = "command from the Agents SDK shell tool"


class ShellgateTools:
    """The gate's tools for one principal's Agents SDK runs, and the host's answers to asks.

    ``tools`` are ``bash``, ``bash_output`` and ``bash_kill`` with the gate's
    names, descriptions and JSON schemas (in strict form: optional properties
    are nullable, ``null`` meaning "not given"); :meth:`shell_tool` is a local
    ``ShellTool`` running through the same gate. ``subject``, ``tenant`` and
    ``session`` go with every gate call (the gate's defaults otherwise). Tool
    call ids key the decisions: they must be unique among one object's pending
    calls, as the SDK assumes within a run (model-made ids are).
    """

    def __init__(
        self,
        gate: Gate,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
    ) -> None:
        self.gate = gate
        self._book = DecisionBook(gate, subject=subject, tenant=tenant, session=session)
        self._guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._guard, name="shellgate"
        )
        self.tools: list[FunctionTool] = [
            self._function_tool(schema["function"]) for schema in gate.schemas("openai")
        ]

    # -- function tools: bash, bash_output, bash_kill ------------------------------------

    def _function_tool(self, spec: Mapping[str, Any]) -> FunctionTool:
        name = str(spec["name"])
        if name != "bash":  # runs no command: nothing to approve or refuse up front;
            # the gate still validates, fences and audits every call
            async def passthrough(ctx: ToolContext[Any], raw: str) -> str:
                return (await self._book.call(name, parsed(raw))).text

            return FunctionTool(
                name=name,
                description=str(spec["description"]),
                params_json_schema=_strict(spec["parameters"]),
                on_invoke_tool=passthrough,
                strict_json_schema=True,
            )
        return FunctionTool(
            name=name,
            description=str(spec["description"]),
            params_json_schema=_strict(spec["parameters"]),
            on_invoke_tool=self._invoke_bash,
            strict_json_schema=True,
            tool_input_guardrails=[self._guardrail],
            needs_approval=self._bash_needs_approval,
        )

    async def _bash_needs_approval(
        self, ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
    ) -> bool:
        return (await self._book.decided(call_id, "bash", [cleaned(params)])).needs_approval

    async def _guard(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        """A denied call never reaches the tool: the model reads the gate's refusal."""
        ctx = data.context
        call = await self._book.decided(ctx.tool_call_id, "bash", [parsed(ctx.tool_arguments)])
        refused = call.refusal
        if refused is not None:
            self._book.forget(ctx.tool_call_id)
            return ToolGuardrailFunctionOutput.reject_content(
                refusal_text(refused), output_info={"decision": refused.id}
            )
        return ToolGuardrailFunctionOutput.allow(output_info={"decision": call.decisions[0].id})

    async def _invoke_bash(self, ctx: ToolContext[Any], raw: str) -> str:
        call = await self._book.decided(ctx.tool_call_id, "bash", [parsed(raw)])
        self._book.forget(ctx.tool_call_id)  # the call that presents a decision spends it
        return (await self._book.run(call, 0)).text

    # -- the shell tool ---------------------------------------------------------------------

    def shell_tool(self, *, name: str = "shell") -> ShellTool:
        """A local ``ShellTool`` (the SDK's next-generation shell) whose executor is the gate.

        Each command of a shell call is one ``bash`` call through the gate, with
        its own decision, all decided up front. A deny of any command runs none
        of them; an ``ask`` pauses the run like a function tool's, and one
        person's answer covers the call. Approved, the commands run in order and
        the first one refused ends the call.
        """
        return ShellTool(executor=self._shell_executor, name=name, needs_approval=self._shell_needs)

    async def _shell_call(self, call_id: str, action: ShellActionRequest) -> DecidedCall:
        extra: dict[str, Any] = {"timeoutMs": action.timeout_ms} if action.timeout_ms else {}
        arguments: list[object] = [
            {"command": c, "description": SHELL_DESCRIPTION, **extra} for c in action.commands
        ]
        return await self._book.decided(call_id, "shell", arguments)

    async def _shell_needs(
        self, ctx: RunContextWrapper[Any], action: ShellActionRequest, call_id: str
    ) -> bool:
        # A deny needs no person: the executor answers it without running anything.
        return (await self._shell_call(call_id, action)).needs_approval

    async def _shell_executor(self, request: ShellCommandRequest) -> ShellResult:
        data = request.data
        call = await self._shell_call(data.call_id, data.action)
        self._book.forget(data.call_id)
        commands = list(data.action.commands)
        refused = call.refusal
        if refused is not None:
            blocked = commands[call.decisions.index(refused)]
            return ShellResult(
                [
                    _refused(
                        cmd,
                        refusal_text(d) if d.effect == "deny" else _not_run(blocked, "was denied"),
                    )
                    for cmd, d in zip(commands, call.decisions, strict=True)
                ]
            )
        outputs: list[ShellCommandOutput] = []
        stopped: str | None = None
        for index, cmd in enumerate(commands):
            if stopped is not None:
                outputs.append(_refused(cmd, _not_run(stopped, "was refused")))
                continue
            result = await self._book.run(call, index)
            outputs.append(_shell_output(cmd, result))
            if result.run is None and result.is_error:
                stopped = cmd
        return ShellResult(outputs)

    # -- the host's side: what to ask, and the person's answer ---------------------------------

    async def _pending(self, item: ToolApprovalItem) -> tuple[str, DecidedCall]:
        """The decided call an interruption stands for (decided now if this object never saw it)."""
        raw = item.raw_item
        call_id = _field(raw, "call_id")
        if not isinstance(call_id, str) or not call_id:
            raise ShellgateError("this interruption carries no tool call id")
        kind = _field(raw, "type")
        if kind == "shell_call":
            action = _field(raw, "action")
            commands = _field(action, "commands")
            if not isinstance(commands, list) or not commands:
                raise ShellgateError(f"shell call {call_id} carries no commands")
            timeout = _field(action, "timeout_ms")
            request = ShellActionRequest(
                [str(c) for c in commands], timeout if isinstance(timeout, int) else None
            )
            return call_id, await self._shell_call(call_id, request)
        if kind == "function_call" and item.tool_name == "bash":
            arguments = parsed(_field(raw, "arguments"))
            return call_id, await self._book.decided(call_id, "bash", [arguments])
        raise ShellgateError(f"{item.tool_name!r} is not a shellgate tool call")

    async def question(self, item: ToolApprovalItem) -> str:
        """What to show the person for this interruption: the gate's approval question."""
        _, call = await self._pending(item)
        refused = call.refusal
        if refused is not None:
            return refusal_text(refused)
        return "\n\n".join(d.question for d in call.decisions if d.question)

    async def approve(
        self, state: RunState[Any, Any], item: ToolApprovalItem, approver: str
    ) -> None:
        """``approver`` (a person's identity) says yes to this call; run ``state`` again after.

        The gate seals the approval and writes the ``approval`` record naming
        ``approver``; the SDK's ``state.approve`` lets the call run on resume, on
        that approval. A call the gate denies cannot be approved: it is rejected
        with the gate's refusal instead. Raises
        :class:`~shellgate.errors.ShellgateError` when the gate no longer holds
        the decision (it expired): reject it, or let the model call again.
        """
        call_id, call = await self._pending(item)
        refused = call.refusal
        if refused is not None:
            self._book.forget(call_id)
            state.reject(item, rejection_message=refusal_text(refused))
            return
        self._book.approve(call, approver)
        state.approve(item)

    async def reject(
        self,
        state: RunState[Any, Any],
        item: ToolApprovalItem,
        approver: str,
        message: str | None = None,
    ) -> None:
        """``approver`` says no (``message``: their words, for the model); nothing runs.

        The gate writes the ``approval`` record (``answer: "deny"``, naming
        ``approver``) and the call's ``result``; on resume the model reads the
        gate's refusal, which quotes the person's message.
        """
        call_id, call = await self._pending(item)
        self._book.forget(call_id)
        text = await self._book.reject(call, approver, message)
        state.reject(item, rejection_message=text or None)


def _strict(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The gate's JSON schema in strict form: all properties required, the optional ones nullable.

    Strict mode lists every property as required, so an optional one must admit
    ``null`` — which :func:`cleaned` drops again before the gate sees it.
    """
    schema = copy.deepcopy(dict(parameters))
    required = set(schema.get("required", ()))
    for name, prop in schema["properties"].items():
        if name in required:
            continue
        prop.pop("default", None)
        if isinstance(prop.get("type"), str):
            prop["type"] = [prop["type"], "null"]
        if "enum" in prop:
            prop["enum"] = [*prop["enum"], None]
    schema["required"] = list(schema["properties"])
    schema["additionalProperties"] = False
    return schema


def _field(item: object, name: str) -> Any:
    """A raw item's field, whether the SDK holds it as a model or as a dict."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def _not_run(command: str, why: str) -> str:
    return render.approval_refused(f"{render.code(command)} in the same shell call {why}")


def _refused(command: str, text: str) -> ShellCommandOutput:
    return ShellCommandOutput(stderr=text, command=command, outcome=ShellCallOutcome("exit", 1))


def _shell_output(command: str, result: ToolResult) -> ShellCommandOutput:
    """A gate result as shell tool output: the gate's text, and how the command ended."""
    run = result.run
    if run is None:
        return _refused(command, result.text)
    if run.timed_out:
        return ShellCommandOutput(
            stdout=result.text, command=command, outcome=ShellCallOutcome("timeout")
        )
    return ShellCommandOutput(
        stdout=result.text, command=command, outcome=ShellCallOutcome("exit", run.exit_code)
    )
