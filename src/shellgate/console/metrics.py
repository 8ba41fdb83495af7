"""``/metrics``: Prometheus metrics (``shellgate.ops.metrics.render_metrics``).

Scrapers hold no session: the endpoint needs ``Authorization: Bearer <token>``
with a token from the console's tokens file (401 without one). Until this
shellgate has the ops module, it answers 503 ``metrics unavailable``.
"""

from __future__ import annotations

import importlib

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from shellgate.console.app import Console
from shellgate.errors import ShellgateError


def routes(console: Console) -> list[Route]:
    async def metrics(request: Request) -> Response:
        scheme, _sep, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or console.tokens.lookup(token.strip()) is None:
            return PlainTextResponse(
                "metrics need Authorization: Bearer <a console token>",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="shellgate"'},
            )
        try:  # written by another part of shellgate; absent until it is there
            render_metrics = importlib.import_module("shellgate.ops.metrics").render_metrics
        except ImportError:
            return PlainTextResponse("metrics unavailable", status_code=503)
        try:
            body, content_type = await run_in_threadpool(render_metrics, console.config)
        except ShellgateError as exc:
            return PlainTextResponse(f"metrics unavailable: {exc}", status_code=503)
        return Response(body, media_type=content_type)

    return [Route("/metrics", metrics, methods=["GET"])]
