"""``shellgate schema``: the three tools' definitions for a model API, as JSON."""

from __future__ import annotations

from typing import Annotated

import typer

from shellgate.cli._common import ShellgateCommand, fail


def register(app: typer.Typer) -> None:
    @app.command(
        "schema", cls=ShellgateCommand, help="Print the tool schemas for openai, anthropic or mcp."
    )
    def schema(
        fmt: Annotated[
            str,
            typer.Option("--format", metavar="openai|anthropic|mcp", help="the model API's shape"),
        ] = "mcp",
        sandboxed: Annotated[
            bool, typer.Option("--sandboxed", help="include the escalation arguments")
        ] = False,
    ) -> None:
        import json

        from shellgate.tools.schemas import schemas

        if fmt not in ("openai", "anthropic", "mcp"):
            raise fail(f"invalid --format: expected openai, anthropic or mcp, got {fmt!r}")
        typer.echo(json.dumps(schemas(fmt, sandboxed=sandboxed), indent=2))  # type: ignore[arg-type]
