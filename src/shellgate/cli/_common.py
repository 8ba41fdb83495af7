"""What every subcommand shares: the error style, the help style, loading config.

The error style, for every user mistake (docs/cli.md): one ``error: …`` line on
stderr naming what is at fault, then, when there is something to do about it,
one ``hint: …`` line; exit status 2; never a traceback or a usage dump. Command
line mistakes click finds (an unknown option, a missing argument) are reported
the same way, by :func:`usage_error` — from :class:`ShellgateCommand` for a
command's own options, from ``cli.main`` for anything the groups find.

The help style: options show a placeholder (``--config FILE``), never a Python
type (``<list[str]>``, ``<path>``) as typer prints by default.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:
    from collections.abc import Iterable

    from shellgate.config import Config
    from shellgate.errors import ShellgateError
    from shellgate.policy.loader import PolicySource

EXIT_USAGE = 2


def fail(message: str, hint: str | None = None) -> typer.Exit:
    """Print ``error: message`` (and ``hint: hint``) on stderr; return the exit to raise."""
    typer.echo(f"error: {message}", err=True)
    if hint:
        typer.echo(f"hint: {hint}", err=True)
    return typer.Exit(EXIT_USAGE)


def fail_on(exc: ShellgateError) -> typer.Exit:
    """:func:`fail` for a shellgate error: its one line and its hint."""
    return fail(str(exc), exc.hint)


def note(message: str) -> None:
    """A ``note: …`` line on stderr (stdout may be JSON or the MCP wire)."""
    typer.echo(f"note: {message}", err=True)


def note_default_policy(cfg: Config) -> None:
    """Say so when no policy set was configured and the packaged default is in use."""
    if cfg.default_policy is not None and cfg.policy.store is None:
        note(f"no [policy] paths configured; using the packaged policy set {cfg.default_policy}")


def warn_rows(sources: Iterable[PolicySource]) -> None:
    """A ``warning: FILE:LINE: …`` line on stderr for each row of the sets that loads
    but cannot mean what it says (:attr:`PolicySource.warnings`)."""
    for source in sources:
        for problem in source.warnings:
            typer.echo(f"warning: {problem}", err=True)


def load(config: Path | None, **overrides: Any) -> Config:
    """Load the config as :func:`~shellgate.config.load_config`; errors as :func:`fail`.

    For the commands that run the gate (``run``, ``mcp``): a note on stderr says
    when the packaged default policy set is in use.
    """
    from shellgate.config import load_config
    from shellgate.errors import ShellgateError

    try:
        cfg = load_config(config, **overrides)
    except ShellgateError as exc:
        raise fail_on(exc) from None
    note_default_policy(cfg)
    return cfg


def _lower_first(text: str) -> str:
    # click's messages start with a capital ("No such option"); ours do not.
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def is_click_error(exc: BaseException) -> bool:
    """Whether ``exc`` is one of click's user-facing errors (typer vendors click).

    typer does not export click's ``UsageError``; its errors are recognised by the
    exception protocol typer does export (``TyperException``: ``exit_code`` and
    ``format_message``).
    """
    return isinstance(exc, typer.TyperException)


def usage_error(exc: BaseException) -> int:
    """Report one of click's errors in the shellgate style; return the exit status."""
    assert isinstance(exc, typer.TyperException)
    status = exc.exit_code
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        # A group or command run with nothing: its help *is* the answer.
        typer.echo(ctx.get_help(), err=True)
        return int(status)
    possibilities = getattr(exc, "possibilities", None)
    message = exc.message if possibilities else exc.format_message()
    hint = None
    if possibilities:
        hint = f"did you mean {' or '.join(sorted(possibilities))}?"
    elif ". Did you mean " in message:  # typer's "No such command 'x'. Did you mean 'y'?"
        message, _, guess = message.partition(". Did you mean ")
        hint = f"did you mean {guess}"
    if hint is None and ctx is not None:
        hint = f"see '{ctx.command_path} --help'"
    typer.echo(f"error: {_lower_first(message.rstrip('.'))}", err=True)
    if hint:
        typer.echo(f"hint: {hint}", err=True)
    return int(status)


class ShellgateCommand(TyperCommand):
    """A command in the shellgate styles: errors as :func:`usage_error`, plain help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            # An argument's name shows in errors ("missing argument 'FILE'") as in help.
            if param.param_type_name == "argument" and param.metavar is None:
                param.metavar = (param.name or "").upper()

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            result: list[str] = super().parse_args(ctx, args)
        except Exception as exc:
            if not is_click_error(exc) or type(exc).__name__ == "NoArgsIsHelpError":
                raise
            raise typer.Exit(usage_error(exc)) from None
        return result

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] COMMAND...``: the same placeholders as the help lists."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                shown = _placeholder(param)
                pieces.append(shown if param.required else f"[{shown}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """Arguments and options with placeholders (``FILE``), not Python type names."""
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            label, text = record
            if param.param_type_name == "argument":
                sections["Arguments"].append((_placeholder(param), text))
            elif param.param_type_name == "option":
                if not (getattr(param, "is_flag", False) or getattr(param, "count", False)):
                    label = f"{', '.join(param.opts)} {_placeholder(param)}"
                sections["Options"].append((label, text))
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _placeholder(param: Any) -> str:
    """``FILE`` for an option's value or an argument: its metavar, else its name."""
    shown = str(param.metavar or (param.name or "").upper())
    if param.param_type_name == "argument" and param.nargs != 1 and not shown.endswith("..."):
        shown += "..."
    return shown


__all__ = [
    "EXIT_USAGE",
    "ShellgateCommand",
    "fail",
    "fail_on",
    "is_click_error",
    "load",
    "note",
    "note_default_policy",
    "usage_error",
]
