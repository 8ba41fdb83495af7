"""The MCP door over Streamable HTTP: ``shellgate mcp --http HOST:PORT``.

The SDK's session manager and ASGI app, served by uvicorn, behind the SDK's
bearer-token middleware; the request handlers are :mod:`shellgate.mcp.server`'s.

Invariants:

* Loopback by default: a non-loopback address is refused unless
  ``[mcp] allow_remote`` is true. On loopback the SDK's DNS-rebinding check
  (Host and Origin headers) is on.
* Every request needs ``Authorization: Bearer <token>`` with a token from the
  tokens file (:mod:`shellgate.mcp.tokens`); anything else is answered 401 with
  ``WWW-Authenticate: Bearer`` before the MCP layer sees it. Tokens are never
  logged, put in an error or audited; a refused request is logged (method, path,
  client address) without its headers.
* One :class:`~shellgate.gate.Gate` per principal (subject, tenant), built on
  its first request and closed at shutdown; every call of the principal runs
  through its gate as that subject and tenant, whatever the request says.
* The owner of a call (who may read its tasks and notices) is the principal
  plus the MCP session id; a request without a session (the 2026 per-request
  era) uses the principal's gate session. So a task id is unknown to every
  other principal, and to every other session. When a session ends (the client
  deletes it, it idles out) its background tasks are stopped.
* SIGTERM and SIGINT end the server: new requests get 503, in-flight calls are
  aborted (their results recorded), sessions end, every gate closes (tasks
  stopped, result records written), exit 0. SIGHUP re-reads the tokens file and
  reloads every gate (audit log reopened, policy re-read); a reload that fails
  keeps what worked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from shellgate.config import Config
from shellgate.errors import ConfigError, ShellgateError
from shellgate.gate import Gate
from shellgate.listen import Address, url_of
from shellgate.listen import parse_address as _parse_address
from shellgate.mcp.server import MCPHandlers
from shellgate.mcp.tokens import FileTokenVerifier, Principal, load_tokens, principal_of
from shellgate.tools.tasks import Owner

logger = logging.getLogger("shellgate.mcp")

MCP_PATH = "/mcp"
SHUTDOWN_GRACE_S = 10  # seconds uvicorn waits for open connections before cancelling them
_SESSION_KEY = "shellgate.owner"  # Connection.state: the session's end is watched once


def parse_address(text: str) -> tuple[str, int]:
    """``--http``'s address: see :func:`shellgate.listen.parse_address`."""
    return _parse_address(text, option="--http", example_port=8080)


