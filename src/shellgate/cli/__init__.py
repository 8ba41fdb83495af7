"""The ``shellgate`` command line (``cli/_app.py`` builds the typer app).

This module imports nothing heavy: ``shellgate hook <host>`` runs once per tool
call of its host, so :func:`main` answers it (``hooks_host/run.py``) before
typer, rich or click are imported. Everything else, ``shellgate hook --help``
and every hook command line the fast path does not recognise included, goes to
the typer app, so ``shellgate --help`` lists ``hook`` with the rest.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import typer

def build_app() -> typer.Typer:
    """The typer app with every subcommand registered."""
    from shellgate.cli._app import build_app as build

    return build()


def main(args: Sequence[str] | None = None) -> NoReturn:
    """Run the CLI; every click error is reported in the shellgate style."""
    argv = list(sys.argv[1:] if args is None else args)
    if argv[:1] == ["hook"]:
        from shellgate.hooks_host.run import parse_argv, run_hook

        fast = parse_argv(argv[1:])
        if fast is not None:
            sys.exit(run_hook(*fast))
    from shellgate.cli._app import main as typer_main

    typer_main(argv)
