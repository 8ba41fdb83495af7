"""LangChain: shellgate's tools as ``BaseTool``\\s, and :func:`gated` for any shell tool.

Needs the ``langchain`` extra (``pip install 'shellgate[langchain]'``). Built on
the public API alone: every call is decided once by :meth:`Gate.decide`, then

* ``deny`` never runs: invoked with a ``ToolCall``, the tool answers a
  ``ToolMessage(status="error")`` carrying the gate's refusal text (invoked with
  plain arguments, that text);
* ``allow`` runs — shellgate's own tools through :meth:`Gate.call` on that
  decision, a :func:`gated` tool by invoking the wrapped tool;
* ``ask`` pauses: :class:`ApprovalRequired` is raised, carrying the decision
  and the paused call. The host shows ``decision.question`` to a person and
  resumes with :meth:`ApprovalRequired.resume` (or the tool's :meth:`aresume`),
  passing :meth:`Gate.approve`'s answer, so the audit log names that person.

The tools are asynchronous (the gate is): use ``ainvoke``. LangGraph's
``interrupt`` is not used; a graph node can catch :class:`ApprovalRequired` and
interrupt itself (docs/integrations.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

try:
    from langchain_core.messages import ToolCall, ToolMessage
    from langchain_core.tools import BaseTool, ToolException
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "shellgate.integrations.langchain needs langchain-core: "
        "pip install 'shellgate[langchain]'"
    ) from exc
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from shellgate.approval.sealed import Approval
from shellgate.errors import ShellgateError
from shellgate.gate import Gate
from shellgate.integrations._paused import Kept
from shellgate.tools import render
from shellgate.tools.resume import GateDecision
from shellgate.tools.schemas import TOOLS, input_schema

__all__ = ["ApprovalRequired", "GatedTool", "ShellgateTool", "gated", "shellgate_tools"]

#: Paused calls a :class:`GatedTool` keeps for their resume (the oldest is dropped).
MAX_PAUSED = 1024

Output = ToolMessage | str
ToolInput = str | dict[str, Any] | ToolCall


class ApprovalRequired(ShellgateError):
    """The gate answered ``ask``: a person must approve this exact call first.

    Nothing ran. ``decision`` is the gate's (show ``decision.question``);
    ``tool_call`` is the paused ``ToolCall`` (``None`` when the tool was invoked
    with plain arguments), ``arguments`` what the model sent. Resume with
    ``await pause.resume(gate.approve(pause.decision, "alice@example.com"))`` —
    or ``answer="deny"`` — which returns what the tool would have returned.
    A decision is good for ``[approval] resume_ttl_ms`` and resumes once.
    """

    def __init__(
        self,
        tool: ShellgateTool | GatedTool,
        decision: GateDecision,
        arguments: Mapping[str, Any],
        tool_call: ToolCall | None = None,
    ) -> None:
        super().__init__(f"{tool.name}: {decision.question or decision.reason}")
        self.tool = tool
        self.decision = decision
        self.arguments = dict(arguments)
        self.tool_call = tool_call

    async def resume(self, approval: Approval | str) -> Output:
        """Run (or refuse) the paused call with a person's answer from :meth:`Gate.approve`."""
        return await self.tool.aresume(
            self.tool_call if self.tool_call is not None else self.arguments, approval
        )


def _tool_call(value: object) -> ToolCall | None:
    if isinstance(value, dict) and value.get("type") == "tool_call":
        return value  # type: ignore[return-value]
    return None


def _reply(call: ToolCall | None, name: str, text: str, *, error: bool) -> Output:
    """What a LangChain tool returns: a ToolMessage for a ToolCall, else the text."""
    if call is None:
        return text
    return ToolMessage(
        text, tool_call_id=call["id"] or "", name=name, status="error" if error else "success"
    )


