"""The MCP door: the three tools over MCP stdio, one gate per server process.

The request handlers (:class:`MCPHandlers`) are shared with the Streamable HTTP
transport (:mod:`shellgate.mcp.http`), which routes each request to the gate of
its bearer token's principal instead of the one gate.

Invariants (stdio):

* One :class:`~shellgate.gate.Gate` per process, opened before the first message
  and closed (every task stopped, spill files removed) when the connection ends —
  stdin EOF, SIGTERM or SIGINT alike: a signal ends the read side as EOF does, so
  in-flight calls are aborted and their results recorded before the gate closes.
  SIGHUP reopens the audit log and reloads the policy (the last good one stays if
  the new one does not load); the server keeps serving.
* Only lines that are UTF-8 JSON-RPC reach the SDK (:mod:`shellgate.mcp.wire`);
  a refused request whose id reads gets a JSON-RPC error, nothing in it runs.
* The principal is the config's ``[policy] subject`` / ``tenant``; nothing in a
  tool call's arguments can change it (the gate validates arguments strictly, so
  an extra ``subject`` key is an error, never an identity).
* ``tools/list`` serves exactly ``gate.schemas("mcp")``; ``tools/call`` always
  answers with a ``CallToolResult`` whose text is the gate's model-facing text
  (tools.md), ``isError`` set for tool errors, pending completion notices at the
  top. No exception from a call reaches the SDK as a protocol error: a bad call
  is the model's to read and correct.
* ``ask`` goes through the channel the client negotiated (:mod:`shellgate.mcp.ask`):
  on the legacy protocol an elicitation to the client when it declared the
  capability; on the modern one an ``input_required`` result with a sealed request
  state (one gate decision per call); accept = allow once, decline or cancel =
  deny with a message the model can act on; a client that can do neither gets the
  headless default (``deny``, or ``allow`` in test deployments).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession

from shellgate.approval import AllowApprover, Approver, DenyApprover, make_approver
from shellgate.config import Config
from shellgate.gate import Gate, ToolResult
from shellgate.mcp.ask import CANCELLED as CANCELLED  # the tool texts, kept importable here
from shellgate.mcp.ask import DECLINED as DECLINED
from shellgate.mcp.ask import NO_ELICITATION as NO_ELICITATION
from shellgate.mcp.ask import ModernAsk, question_text
from shellgate.mcp.wire import Refused, stdio_wire
from shellgate.models import ApprovalAnswer, ApprovalRequest
from shellgate.tools import render
from shellgate.tools.tasks import Owner

logger = logging.getLogger("shellgate.mcp")

SERVER_NAME = "shellgate"
REFUSED_LINE_KEPT = 4096  # bytes of a refused wire line kept in its audit record

#: The MCP session of the tools/call being served, for the approver. A context
#: variable, not an attribute: calls run concurrently, and each must ask through
#: its own request's channel.
_current_session: contextvars.ContextVar[ServerSession | None] = contextvars.ContextVar(
    "shellgate_mcp_session", default=None
)

_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def _headless(config: Config) -> Approver:
    """What answers an ``ask`` nobody can be asked about: deny, or allow for tests.

    ``prompt`` mode means deny here: stdin is the MCP wire, there is no terminal.
    """
    if config.approval.mode == "allow":
        logger.warning(
            "approval mode 'allow': asks the client cannot show are approved without asking "
            "anyone; this mode exists for tests only"
        )
        return AllowApprover()
    if config.approval.mode == "prompt":
        logger.warning(
            "approval mode 'prompt' cannot prompt over MCP stdio (stdin is the protocol): "
            "asks go to the client's elicitation, else they are denied"
        )
    return DenyApprover()


def _question(request: ApprovalRequest) -> str:
    call = request.call
    return question_text(
        request.question,
        call.command,
        call.description,
        call.workdir,
        request.escalation,
        request.justification,
    )


class ElicitationApprover:
    """Asks the connected client's user through MCP elicitation (form mode).

    The form has no fields: accepting *is* the answer (allow once). Used only
    for a call whose client declared elicitation; anything else — no session,
    no capability, no back-channel — goes to the headless approver.
    """

    name = "mcp-elicitation"

    def __init__(self, headless: Approver) -> None:
        self.headless = headless

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        session = _current_session.get()
        if (
            session is None
            or not session.check_client_capability(_ELICITATION)
            or not session.can_send_request  # e.g. a 2026-era envelope request: no back-channel
        ):
            return await self._headless(request)
        try:
            result = await session.elicit_form(
                _question(request), {"type": "object", "properties": {}}
            )
        except Exception as exc:  # any failure to ask is a no (fail closed)
            logger.warning("elicitation failed: %s: %s", type(exc).__name__, exc)
            return ApprovalAnswer(
                answer="deny",
                message=f"the approval prompt could not be shown ({type(exc).__name__}: {exc}), "
                "so the call was denied",
                approver=self.name,
            )
        if result.action == "accept":
            return ApprovalAnswer(answer="allow_once", approver=self.name)
        message = DECLINED if result.action == "decline" else CANCELLED
        return ApprovalAnswer(answer="deny", message=message, approver=self.name)

    async def _headless(self, request: ApprovalRequest) -> ApprovalAnswer:
        answer = await self.headless(request)
        if answer.answer == "deny":
            return answer.model_copy(update={"message": NO_ELICITATION})
        return answer


class MCPHandlers:
    """``tools/list`` and ``tools/call``, one handler for both transports.

    Each request is served by the gate and owner :meth:`route` picks for it: on
    stdio the one gate and the config's principal (:class:`ShellgateMCP`); over
    HTTP the gate of the request's bearer-token principal
    (:class:`shellgate.mcp.http.ShellgateHTTP`).
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.approver: Approver = ElicitationApprover(_headless(config))
        queue = config.approval.mode == "queue"
        if queue:  # the deployment's queue answers every ask, not the client's user
            self.approver = make_approver(config.approval)
        # routes each call's ask
        self.asker = ModernAsk(config.approval.timeout_ms, client_asks=not queue)
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=_version(),
            instructions=(
                "A policy-gated shell: every bash call passes the deployment's policy; "
                "denials name the rule that decided."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._inflight: set[asyncio.Event] = set()
        # An aborted call kills its process group: SIGTERM, then SIGKILL after the grace.
        self._abort_wait_s = config.executor.grace_ms / 1000 + 5.0

    async def route(self, ctx: ServerRequestContext[Any]) -> tuple[Gate, Owner]:
        """The gate that serves this request, and the owner its calls run as."""
        raise NotImplementedError

    # -- handlers ----------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        gate, _owner = await self.route(ctx)
        tools = [
            types.Tool(name=s["name"], description=s["description"], input_schema=s["inputSchema"])
            for s in gate.schemas("mcp")
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        gate, owner = await self.route(ctx)
        with self._abortable() as abort:
            token = _current_session.set(ctx.session)  # copied into the call's task below
            try:
                call = asyncio.ensure_future(self.asker.call(gate, owner, ctx, params, abort))
            finally:
                _current_session.reset(token)
            try:
                answer = await asyncio.shield(call)
            except Exception as exc:  # pragma: no cover - gate.call does not raise for calls
                logger.exception("tool call %s failed", params.name)
                answer = ToolResult(
                    render.error(f"internal error in shellgate ({type(exc).__name__})"),
                    True,
                    "error",
                )
            except BaseException:
                # Cancelled (notifications/cancelled, or the connection ended): abort
                # the call so its process group is killed and the abort is audited,
                # instead of leaving the command running with nobody to answer.
                abort.set()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([call], timeout=self._abort_wait_s)
                raise
        if isinstance(answer, types.InputRequiredResult):  # the modern ask: the client retries
            return answer
        text = render.with_notices(gate.pop_notices(owner), answer.text)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=answer.is_error
        )

    @contextmanager
    def _abortable(self) -> Iterator[asyncio.Event]:
        """An abort event per call; set for every in-flight call at shutdown."""
        event = asyncio.Event()
        self._inflight.add(event)
        try:
            yield event
        finally:
            self._inflight.discard(event)


class ShellgateMCP(MCPHandlers):
    """The MCP handlers over one gate. Build, then :meth:`serve_stdio` (or :meth:`run`).

    Building it builds the gate, so a policy set or plugin that does not load
    fails here, before any message is read. A ``gate`` passed in keeps its own
    approver (pass ``approver=ElicitationApprover(...)`` to it to get elicitation).
    """

    def __init__(self, config: Config, *, gate: Gate | None = None) -> None:
        super().__init__(config)
        self.gate = gate if gate is not None else Gate(config, approver=self.approver)
        self.owner = self.gate.owner(None, None, None)  # the config's principal, one session

    async def route(self, ctx: ServerRequestContext[Any]) -> tuple[Gate, Owner]:
        return self.gate, self.owner

    # -- lifecycle ---------------------------------------------------------------------

    async def run(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one connection over the given streams, then close the gate."""
        try:
            await self.gate.open()
            await self.server.run(
                read_stream, write_stream, self.server.create_initialization_options()
            )
        finally:
            await self._shutdown()

    async def serve_stdio(self) -> bool:
        """Serve MCP on stdin/stdout until EOF, SIGTERM or SIGINT; always close the gate.

        SIGTERM and SIGINT end the read side as EOF does, so a signal takes the
        same path: in-flight calls are aborted and their results recorded, then
        the gate closes. SIGHUP reloads (:meth:`reload`) and serving goes on.
        Returns ``True`` when a signal ended it.
        """
        loop = asyncio.get_running_loop()
        stops = (signal.SIGTERM, signal.SIGINT)
        signalled: list[signal.Signals] = []
        try:
            async with stdio_wire(self._record_refusal) as wire:

                def stop(sig: signal.Signals) -> None:
                    if not signalled:
                        logger.info("%s: ending the connection as at EOF", sig.name)
                    signalled.append(sig)
                    wire.hang_up()

                for sig in stops:
                    loop.add_signal_handler(sig, stop, sig)
                loop.add_signal_handler(signal.SIGHUP, self.reload)
                await self.run(wire.read_stream, wire.write_stream)
        finally:
            # only now, with the gate closed and the wire given back, may a signal kill
            for sig in (*stops, signal.SIGHUP):
                loop.remove_signal_handler(sig)
        return bool(signalled)

    def _record_refusal(self, line: bytes, refused: Refused) -> None:
        """Put a wire line that reached nobody on the record (nothing unrecorded).

        The record keeps the first :data:`REFUSED_LINE_KEPT` bytes of the line
        (bytes that are not UTF-8 escaped as the audit log escapes them) with the
        whole line's length and SHA-256. A log that cannot take it is logged: the
        line ran nothing either way.
        """
        head = line[:REFUSED_LINE_KEPT].decode("utf-8", "surrogateescape")
        answered = refused.answer.id if refused.answer is not None else None
        try:
            self.gate.audit.append(
                {
                    "type": "refused",
                    "transport": "mcp-stdio",
                    "subject": self.owner.subject,
                    "tenant": self.owner.tenant,
                    "session": self.owner.session,
                    "reason": refused.reason,
                    "answered_id": answered,
                    "line": head,
                    "line_bytes": len(line),
                    "line_sha256": hashlib.sha256(line).hexdigest(),
                }
            )
        except Exception as exc:  # the refusal stands; only its record is missing
            logger.error("cannot record a refused line in the audit log: %s", exc)

    def reload(self) -> None:
        """SIGHUP: reopen the audit log and re-read the policy; never stop serving.

        A reload that fails keeps the last good policy (the gate never runs
        without one) and is logged; a closing gate is not reloaded.
        """
        if self.gate.closing:
            return
        try:
            self.gate.reload()
        except Exception as exc:  # a bad reload must not end the server
            logger.error("SIGHUP: reload failed: %s", exc)
        else:
            logger.info("SIGHUP: audit log reopened, policy reloaded")

    async def _shutdown(self) -> None:
        for event in list(self._inflight):
            event.set()
        await asyncio.shield(self.gate.aclose())


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("shellgate")
    except metadata.PackageNotFoundError:
        return "0+unknown"
