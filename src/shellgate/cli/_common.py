"""What every subcommand shares: loading config as one clear error line."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from shellgate.config import Config

EXIT_USAGE = 2


def fail(message: str) -> typer.Exit:
    """Print one error line on stderr; return the exit to raise (status 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def load(config: Path | None, **overrides: Any) -> Config:
    from shellgate.config import load_config
    from shellgate.errors import ShellgateError

    try:
        return load_config(config, **overrides)
    except ShellgateError as exc:
        raise fail(str(exc)) from None
