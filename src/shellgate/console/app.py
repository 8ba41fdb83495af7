"""The console's ASGI app: routes from each page module, templates, security headers.

Invariants:

* Every response carries a strict Content-Security-Policy (nothing inline, only
  the console's own static files), ``X-Frame-Options: DENY``,
  ``Referrer-Policy: no-referrer``, ``X-Content-Type-Options: nosniff`` and
  ``Cache-Control: no-store``.
* On a loopback address, a request whose ``Host`` is not a loopback name is
  refused (421): a web page cannot reach the console through a DNS name of its
  own that resolves to 127.0.0.1 (DNS rebinding).
* Templates autoescape everything, and every value they print passes
  :func:`inert` first: control characters (an ANSI escape, a carriage return)
  and bidirectional overrides are shown as visible ``\\x1b``/``\\u202e``
  escapes, never obeyed by the browser or a terminal a person copies them to.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shellgate.config import Config
from shellgate.console.auth import Sessions, Throttle, context, login_required
from shellgate.console.tokens import LoginTokens
from shellgate.store.db import Database

HERE = Path(__file__).parent
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

# C0 and C1 controls but tab and newline; bidirectional embeddings, overrides,
# isolates and marks; zero-width characters that hide text.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)


def inert(value: object) -> object:
    """A string with every control and bidi character spelled out as an escape."""
    if not isinstance(value, str) or isinstance(value, markupsafe.Markup):
        return value
    return _HIDDEN.sub(_spell, value)


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@dataclass
class Console:
    """Everything the pages share: the config, who may log in, sessions, stores."""

    config: Config
    tokens: LoginTokens
    secure: bool  # cookies Secure: served beyond loopback (behind TLS)
    loopback: bool
    sessions: Sessions = field(init=False)
    throttle: Throttle = field(default_factory=Throttle)
    templates: Jinja2Templates = field(init=False)
    _stores: dict[str, Database] = field(default_factory=dict)
    _stores_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.sessions = Sessions(self.config.console.session_ttl_ms / 1000)
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            finalize=inert,
            undefined=jinja2.StrictUndefined,
        )
        self.templates = Jinja2Templates(env=env)

    def database(self, url: str) -> Database:
        """One shared :class:`Database` per store URL (it connects on first use)."""
        with self._stores_lock:
            db = self._stores.get(url)
            if db is None:
                db = self._stores[url] = Database(url)
            return db

    def close(self) -> None:
        with self._stores_lock:
            for db in self._stores.values():
                db.close()
            self._stores.clear()

    def render(
        self, request: Request, name: str, status_code: int = 200, **values: Any
    ) -> Response:
        return self.templates.TemplateResponse(
            request, name, {**context(request), **values}, status_code=status_code
        )

    def page(self, handler: Callable[[Request], Awaitable[Response]]) -> Any:
        """``handler`` behind the login (and, for a POST, the CSRF and origin checks)."""
        return login_required(self.sessions, handler)


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
    from shellgate.console import approvals, audit_view, login, metrics, playground, policies

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
