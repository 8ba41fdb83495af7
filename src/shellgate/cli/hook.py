"""``shellgate hook claude-code|gemini-cli [--config FILE]``: a host's hook command.

Reads the host's hook JSON on stdin, decides the shell command with the
configured policy, audits the decision and prints the host's answer
(``docs/hooks-host.md``). Exit status 0 (answered, or not the host's shell tool:
nothing printed), 2 for anything else, with one ``error: …`` line on stderr and
nothing on stdout; both hosts block a call whose hook exits 2.

``cli/__init__.py`` runs these command lines without typer (the fast path); this
module is what ``--help`` shows and where the command lines the fast path does
not recognise end up. Both call :func:`shellgate.hooks_host.run.run_hook`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shellgate.cli._common import ShellgateCommand

_CONFIG_HELP = "Config file (else $SHELLGATE_CONFIG)."


def _run(host: str, config: Path | None) -> None:
    from shellgate.hooks_host.run import run_hook

    raise typer.Exit(run_hook(host, None if config is None else str(config)))


def claude_code_command(
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE", help=_CONFIG_HELP)
    ] = None,
) -> None:
    """Claude Code PreToolUse hook: answer allow, ask or deny for a Bash call."""
    _run("claude-code", config)


def gemini_cli_command(
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE", help=_CONFIG_HELP)
    ] = None,
) -> None:
    """Gemini CLI BeforeTool hook: answer allow or deny (an ask is a deny) for a shell call."""
    _run("gemini-cli", config)


def register(app: typer.Typer) -> None:
    """Add the ``hook`` command group to ``app``."""
    group = typer.Typer(
        name="hook",
        help="Decide a coding agent's own shell tool calls (Claude Code, Gemini CLI hooks).",
        no_args_is_help=True,
    )
    group.command("claude-code", cls=ShellgateCommand)(claude_code_command)
    group.command("gemini-cli", cls=ShellgateCommand)(gemini_cli_command)
    app.add_typer(group, name="hook")
