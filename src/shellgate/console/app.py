"""The console's ASGI app: routes from each page module, static files, security headers.

Invariants:

* Every response carries a strict Content-Security-Policy (nothing inline, only
  the console's own static files), ``X-Frame-Options: DENY``,
  ``Referrer-Policy: no-referrer``, ``X-Content-Type-Options: nosniff`` and
  ``Cache-Control: no-store``.
* On a loopback address, a request whose ``Host`` is not a loopback name is
  refused (421): a web page cannot reach the console through a DNS name of its
  own that resolves to 127.0.0.1 (DNS rebinding).
* Templates autoescape everything and show hidden characters as escapes
  (:func:`shellgate.console.core.inert`).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shellgate.console import approvals, audit_view, login, metrics, playground, policies
from shellgate.console.core import HERE, Console

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

class Guard:
    """ASGI middleware: the security headers on every answer, the Host check on loopback."""

    def __init__(self, app: ASGIApp, *, loopback: bool) -> None:
        self.app = app
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _value in SECURITY_HEADERS}
                headers = [(k, v) for k, v in message.get("headers", []) if k not in names]
                message["headers"] = headers + SECURITY_HEADERS
            await send(message)

        if self.loopback and not _loopback_host(scope):
            refusal = PlainTextResponse("misdirected request: not a loopback host name", 421)
            await refusal(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)


def _loopback_host(scope: Scope) -> bool:
    host = ""
    for name, value in scope.get("headers", []):
        if name == b"host":
            host = value.decode("latin-1").lower()
            break
    name, _sep, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not _sep:
        name = host
    elif not port.isdigit():
        return False
    return name in LOOPBACK_HOSTS


def build_app(console: Console) -> Starlette:
    """The console's ASGI app over ``console`` (close it when the app is done)."""

    async def home(request: Request) -> Response:
        return RedirectResponse("/approvals", status_code=303)

    routes: list[BaseRoute] = [
        Route("/", console.page(home)),
        *login.routes(console),
        *approvals.routes(console),
        *audit_view.routes(console),
        *policies.routes(console),
        *playground.routes(console),
        *metrics.routes(console),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(Guard, loopback=console.loopback)
    return app
