"""``/login`` and ``/logout``: a token posted in a form starts a session."""

from __future__ import annotations

import logging
import secrets

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from shellgate.console.auth import (
    LOGIN_COOKIE,
    LOGIN_NONCE_TTL_S,
    SESSION_COOKIE,
    client_of,
    forbidden,
    read_form,
    same_origin,
    set_cookie,
    tokens_match,
)
from shellgate.console.core import Console

logger = logging.getLogger("shellgate.console")


def routes(console: Console) -> list[Route]:
    def form(request: Request, *, error: str = "", status_code: int = 200) -> Response:
        nonce = secrets.token_urlsafe(32)
        response = console.render(
            request, "login.html", status_code=status_code, nonce=nonce, error=error
        )
        set_cookie(
            response,
            LOGIN_COOKIE,
            nonce,
            max_age=LOGIN_NONCE_TTL_S,
            secure=console.secure,
            path="/login",
        )
        return response

    async def login_page(request: Request) -> Response:
        if console.sessions.get(request.cookies.get(SESSION_COOKIE)) is not None:
            return RedirectResponse("/approvals", status_code=303)
        return form(request)

    async def login_post(request: Request) -> Response:
        client = client_of(request)
        if not same_origin(request):
            logger.warning("refused login from %s: not same-origin (403)", client)
            return forbidden("cross-origin request")
        fields = await read_form(request)
        if isinstance(fields, Response):
            return fields
        if not tokens_match(request.cookies.get(LOGIN_COOKIE, ""), fields.get("nonce")):
            return form(request, error="The login form expired; try again.", status_code=403)
        if console.throttle.blocked(client):
            logger.warning("refused login from %s: too many failed logins (429)", client)
            return PlainTextResponse("too many failed logins; wait a minute", status_code=429)
        token = fields.get("token")
        person = console.tokens.lookup(token) if isinstance(token, str) else None
        if person is None:
            console.throttle.failed(client)
            logger.warning("failed login from %s", client)  # never the token
            return form(request, error="That token is not valid.", status_code=401)
        session_id, _session = console.sessions.start(person)
        logger.info("%s logged in from %s", person, client)
        response = RedirectResponse("/approvals", status_code=303)
        set_cookie(
            response,
            SESSION_COOKIE,
            session_id,
            max_age=int(console.sessions.ttl_s),
            secure=console.secure,
        )
        response.delete_cookie(LOGIN_COOKIE, path="/login")
        return response

    async def logout(request: Request) -> Response:
        console.sessions.end(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    return [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", console.page(logout), methods=["POST"]),
    ]
