"""``shellgate demo``: watch a scripted agent's calls allowed, asked about and denied.

Exit status: 0 when every step behaved as expected, 1 when any did not, 2 for a
user mistake (a ``--policy`` directory that does not load, no example policies).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shellgate.cli._common import ShellgateCommand, fail, fail_on


def register(app: typer.Typer) -> None:
    @app.command(
        "demo",
        cls=ShellgateCommand,
        help="Run a scripted agent session against the example policies.",
    )
    def demo(
        policy: Annotated[
            Path | None,
            typer.Option(
                "--policy",
                metavar="DIR",
                help="a policy set directory instead of policies/default",
            ),
        ] = None,
        keep: Annotated[
            bool, typer.Option("--keep", help="keep the workspace and audit log")
        ] = False,
    ) -> None:
        from shellgate.demo import run_demo
        from shellgate.errors import ShellgateError

        if policy is not None and not policy.is_dir():
            raise fail(f"--policy {policy}: not a directory")
        try:
            status = run_demo(policy=policy, keep=keep)
        except ShellgateError as exc:
            raise fail_on(exc) from None
        raise typer.Exit(status)
