"""pydantic-ai: shellgate's tools as a toolset, and the gate in front of any toolset's shell tools.

``pip install 'shellgate[pydantic-ai]'``. Two toolsets, both on the public API
only (``gate.decide`` / ``gate.approve`` / ``gate.call`` / ``gate.handoff``):

* :class:`ShellgateToolset` — ``bash``, ``bash_output`` and ``bash_kill`` with the
  gate's own schemas and descriptions; shellgate runs the commands.
* :class:`GatedToolset` — wraps any toolset (an MCP server's, a ``FunctionToolset``
  with a ``run_shell`` tool) and puts the gate in front of the tools named as shell
  tools; the wrapped tool runs the command, shellgate only decides and asks.

Every call of a shell tool is decided once. ``allow`` runs it (``gate.call``, or
``gate.handoff`` and then the wrapped tool); ``deny`` fails the tool call with the
gate's refusal text (:class:`~pydantic_ai.exceptions.ToolFailed`: the model reads
exactly what it reads over MCP, flagged as an error, and the run goes on); ``ask``
raises :class:`~pydantic_ai.exceptions.ApprovalRequired`, so the run ends with
:class:`~pydantic_ai.tools.DeferredToolRequests` whose metadata holds the gate's
``question`` and ``decision_id``. The host shows the question to a person and
resumes the run with ``toolset.approve(...)`` / ``toolset.deny(...)``: each names
that person to the gate (the audit log's ``approval`` record) and builds the
:class:`~pydantic_ai.tools.DeferredToolResults` entry, the approval sealed by the
gate in its metadata. pydantic-ai's own bare ``True`` or ``ToolApproved()`` is
accepted too, recorded as approved by an unnamed person of the application
(``pydantic-ai-user:<subject>``), unless ``[approval] require_named`` refuses it
(docs/integrations.md).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

try:
    from pydantic_ai import RunContext
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.tools import (
        AgentDepsT,
        DeferredToolRequests,
        DeferredToolResults,
        ToolDefinition,
    )
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "shellgate.integrations.pydantic_ai needs pydantic-ai: pip install 'shellgate[pydantic-ai]'"
    ) from exc
from pydantic_core import SchemaValidator, core_schema

from shellgate.errors import ShellgateError
from shellgate.integrations._paused import PausedCalls
from shellgate.integrations._pydantic_ai_keeper import (
    APPROVAL_METADATA_KEY,
    Keeper,
    forget,
    token_of,
)
from shellgate.tools import render
from shellgate.tools.resume import sandbox_refusal

if TYPE_CHECKING:
    from shellgate.gate import Gate

__all__ = ["APPROVAL_METADATA_KEY", "GatedToolset", "ShellTool", "ShellgateToolset"]

# The gate validates arguments itself, with the contract's messages (tools.md), so
# pydantic-ai only checks that they are an object, as it does for MCP tools.
_OBJECT = SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)


class ShellgateToolset(AbstractToolset[AgentDepsT]):
    """``bash``, ``bash_output`` and ``bash_kill``, run by shellgate through ``gate``.

    One owner at the gate per toolset: ``subject``/``tenant``/``session`` (the
    gate's defaults when ``None``); an approval is bound to it. The toolset keeps
    the calls it paused, for :meth:`approve` and :meth:`deny`, in memory, as the
    gate keeps their decisions: resume in the same process, with the same gate.
    """

    def __init__(
        self,
        gate: Gate,
        *,
        subject: str | None = None,
        tenant: str | None = None,
        session: str | None = None,
        id: str | None = "shellgate",  # pydantic-ai's name for it
        max_retries: int | None = None,
    ) -> None:
        self.gate = gate
        self._id = id
        self.max_retries = max_retries
        self._keeper = Keeper(gate, PausedCalls(), subject, tenant, session)

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        retries = self.max_retries if self.max_retries is not None else ctx.max_retries
        return {
            s["name"]: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=s["name"],
                    description=s["description"],
                    parameters_json_schema=s["inputSchema"],
                ),
                max_retries=retries,
                args_validator=_OBJECT,
            )
            for s in self.gate.schemas("mcp")
        }

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[AgentDepsT],
        tool: ToolsetTool[AgentDepsT],
    ) -> str:
        keeper = self._keeper
        if name != "bash":  # bash_output / bash_kill run no command: nothing to decide
            return keeper.answer(await keeper.call(name, tool_args))
        if ctx.tool_call_approved:
            token = token_of(ctx.tool_call_metadata)
            if token is not None:  # the gate checks it: sealed, this call, once, in time
                forget(keeper.paused, token)
                return keeper.answer(await keeper.call(name, tool_args, approval=token))
            resumed = keeper.resumed_without_approval(ctx, name, tool_args)
            if resumed is not None:  # approved by nobody named: run, or refused (require_named)
                paused, unnamed = resumed
                if unnamed is not None:
                    return keeper.answer(await keeper.call(name, tool_args, approval=unnamed))
                return keeper.answer(await keeper.call(name, tool_args, decision=paused.decision))
        decision = await keeper.decide(tool_args)
        if decision.effect == "deny":
            keeper.refuse(decision.text or render.error(decision.reason))
        if decision.needs_approval:
            keeper.pause(decision, ctx, name, tool_args, tool_args)
        return keeper.answer(await keeper.call(name, tool_args, decision=decision))

    def approve(
        self, requests: DeferredToolRequests, tool_call_id: str, approver: str
    ) -> DeferredToolResults:
        """A person's yes to a paused call: the entry to resume the run with.

        ``approver`` is that person's identity; the gate writes it to the audit
        log's ``approval`` record now. The approval, sealed by the gate, travels in
        the entry's metadata (``APPROVAL_METADATA_KEY``); on resume the gate runs the
        call only if it is that exact call, not run before, and not expired. Merge
        several answers with ``DeferredToolResults.update``.
        """
        return self._keeper.approve(requests, tool_call_id, approver)

    def deny(
        self,
        requests: DeferredToolRequests,
        tool_call_id: str,
        approver: str,
        *,
        message: str | None = None,
    ) -> DeferredToolResults:
        """A person's no: the entry (a ``ToolDenied``) to resume the run with.

        The gate records the answer with ``approver`` and spends the decision;
        the model reads the gate's refusal, with ``message`` (the person's words).
        """
        return self._keeper.deny(requests, tool_call_id, approver, message)


@dataclass(frozen=True)
class ShellTool:
    """Where a wrapped shell tool keeps its command, and its workdir and description if any.

    ``command`` names the argument holding the command: a string (shell text), or a
    list of strings (an argv, decided as its ``shlex.join``).
    """

    command: str = "command"
    workdir: str | None = None
    description: str | None = None

    def gate_arguments(self, tool: str, arguments: Mapping[str, object]) -> dict[str, object]:
        """The gate's ``bash`` arguments for one call of the wrapped tool."""
        command = arguments.get(self.command)
        if isinstance(command, list | tuple) and all(isinstance(a, str) for a in command):
            command = shlex.join(command)
        if not isinstance(command, str):
            raise ToolFailed(
                render.error(
                    f"{tool}: its command (argument {self.command!r}) is not a string; "
                    "shellgate cannot decide it, so it was not run"
                )
            )
        described = arguments.get(self.description) if self.description else None
        out: dict[str, object] = {
            "command": command,
            "description": described if isinstance(described, str) else f"{tool} (wrapped)",
        }
        workdir = arguments.get(self.workdir) if self.workdir else None
        if isinstance(workdir, os.PathLike):
            workdir = os.fspath(workdir)
        if workdir is not None:
            out["workdir"] = workdir  # the gate refuses anything but a string
        return out


