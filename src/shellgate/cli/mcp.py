"""``shellgate mcp``: serve the three tools over MCP stdio until the client hangs up,
or with ``--http HOST:PORT`` over Streamable HTTP until SIGTERM or SIGINT.

SIGHUP reopens the audit log and reloads the policy files (and, over HTTP, the
tokens file); the server stays up. Exit status: 0 when the connection ended
(stdin EOF, SIGTERM, SIGINT); 2 for a start-up mistake (bad config, a policy set
or plugin that does not load, a closed stdin or stdout; over HTTP: a bad tokens
file, an address that cannot be served), as one ``error: …`` line on stderr.
On stdio, stdout is the MCP wire and carries nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from shellgate.cli._common import ShellgateCommand, fail, fail_on, load

if TYPE_CHECKING:
    from shellgate.config import Config


def register(app: typer.Typer) -> None:
    @app.command(
        "mcp",
        cls=ShellgateCommand,
        help="Serve bash, bash_output and bash_kill over MCP stdio (or HTTP with --http).",
    )
    def mcp(
        config: Annotated[Optional[Path], typer.Option("--config", help="shellgate.toml")] = None,  # noqa: UP045
        log_level: Annotated[str, typer.Option("--log-level", help="stderr log level")] = "WARNING",
        http: Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--http",
                metavar="HOST:PORT",
                help="serve Streamable HTTP on this address (PORT alone: 127.0.0.1)",
            ),
        ] = None,
        tokens: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option(
                "--tokens", metavar="FILE", help="bearer tokens for --http ([mcp] tokens_file)"
            ),
        ] = None,
    ) -> None:
        import os

        from shellgate.errors import ShellgateError

        if http is not None:
            _serve_http(config, log_level, http, tokens)
            return
        if tokens is not None:
            raise fail("--tokens is for --http", hint="add --http HOST:PORT, or leave out --tokens")
        for fd, name in ((0, "stdin"), (1, "stdout")):
            # checked before anything opens a file: a closed fd 0 or 1 would be handed
            # to the next open() (the audit log), which the wire would then claim
            try:
                os.fstat(fd)
            except OSError:
                raise fail(
                    f"{name} is closed; shellgate mcp speaks MCP over stdin/stdout"
                ) from None

        cfg = load_logged(config, log_level)
        try:
            from shellgate.mcp.server import ShellgateMCP

            server = ShellgateMCP(cfg)  # builds the gate: policy and plugins load here
        except ShellgateError as exc:
            raise fail_on(exc) from None
        import asyncio
        import sys

        if os.isatty(0):  # a person, not an MCP host: say what this is, or it looks hung
            print("shellgate mcp: serving MCP on stdin/stdout; an MCP host starts this "
                  "command and speaks JSON-RPC to it (docs/mcp.md). Ctrl-D or Ctrl-C ends it.",
                  file=sys.stderr, flush=True)
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


def load_logged(config: Path | None, log_level: str) -> Config:
    """The config, with logging on stderr at ``log_level`` (errors as ``fail``)."""
    import logging

    level = logging.getLevelName(log_level.upper())
    if not isinstance(level, int):
        raise fail(
            f"invalid --log-level: expected DEBUG, INFO, WARNING or ERROR, got {log_level!r}"
        )
    cfg = load(config)
    from shellgate.ops.logs import configure_logging

    # [observability] log_format: these lines, or one JSON object a line (docs/operations.md)
    configure_logging(
        cfg, level=level, text_format="shellgate mcp: %(levelname)s %(name)s: %(message)s"
    )
    return cfg


def _serve_http(config: Path | None, log_level: str, address: str, tokens: Path | None) -> None:
    """``shellgate mcp --http``: serve until SIGTERM or SIGINT (exit 0), else exit 2."""
    import asyncio
    import os
    import sys

    from shellgate.errors import ShellgateError

    # Nothing is read from stdin or written to stdout here; a closed one would be
    # handed to the next open() (the audit log) and written into by accident.
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    cfg = load_logged(config, log_level)
    tokens_file = tokens if tokens is not None else cfg.mcp.tokens_file
    if tokens_file is None:
        raise fail(
            "--http needs bearer tokens, and none are configured",
            hint="set [mcp] tokens_file in the config, or pass --tokens FILE (docs/mcp.md)",
        )
    try:
        from shellgate.mcp.http import ShellgateHTTP, parse_address

        host, port = parse_address(address)
        server = ShellgateHTTP(cfg, tokens_file=tokens_file, host=host, port=port)
    except ShellgateError as exc:
        raise fail_on(exc) from None

    def announce(url: str) -> None:
        from shellgate.ops.logs import announcement

        said = f"serving MCP over HTTP at {url}"
        line = announcement(cfg, "shellgate mcp", "shellgate.mcp", said)
        print(line, file=sys.stderr, flush=True)

    async def main() -> None:
        await server.check()  # a policy set, plugin, audit log or sandbox that fails: exit 2
        await server.serve(server.listen(), announce)

    try:
        asyncio.run(main())
    except ShellgateError as exc:
        raise fail_on(exc) from None