class ShellgateHTTP(MCPHandlers):
    """The MCP handlers over one gate per principal, served over Streamable HTTP.

    Building it reads the tokens file and checks the address (ConfigError);
    :meth:`serve` checks that a gate can be built and opened, listens, and
    serves until SIGTERM or SIGINT.
    """

    def __init__(self, config: Config, *, tokens_file: Path, host: str, port: int) -> None:
        super().__init__(config)
        self.tokens_file = tokens_file.resolve()
        self.verifier = FileTokenVerifier(load_tokens(self.tokens_file))
        self.address = Address.resolve(host, port, option="--http", path=MCP_PATH)
        self.loopback = self.address.loopback
        if not self.loopback and not config.mcp.allow_remote:
            raise ConfigError(
                f"--http: {self.address.sockaddr[0]} is not a loopback address, and serving MCP "
                "beyond this machine needs [mcp] allow_remote = true",
                hint="bearer tokens cross the network in clear text over plain HTTP: put a "
                "TLS proxy in front, or use --http 127.0.0.1:PORT through an SSH tunnel",
            )
        self._gates: dict[Principal, Gate] = {}
        self._gates_lock = asyncio.Lock()
        self._stopping = False
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            security_settings=self._security(),
            session_idle_timeout=config.mcp.session_idle_timeout_ms / 1000,
            max_sessions=config.mcp.max_sessions,
        )
        self.app = self._build_app()

    # -- routing -----------------------------------------------------------------------

    async def route(self, ctx: ServerRequestContext[Any]) -> tuple[Gate, Owner]:
        principal = _principal(ctx)
        try:
            gate = await self._gate(principal)
        except ShellgateError as exc:
            logger.error("cannot open the gate of %s/%s: %s", *_names(principal), exc)
            raise MCPError(INTERNAL_ERROR, f"shellgate cannot serve this principal: {exc}") from exc
        session = _session_id(ctx) or gate.session
        owner = Owner(principal.subject, principal.tenant, session)
        if session != gate.session:
            self._watch_session(ctx, gate, owner)
        return gate, owner

    async def _gate(self, principal: Principal) -> Gate:
        """The principal's gate, built and opened on its first request."""
        async with self._gates_lock:
            gate = self._gates.get(principal)
            if gate is None:
                if self._stopping:  # the gates are about to close: none is opened now
                    raise ShellgateError("the gate is shutting down; no new calls")
                gate = Gate(self._config_for(principal), approver=self.approver)
                try:
                    await gate.open()
                except BaseException:
                    await gate.aclose()
                    raise
                self._gates[principal] = gate
                logger.info("opened the gate of %s/%s", *_names(principal))
            return gate

    def _config_for(self, principal: Principal) -> Config:
        """The deployment's config as the principal: its subject and tenant, and the
        tokens file a secret (reading it asks; bwrap masks it) and protected (no write)."""
        pol = self.config.policy
        tokens = str(self.tokens_file)
        policy = pol.model_copy(
            update={
                "subject": principal.subject,
                "tenant": principal.tenant,
                "secret_paths": (*pol.secret_paths, tokens),
                "protected_paths": (*pol.protected_paths, tokens),
            }
        )
        return self.config.model_copy(update={"policy": policy})

    def _watch_session(self, ctx: ServerRequestContext[Any], gate: Gate, owner: Owner) -> None:
        """Stop the session's tasks when it ends (nobody could read them after)."""
        # The SDK unwinds Connection.exit_stack when a session ends; the request's
        # ServerSession holds its Connection (no public accessor in mcp 2.3).
        connection = getattr(ctx.session, "_connection", None)
        if not isinstance(connection, Connection) or _SESSION_KEY in connection.state:
            return
        connection.state[_SESSION_KEY] = owner

        async def ended() -> None:
            if not gate.closing:
                await gate.tasks.stop_owned(owner)
                logger.info("MCP session %s of %s/%s ended", owner.session, *owner[:2])

        connection.exit_stack.push_async_callback(ended)

    # -- the HTTP app ------------------------------------------------------------------

    def _security(self) -> TransportSecuritySettings | None:
        if not self.loopback:
            return None  # any Host may be right; the bearer token is the guard
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )

    def _build_app(self) -> Callable[[Scope, Receive, Send], Any]:
        endpoint = RequireAuthMiddleware(StreamableHTTPASGIApp(self.manager), required_scopes=[])
        app = Starlette(
            routes=[Route(MCP_PATH, endpoint=endpoint)],
            middleware=[
                Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(self.verifier)),
                Middleware(AuthContextMiddleware),
            ],
        )

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if self._stopping:
                await PlainTextResponse("shellgate is shutting down", 503)(scope, receive, send)
                return

            async def watch(message: Message) -> None:
                if message["type"] == "http.response.start" and message["status"] == 401:
                    client = scope.get("client") or ("?", 0)
                    logger.warning(
                        "refused %s %s from %s: no valid bearer token (401)",
                        scope.get("method"),
                        scope.get("path"),
                        client[0],
                    )
                await send(message)

            await app(scope, receive, watch)

        return guarded

    # -- lifecycle ---------------------------------------------------------------------

    async def check(self) -> None:
        """Fail at start-up, not at the first call: build and open a gate, then close it."""
        first = min(self.verifier.table.principals, key=_names)
        probe = Gate(self._config_for(first), approver=self.approver)
        try:
            await probe.open()
        finally:
            await probe.aclose()

    def listen(self) -> socket.socket:
        """The listening socket (ShellgateError if the address cannot be bound)."""
        return self.address.listen()

    async def serve(self, sock: socket.socket, announce: Callable[[str], None]) -> bool:
        """Serve on ``sock`` until SIGTERM or SIGINT; always close every gate.

        ``announce`` gets the endpoint's URL once the socket listens. Returns
        ``True`` when a signal ended it.
        """
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        stops = (signal.SIGTERM, signal.SIGINT)

        def on_stop(sig: signal.Signals) -> None:
            if not stop.is_set():
                logger.info("%s: shutting down", sig.name)
            stop.set()

        server = _Uvicorn(
            uvicorn.Config(
                self.app,
                lifespan="off",  # the session manager runs around uvicorn, below
                log_config=None,  # shellgate's logging: stderr, --log-level
                access_log=False,  # a URL may carry what a client should not have put there
                timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
            )
        )
        try:
            for sig in stops:
                loop.add_signal_handler(sig, on_stop, sig)
            loop.add_signal_handler(signal.SIGHUP, self.reload)
            async with self.manager.run():
                serving = asyncio.ensure_future(server.serve(sockets=[sock]))
                announce(url_of(sock.getsockname(), MCP_PATH))
                stopped = asyncio.ensure_future(stop.wait())
                await asyncio.wait([serving, stopped], return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                self._stopping = True  # new requests: 503
                server.should_exit = True
                for event in list(self._inflight):
                    event.set()  # abort in-flight calls: process groups killed, results recorded
            # The manager has ended every session (their streams closed), so the
            # connections uvicorn waits for drain now.
            await serving
        finally:
            for sig in (*stops, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            await self._close_gates()
            sock.close()
        return stop.is_set()

    async def _close_gates(self) -> None:
        gates = list(self._gates.items())
        results = await asyncio.gather(*(g.aclose() for _p, g in gates), return_exceptions=True)
        for (principal, _gate), result in zip(gates, results, strict=True):
            if isinstance(result, BaseException):
                logger.error("closing the gate of %s/%s failed: %s", *_names(principal), result)

    def reload(self) -> None:
        """SIGHUP: re-read the tokens file, reload every gate; never stop serving."""
        if self._stopping:
            return
        try:
            self.verifier.table = load_tokens(self.tokens_file)
        except ShellgateError as exc:
            logger.error("SIGHUP: tokens not reloaded, the last good ones stay: %s", exc)
        else:
            logger.info("SIGHUP: %d tokens loaded", len(self.verifier.table))
        for principal, gate in list(self._gates.items()):
            if gate.closing:
                continue
            try:
                gate.reload()
            except Exception as exc:  # a bad reload must not end the server
                logger.error("SIGHUP: reload failed for %s/%s: %s", *_names(principal), exc)
            else:
                logger.info("SIGHUP: %s/%s: audit reopened, policy reloaded", *_names(principal))


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: shellgate's handlers order the shutdown."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _principal(ctx: ServerRequestContext[Any]) -> Principal:
    """The principal the request's bearer token speaks for (the middleware checked it)."""
    request = ctx.request
    user = request.scope.get("user") if isinstance(request, Request) else None
    principal = principal_of(user.access_token) if isinstance(user, AuthenticatedUser) else None
    if principal is None:  # unreachable behind RequireAuthMiddleware; never a default principal
        raise MCPError(INVALID_REQUEST, "not authenticated")
    return principal


def _session_id(ctx: ServerRequestContext[Any]) -> str | None:
    """The MCP session the request was served in, if any.

    Read only on the handshake era's sessions, whose header the session manager
    matched to a live session of this principal; a per-request-era request is
    served outside any session, so a header it carries names nothing (and must
    not name the audit record's session).
    """
    request = ctx.request
    if not isinstance(request, Request):
        return None
    if ctx.session.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    return request.headers.get(MCP_SESSION_ID_HEADER) or None


def _names(principal: Principal) -> tuple[str, str]:
    return principal.subject, principal.tenant