@dataclass
class GatedToolset(WrapperToolset[AgentDepsT]):
    """The gate in front of another toolset's shell tools; the wrapped tool runs them.

    ``shell_tools`` maps each shell tool's name to where its arguments are (a
    :class:`ShellTool`, or just the name of its command argument). Other tools
    pass through untouched. Only the decision and the approval are shellgate's
    (both audited, then handed to the wrapped tool with ``gate.handoff``): the
    command runs in the wrapped tool, outside shellgate's executor and sandbox,
    and its result is not in shellgate's audit log. A decision that requires
    shellgate's sandbox is therefore refused.
    """

    gate: Gate = field(kw_only=True)
    shell_tools: Mapping[str, ShellTool | str] = field(kw_only=True)
    subject: str | None = field(default=None, kw_only=True)
    tenant: str | None = field(default=None, kw_only=True)
    session: str | None = field(default=None, kw_only=True)
    paused: PausedCalls = field(default_factory=PausedCalls, kw_only=True, repr=False)

    @property
    def _keeper(self) -> Keeper:
        return Keeper(self.gate, self.paused, self.subject, self.tenant, self.session)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        tools = await self.wrapped.get_tools(ctx)
        if missing := sorted(set(self.shell_tools) - set(tools)):
            # A misspelt name would leave the real shell tool ungated: refuse to start.
            raise ShellgateError(
                f"shell tool(s) {', '.join(map(repr, missing))} not among the tools of "
                f"{self.wrapped.label} ({', '.join(map(repr, sorted(tools))) or 'none'})"
            )
        return tools

    def _spec(self, name: str) -> ShellTool | None:
        spec = self.shell_tools.get(name)
        return ShellTool(command=spec) if isinstance(spec, str) else spec

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[AgentDepsT],
        tool: ToolsetTool[AgentDepsT],
    ) -> Any:
        spec = self._spec(name)
        if spec is None:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        keeper = self._keeper
        gate_args = spec.gate_arguments(name, tool_args)
        if ctx.tool_call_approved:
            token = token_of(ctx.tool_call_metadata)
            if (
                token is not None
            ):  # spent at the gate, on the record; refused unless it covers this call
                keeper.handoff(name, tool_args, gate_args, ctx, approval=token)
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
            resumed = keeper.resumed_without_approval(ctx, name, tool_args)
            if resumed is not None:  # approved by nobody named: handed off, or refused
                paused, unnamed = resumed
                if unnamed is not None:
                    keeper.handoff(
                        name, tool_args, paused.gate_arguments, ctx, approval=unnamed.token
                    )
                    return await self.wrapped.call_tool(name, tool_args, ctx, tool)
                # require_named: the gate refuses it, on the record
                keeper.handoff(
                    name, tool_args, paused.gate_arguments, ctx, decision=paused.decision
                )
        decision = await keeper.decide(gate_args, host_runs=True)  # the wrapped tool runs it
        if decision.effect == "deny":
            keeper.refuse(decision.text or render.error(decision.reason))
        if decision.sandboxed:
            by_policy = decision.verdict is not None and decision.verdict.require_sandbox
            keeper.refuse(render.error(f"{name} was not run: {sandbox_refusal(by_policy)}"))
        if decision.needs_approval:
            keeper.pause(decision, ctx, name, tool_args, gate_args)
        keeper.handoff(name, tool_args, gate_args, ctx, decision=decision)  # spent, on the record
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    def approve(
        self, requests: DeferredToolRequests, tool_call_id: str, approver: str
    ) -> DeferredToolResults:
        """As :meth:`ShellgateToolset.approve`; on resume the wrapped tool runs the call."""
        return self._keeper.approve(requests, tool_call_id, approver)

    def deny(
        self,
        requests: DeferredToolRequests,
        tool_call_id: str,
        approver: str,
        *,
        message: str | None = None,
    ) -> DeferredToolResults:
        """As :meth:`ShellgateToolset.deny`; the wrapped tool is never called."""
        return self._keeper.deny(requests, tool_call_id, approver, message)