class ShellgateTool(BaseTool):
    """One of shellgate's tools (``bash``, ``bash_output``, ``bash_kill``) for LangChain.

    ``args_schema`` is shellgate's own JSON schema (the one MCP clients see), so
    the gate validates arguments with its contract messages. Refusals and
    errors are ``ToolException``\\s, answered as ``ToolMessage(status="error")``
    (``handle_tool_error`` is on). Build them with :func:`shellgate_tools`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    gate: Gate = Field(exclude=True)
    kind: Literal["bash", "bash_output", "bash_kill"] = "bash"  # the gate's tool (name may vary)
    subject: str | None = None
    tenant: str | None = None
    session: str | None = None
    handle_tool_error: Any = True

    def _owner(self) -> dict[str, Any]:
        return {"subject": self.subject, "tenant": self.tenant, "session": self.session}

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise ShellgateError(f"{self.name} is asynchronous (the gate is): use ainvoke")

    async def _arun(self, /, **arguments: Any) -> str:
        if self.kind != "bash":  # runs no command: nothing to decide
            result = await self.gate.call(self.kind, arguments, **self._owner())
        else:
            decision = await self.gate.decide("bash", arguments, **self._owner())
            if decision.effect == "deny":
                raise ToolException(decision.text or render.error(decision.reason))
            if decision.needs_approval:
                raise ApprovalRequired(self, decision, arguments)
            result = await self.gate.call("bash", arguments, decision=decision, **self._owner())
        if result.is_error:
            raise ToolException(result.text)
        return result.text

    async def ainvoke(self, input: ToolInput, config: Any = None, **kwargs: Any) -> Any:
        try:
            return await super().ainvoke(input, config, **kwargs)
        except ApprovalRequired as pause:
            pause.tool_call = _tool_call(input)
            raise

    async def aresume(self, call: ToolCall | Mapping[str, Any], approval: Approval | str) -> Output:
        """Run a paused ``bash`` call with a person's answer; the gate checks it covers it.

        ``call`` is the paused ``ToolCall`` (or its arguments). A refused
        approval (another call's, reused, expired, forged) is an error reply,
        audited by the gate; nothing runs.
        """
        tool_call = _tool_call(call)
        arguments = dict(tool_call["args"]) if tool_call is not None else dict(call)
        result = await self.gate.call(self.kind, arguments, approval=approval, **self._owner())
        return _reply(tool_call, self.name, result.text, error=result.is_error)


def shellgate_tools(
    gate: Gate,
    *,
    subject: str | None = None,
    tenant: str | None = None,
    session: str | None = None,
) -> list[ShellgateTool]:
    """``bash``, ``bash_output`` and ``bash_kill`` on ``gate``, for one principal."""
    return [
        ShellgateTool(
            name=name,
            description=description,
            args_schema=input_schema(name, sandboxed=gate.sandboxed),
            gate=gate,
            kind=name,
            subject=subject,
            tenant=tenant,
            session=session,
        )
        for name, (_, description) in TOOLS.items()
    ]


Extract = Callable[[Mapping[str, Any]], str]


class GatedTool(BaseTool):
    """A shell-like LangChain tool behind the gate; made by :func:`gated`.

    Same name, description and ``args_schema`` as the wrapped tool. The wrapped
    tool runs the command itself, so the gate's part is the decision and the
    approval, both on the audit record (the command's output is not).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool = Field(exclude=True)
    gate: Gate = Field(exclude=True)
    command: str | Extract = "command"
    describe: str | Extract | None = None
    workdir: str | Extract | None = None
    subject: str | None = None
    tenant: str | None = None
    session: str | None = None
    _paused: Kept[tuple[GateDecision, dict[str, Any]]] = PrivateAttr(
        default_factory=lambda: Kept(lambda paused: paused[0].expires_at, MAX_PAUSED)
    )

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise ShellgateError(f"{self.name} is gated and asynchronous (the gate is): use ainvoke")

    async def _arun(self, /, **arguments: Any) -> Any:
        return await self.ainvoke(arguments)

    def _command(self, arguments: Mapping[str, Any]) -> object:
        return self.command(arguments) if callable(self.command) else arguments.get(self.command)

    def _workdir(self, arguments: Mapping[str, Any]) -> object:
        if self.workdir is None:
            return None
        return self.workdir(arguments) if callable(self.workdir) else arguments.get(self.workdir)

    def _bash_arguments(self, arguments: object) -> dict[str, str]:
        """The command (and a description) the gate decides, from the wrapped tool's input.

        The command is read from the arguments as sent, and must be what the
        tool's own ``args_schema`` makes of them: a schema that rewrites it
        (a validator, a default) would run something the gate did not decide.
        """
        workdir: object = None
        if isinstance(arguments, str):  # a single-input tool invoked with its one string
            command: object = arguments
            arguments = {}
        elif not isinstance(arguments, Mapping):
            raise ShellgateError(f"arguments are a {type(arguments).__name__}, not an object")
        else:
            command = self._command(arguments)
            workdir = self._workdir(arguments)
            schema = self.tool.args_schema
            if isinstance(schema, type) and issubclass(schema, BaseModel):
                try:
                    parsed = schema.model_validate(dict(arguments)).model_dump()
                except ValidationError as exc:
                    raise ShellgateError(f"invalid arguments: {_errors(exc)}") from None
                if self._command(parsed) != command:
                    raise ShellgateError(
                        f"the tool's args_schema changes the command {self.command!r}, "
                        "so what would run is not what the gate decided"
                    )
                given = workdir
                workdir = self._workdir(parsed)
                if given is not None and workdir != given:
                    raise ShellgateError(
                        f"the tool's args_schema changes the working directory "
                        f"{self.workdir!r}, so it would run where the gate did not decide"
                    )
        if not isinstance(command, str):
            raise ShellgateError(
                f"the command argument {self.command!r} is a {type(command).__name__}, "
                "not a string (pass command=<a function> to build it from the arguments)"
            )
        if callable(self.describe):
            description = self.describe(arguments)
        elif isinstance(self.describe, str):
            description = self.describe
        elif isinstance(given := arguments.get("description"), str) and given.strip():
            description = given
        else:
            description = f"{self.tool.name} (LangChain tool)"
        out = {"command": command, "description": str(description)}
        if workdir is not None:
            if not isinstance(workdir, str):
                raise ShellgateError(
                    f"the working directory {self.workdir!r} is a {type(workdir).__name__}, "
                    "not a string"
                )
            out["workdir"] = workdir  # relative: to the gate's workspace
        return out

    async def ainvoke(self, input: ToolInput, config: Any = None, **kwargs: Any) -> Any:
        call = _tool_call(input)
        arguments = call["args"] if call is not None else input
        owner: dict[str, Any] = {
            "subject": self.subject, "tenant": self.tenant, "session": self.session
        }
        try:
            bash = self._bash_arguments(arguments)
        except Exception as exc:  # fail closed: what we cannot read, we do not run
            why = str(exc) if isinstance(exc, ShellgateError) else f"{type(exc).__name__}: {exc}"
            return _reply(call, self.name, render.error(f"not run: {why}"), error=True)
        # the wrapped tool runs the command: a sandbox verdict is an ask here
        decision = await self.gate.decide("bash", bash, host_runs=True, **owner)
        if decision.effect == "deny":
            return _reply(call, self.name, decision.text or render.error(decision.reason),
                          error=True)
        if decision.needs_approval:
            self._paused.put(decision.id, (decision, _snapshot(arguments)))
            raise ApprovalRequired(self, decision, _snapshot(arguments), call)
        refused = self.gate.handoff("bash", bash, decision=decision, **owner)  # spent, recorded
        if refused is not None:
            return _reply(call, self.name, refused.text, error=True)
        return await self.tool.ainvoke(input, config, **kwargs)

    async def aresume(
        self, call: ToolCall | Mapping[str, Any] | str, approval: Approval | str
    ) -> Any:
        """Run (or refuse) a paused call with a person's answer from :meth:`Gate.approve`.

        The approval must answer a decision this tool paused on, for these same
        arguments, before it expires; it is spent by the first resume. Refused
        or denied: an error reply naming why, and the wrapped tool never runs.
        """
        tool_call = _tool_call(call)
        arguments = tool_call["args"] if tool_call is not None else call
        try:
            bash = self._bash_arguments(arguments)
        except Exception as exc:  # fail closed: what we cannot read, we do not run
            why = str(exc) if isinstance(exc, ShellgateError) else f"{type(exc).__name__}: {exc}"
            return _reply(tool_call, self.name, render.error(f"not run: {why}"), error=True)
        sent = self._paused.take(_decision_id(approval))
        if sent is not None and _snapshot(arguments) != sent[1]:
            # The wrapped tool's other arguments changed since the pause (the gate decided
            # on the command): presented as a changed call, the approval is refused, spent
            # and on the record as "arguments differ".
            bash = {**bash, "description": bash["description"] + " (arguments changed)"}
        owner: dict[str, Any] = {
            "subject": self.subject, "tenant": self.tenant, "session": self.session
        }
        refused = self.gate.handoff("bash", bash, approval=approval, **owner)
        if refused is not None:
            return _reply(tool_call, self.name, refused.text, error=True)
        return await self.tool.ainvoke(tool_call if tool_call is not None else _input(call))


def _decision_id(approval: object) -> str:
    """The decision an approval (or its token) claims to answer; ``""`` if unreadable."""
    try:
        parsed = approval if isinstance(approval, Approval) else Approval.parse(approval)  # type: ignore[arg-type]
    except ShellgateError:
        return ""
    return parsed.decision_id


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors()
    )


def _input(call: Mapping[str, Any] | str) -> str | dict[str, Any]:
    return call if isinstance(call, str) else dict(call)


def _snapshot(arguments: object) -> dict[str, Any]:
    """The arguments as compared on resume (a single string input is ``{"": text}``)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    return {"": arguments}


def gated(
    tool: BaseTool,
    gate: Gate,
    *,
    command: str | Extract = "command",
    description: str | Extract | None = None,
    workdir: str | Extract | None = None,
    subject: str | None = None,
    tenant: str | None = None,
    session: str | None = None,
) -> GatedTool:
    """Put ``gate`` in front of an existing shell-like tool; its ``args_schema`` is kept.

    ``command`` names the argument holding the shell command, or is a function
    building it from the arguments (``lambda a: "\\n".join(a["commands"])``);
    a command that is not a string is refused, never run. ``description`` is
    the same for the audit log's description (default: the call's own
    ``description`` argument, else the tool's name). ``workdir`` names the
    argument (or builds the value) holding the directory the tool runs the
    command in, so the gate decides it there; without it the gate decides as if
    in its ``[executor] workspace``.
    """
    return GatedTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        return_direct=tool.return_direct,
        tags=tool.tags,
        metadata=tool.metadata,
        tool=tool,
        gate=gate,
        command=command,
        describe=description,
        workdir=workdir,
        subject=subject,
        tenant=tenant,
        session=session,
    )

