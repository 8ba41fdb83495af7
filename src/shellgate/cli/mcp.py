"""``shellgate mcp``: serve the three tools over MCP stdio until the client hangs up.

SIGHUP reopens the audit log and reloads the policy files; the server stays up.
Exit status: 0 when the connection ended (stdin EOF, SIGTERM, SIGINT); 2 for a
start-up mistake (bad config, a policy set or plugin that does not load, a closed
stdin or stdout), as one
``error: …`` line on stderr. stdout is the MCP wire and carries nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from shellgate.cli._common import ShellgateCommand, fail, fail_on, load


def register(app: typer.Typer) -> None:
    @app.command(
        "mcp", cls=ShellgateCommand, help="Serve bash, bash_output and bash_kill over MCP stdio."
    )
    def mcp(
        config: Annotated[Optional[Path], typer.Option("--config", help="shellgate.toml")] = None,  # noqa: UP045
        log_level: Annotated[str, typer.Option("--log-level", help="stderr log level")] = "WARNING",
    ) -> None:
        import logging
        import os

        from shellgate.errors import ShellgateError

        for fd, name in ((0, "stdin"), (1, "stdout")):
            # checked before anything opens a file: a closed fd 0 or 1 would be handed
            # to the next open() (the audit log), which the wire would then claim
            try:
                os.fstat(fd)
            except OSError:
                raise fail(
                    f"{name} is closed; shellgate mcp speaks MCP over stdin/stdout"
                ) from None

        level = logging.getLevelName(log_level.upper())
        if not isinstance(level, int):
            raise fail(
                f"invalid --log-level: expected DEBUG, INFO, WARNING or ERROR, got {log_level!r}"
            )
        cfg = load(config)
        logging.basicConfig(
            level=level, format="shellgate mcp: %(levelname)s %(name)s: %(message)s"
        )
        try:
            from shellgate.mcp_server import ShellgateMCP

            server = ShellgateMCP(cfg)  # builds the gate: policy and plugins load here
        except ShellgateError as exc:
            raise fail_on(exc) from None
        import asyncio
        import sys

        try:
            asyncio.run(server.serve_stdio())
        except ShellgateError as exc:  # e.g. stdin or stdout refused: nothing was served
            raise fail(str(exc)) from None
        # The gate is closed and the wire given back. A stdout write stuck on a
        # client that stopped reading was abandoned in its worker thread, which
        # an ordinary exit would wait for: end the process without waiting.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
