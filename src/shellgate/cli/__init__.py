"""The ``shellgate`` command line: one typer app, subcommands in their own modules.

Every subcommand module exposes ``register(app)`` and imports its heavy parts
inside the command, so ``shellgate check`` does not pay for the MCP SDK.
User mistakes are one ``error: …`` line on stderr and exit status 2.
"""

from __future__ import annotations

import importlib

import typer

SUBCOMMANDS = ("run", "check", "policy", "audit", "schema", "mcp", "demo")


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="shellgate",
        help="A policy gate between AI agents and the shell.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"shellgate.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"shellgate.cli.{name}":
                continue  # not built into this copy
            raise
        module.register(app)
    return app


def main() -> None:
    build_app()(prog_name="shellgate")
