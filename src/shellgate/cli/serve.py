"""``shellgate serve``: the web console (docs/console.md) until SIGTERM or SIGINT.

Exit status: 0 when a signal stopped it; 2 for a start-up mistake (a bad config,
no tokens file, a bad tokens file (its permissions, a bad line), an address that
does not parse, is not loopback without ``[console] allow_remote``, or cannot
be bound), as one ``error: …`` line (and maybe a ``hint: …``) on stderr.
starlette, jinja2 and uvicorn are imported only here, when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from shellgate.cli._common import ShellgateCommand, fail, fail_on


def register(app: typer.Typer) -> None:
    @app.command(
        "serve",
        cls=ShellgateCommand,
        help="Serve the web console: approvals, audit trail, policies, playground.",
    )
    def serve(
        config: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--config", metavar="FILE", help="Config file (else $SHELLGATE_CONFIG)."),
        ] = None,
        listen: Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--listen",
                metavar="[HOST:]PORT",
                help="Address to serve on (default [console] listen, 127.0.0.1:8470).",
            ),
        ] = None,
        tokens: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option(
                "--tokens", metavar="FILE", help="Login tokens file ([console] tokens_file)."
            ),
        ] = None,
        log_level: Annotated[
            str, typer.Option("--log-level", metavar="LEVEL", help="stderr log level")
        ] = "INFO",
    ) -> None:
        import asyncio
        import logging
        import sys

        from shellgate.cli._common import load
        from shellgate.errors import ShellgateError

        level = logging.getLevelName(log_level.upper())
        if not isinstance(level, int):
            raise fail(
                f"invalid --log-level: expected DEBUG, INFO, WARNING or ERROR, got {log_level!r}"
            )
        cfg = load(config)
        from shellgate.ops.logs import announcement, configure_logging

        # [observability] log_format: these lines, or one JSON object a line (operations.md)
        configure_logging(
            cfg, level=level, text_format="shellgate serve: %(levelname)s %(name)s: %(message)s"
        )
        tokens_file = tokens if tokens is not None else cfg.console.tokens_file
        if tokens_file is None:
            raise fail(
                "the console needs a tokens file, and none is configured",
                hint="set [console] tokens_file, or pass --tokens FILE: 'TOKEN PERSON' lines, "
                "chmod 600 (docs/console.md)",
            )
        try:
            from shellgate.console.server import ConsoleServer

            server = ConsoleServer(
                cfg,
                tokens_file=tokens_file,
                listen=listen if listen is not None else cfg.console.listen,
            )
            sock = server.listen()
        except ShellgateError as exc:
            raise fail_on(exc) from None

        def announce(url: str) -> None:
            line = announcement(cfg, "shellgate serve", "shellgate.console", f"console at {url}")
            print(line, file=sys.stderr, flush=True)

        asyncio.run(server.serve(sock, announce))
