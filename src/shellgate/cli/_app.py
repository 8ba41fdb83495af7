"""The typer app behind ``shellgate``: subcommands in their own modules.

Every subcommand module exposes ``register(app)`` and imports its heavy parts
inside the command, so ``shellgate check`` does not pay for the MCP SDK.
User mistakes are an ``error: …`` line (and a ``hint: …`` line) on stderr and
exit status 2, whoever finds them: the command, typer's parser, or a group
(see ``cli/_common.py``). ``cli/__init__.py`` imports this module only for a
command that needs it (not for a hook's fast path).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, NoReturn

import typer

from shellgate.cli._common import is_click_error, usage_error

#: The subcommand modules, in --help order: each registers itself on the app.
SUBCOMMANDS = (
    "run", "check", "policy", "audit", "schema", "mcp", "serve", "demo", "hook", "approvals",
)


def _print_version(value: bool) -> None:
    if value:
        from shellgate import __version__

        typer.echo(f"shellgate {__version__}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print shellgate's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """A policy gate between AI agents and the shell."""


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="shellgate",
        help="A policy gate between AI agents and the shell.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(_root)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"shellgate.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"shellgate.cli.{name}":
                continue  # not built into this copy
            raise
        module.register(app)
    return app


def main(args: Sequence[str] | None = None) -> NoReturn:
    """Run the CLI; every click error is reported in the shellgate style."""
    command = typer.main.get_command(build_app())
    try:
        status = command.main(args=args, prog_name="shellgate", standalone_mode=False)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        status = 1
    except Exception as exc:
        if not is_click_error(exc):
            raise
        status = usage_error(exc)
    sys.exit(status if isinstance(status, int) else 0)
