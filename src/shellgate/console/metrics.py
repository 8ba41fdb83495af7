"""``/metrics``: Prometheus metrics (``shellgate.ops.metrics.render_metrics``).

Scrapers hold no session: the endpoint needs ``Authorization: Bearer <token>``
with a token from the console's tokens file (401 without one; a wrong one counts
as a failed login, and a client over the login throttle is answered 429). A
failure to compute them (say, prometheus-client missing) answers 503 ``metrics
unavailable``.
"""

from __future__ import annotations

import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from shellgate.console.auth import client_of
from shellgate.console.core import Console
from shellgate.errors import ShellgateError

logger = logging.getLogger("shellgate.console")


def routes(console: Console) -> list[Route]:
    async def metrics(request: Request) -> Response:
        # The same tokens as /login, so the same throttle: a wrong bearer token is a
        # failed login (else /metrics were an unthrottled oracle for guessing them).
        client = client_of(request)
        if console.throttle.blocked(client):
            logger.warning("refused /metrics from %s: too many failed logins (429)", client)
            return PlainTextResponse("too many failed logins; wait a minute", status_code=429)
        scheme, _sep, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or console.tokens.lookup(token.strip()) is None:
            if scheme:  # a scrape without any token is no guess
                console.throttle.failed(client)
            return PlainTextResponse(
                "metrics need Authorization: Bearer <a console token>",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="shellgate"'},
            )
        try:  # imported on the first scrape: prometheus-client is the fleet extra's
            from shellgate.ops.metrics import render_metrics
        except ImportError as exc:
            return PlainTextResponse(f"metrics unavailable: {exc}", status_code=503)
        try:
            body, content_type = await run_in_threadpool(render_metrics, console.config)
        except ShellgateError as exc:
            return PlainTextResponse(f"metrics unavailable: {exc}", status_code=503)
        return Response(body, media_type=content_type)

    return [Route("/metrics", metrics, methods=["GET"])]
