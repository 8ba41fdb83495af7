"""Logins, server-side sessions and CSRF for the console.

Invariants:

* A login posts a token from the tokens file (:mod:`.tokens`) in a form body:
  never in a URL, never logged. Success creates a server-side session: a random
  id (32 bytes) in an ``HttpOnly``, ``SameSite=Strict`` cookie (``Secure`` when
  the console listens beyond loopback); the server keeps only the id's SHA-256
  digest, with the person, a CSRF token and an expiry (``[console]
  session_ttl_ms`` after the login, however active the session is).
* Every POST is checked before its handler sees it: the request must come from
  the console's own origin (``Origin``, else ``Sec-Fetch-Site: same-origin``,
  else a same-origin ``Referer``), and carry the session's CSRF token in the
  ``csrf`` field (compared in constant time). A POST failing either is answered
  403 and changes nothing. The login form has its own pre-session token in a
  short-lived cookie (double submit), so a login cannot be forged either.
* Repeated failed logins from one client address are answered 429 for a while.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

logger = logging.getLogger("shellgate.console")

SESSION_COOKIE = "shellgate_session"
LOGIN_COOKIE = "shellgate_login"
LOGIN_NONCE_TTL_S = 600  # seconds a login form stays good
MAX_FORM_BYTES = 256 * 1024  # bytes of a POST body (a command and draft rules fit easily)
MAX_FORM_FIELDS = 20
FAILED_LOGINS = 10  # failed logins from one address within FAILED_WINDOW_S ...
FAILED_WINDOW_S = 60.0  # ... make it wait until the window has passed
MAX_CLIENTS = 10_000  # addresses remembered before the quiet ones are forgotten

Handler = Callable[[Request], Awaitable[Response]]


@dataclass
class Session:
    """One login: who, the CSRF token its forms carry, and when it ends (monotonic)."""

    person: str
    csrf: str
    expires: float
    started: float = field(default_factory=time.time)  # epoch seconds, shown to the person


def _key(session_id: str) -> bytes:
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).digest()


class Sessions:
    """The live sessions, by the digest of their id (the id itself is never kept)."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._by_key: dict[bytes, Session] = {}

    def start(self, person: str) -> tuple[str, Session]:
        session_id = secrets.token_urlsafe(32)
        session = Session(person, secrets.token_urlsafe(32), self._clock() + self.ttl_s)
        with self._lock:
            self._sweep()
            self._by_key[_key(session_id)] = session
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        if not session_id or len(session_id) > 128:
            return None
        with self._lock:
            session = self._by_key.get(_key(session_id))
            if session is not None and session.expires <= self._clock():
                del self._by_key[_key(session_id)]
                return None
            return session

    def end(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._by_key.pop(_key(session_id), None)

    def _sweep(self) -> None:
        now = self._clock()
        for key in [k for k, s in self._by_key.items() if s.expires <= now]:
            del self._by_key[key]

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._by_key)


class Throttle:
    """Failed logins per client address; too many in a window and it must wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def blocked(self, client: str) -> bool:
        with self._lock:
            recent = self._recent(client)
            return len(recent) >= FAILED_LOGINS

    def failed(self, client: str) -> None:
        with self._lock:
            if len(self._failures) > MAX_CLIENTS:  # forget addresses whose window has passed
                for other in list(self._failures):
                    if not self._recent(other):
                        del self._failures[other]
            self._recent(client).append(self._clock())

    def _recent(self, client: str) -> list[float]:
        since = self._clock() - FAILED_WINDOW_S
        recent = [t for t in self._failures.get(client, []) if t > since]
        self._failures[client] = recent
        return recent


def client_of(request: Request) -> str:
    return request.client.host if request.client else "?"


def same_origin(request: Request) -> bool:
    """Did a browser send this request from the console's own pages?

    The console's pages send ``Referrer-Policy: no-referrer``, with which a
    browser posts ``Origin: null``; ``Sec-Fetch-Site`` (which pages cannot set)
    then says where the form was. A request with none of the three is refused.
    """
    host = request.headers.get("host", "")
    if not host:
        return False
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        return _netloc_is(origin, host)
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site == "same-origin"
    referer = request.headers.get("referer")
    return referer is not None and _netloc_is(referer, host)


def _netloc_is(url: str, host: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


def tokens_match(expected: str, given: object) -> bool:
    if not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "surrogateescape"))


def forbidden(why: str) -> Response:
    return PlainTextResponse(f"forbidden: {why}", status_code=403)


async def read_form(request: Request) -> FormData | Response:
    """The POST's form fields, or a 413/400 answer for a body too big or not a form."""
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        return PlainTextResponse("a form needs a Content-Length", status_code=411)
    if int(length) > MAX_FORM_BYTES:
        return PlainTextResponse("form too large", status_code=413)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return PlainTextResponse("expected a form (application/x-www-form-urlencoded)", 415)
    try:
        return await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    except Exception:  # starlette raises its own errors for malformed bodies
        return PlainTextResponse("malformed form", status_code=400)


def wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def login_required(sessions: Sessions, handler: Handler) -> Handler:
    """Wrap a page: a session is needed; a POST also needs its CSRF token and origin.

    The handler finds the session in ``request.state.session`` and, for a POST,
    the parsed form in ``request.state.form``.
    """

    async def guarded(request: Request) -> Response:
        session = sessions.get(request.cookies.get(SESSION_COOKIE))
        if request.method == "POST":
            if not same_origin(request):
                logger.warning(
                    "refused POST %s from %s: not same-origin (403)",
                    request.url.path,
                    client_of(request),
                )
                return forbidden("cross-origin request")
            if session is None:
                return forbidden("not logged in")
            form = await read_form(request)
            if isinstance(form, Response) and form.status_code in (411, 415):
                form = FormData()  # not a form, so no CSRF token either
            if isinstance(form, Response):
                return form
            if not tokens_match(session.csrf, form.get("csrf")):
                logger.warning(
                    "refused POST %s from %s: missing or wrong CSRF token (403)",
                    request.url.path,
                    client_of(request),
                )
                return forbidden("missing or wrong CSRF token; reload the page")
            request.state.form = form
        elif session is None:
            if wants_html(request):
                return RedirectResponse("/login", status_code=303)
            return PlainTextResponse("not logged in", status_code=401)
        request.state.session = session
        return await handler(request)

    return guarded


def set_cookie(
    response: Response, name: str, value: str, *, max_age: int, secure: bool, path: str = "/"
) -> None:
    response.set_cookie(
        name, value, max_age=max_age, path=path, secure=secure, httponly=True, samesite="strict"
    )


def context(request: Request) -> dict[str, Any]:
    """What every page's template reads: the person and the CSRF token for its forms."""
    session: Session | None = getattr(request.state, "session", None)
    return {
        "person": session.person if session else None,
        "csrf": session.csrf if session else "",
    }
