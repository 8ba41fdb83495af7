"""``shellgate approvals list | approve ID | deny ID``: read and answer the approval queue.

The store is ``--store URL``, else ``[approval] store`` of ``--config FILE`` (or
``$SHELLGATE_CONFIG``). The person an answer records is the OS user running the
command (:func:`getpass.getuser`); ``--as NAME`` adds a display name
(``bob as alice@example.com``) but never replaces the OS user.

Exit status: 0 done; 1 the approval is not pending (already answered, expired,
or no such id); 2 a usage error or a store that cannot be reached. Errors are one
``error: …`` line on stderr. Everything shown from the queue (commands, reasons,
names) has control characters, bidi overrides and newlines escaped, so a
command's text can neither repaint the terminal nor forge another row.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from shellgate.cli._common import ShellgateCommand, fail

if TYPE_CHECKING:
    from shellgate.store.approvals import ApprovalQueue, QueuedApproval

EXIT_NOT_PENDING = 1
MAX_DISPLAY_NAME = 100


def register(app: typer.Typer) -> None:
    """Add the ``approvals`` command group to ``app``."""
    group = typer.Typer(
        name="approvals",
        help="List and answer the approval queue ([approval] mode = \"queue\").",
        no_args_is_help=True,
    )
    group.command("list", cls=ShellgateCommand)(list_command)
    group.command("approve", cls=ShellgateCommand)(approve_command)
    group.command("deny", cls=ShellgateCommand)(deny_command)
    app.add_typer(group, name="approvals")


StoreOpt = Annotated[
    str | None,
    typer.Option("--store", metavar="URL",
                 help="The approval store (default: [approval] store of the config)."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", metavar="FILE",
                 help="shellgate.toml (default: $SHELLGATE_CONFIG) for [approval] store."),
]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="The approval's id (from list).")]
MessageOpt = Annotated[
    str,
    typer.Option("--message", "-m", metavar="TEXT", help="Words for the model (and the record)."),
]
AsOpt = Annotated[
    str | None,
    typer.Option("--as", metavar="NAME",
                 help="A display name recorded beside your OS user name."),
]


def _shown(text: str | None) -> str:
    from shellgate.approval.question import one_line

    return one_line(text or "")


def _open(store: str | None, config: Path | None) -> ApprovalQueue:
    from shellgate.errors import ShellgateError
    from shellgate.store.approvals import ApprovalQueue
    from shellgate.store.db import Database

    if store is None:
        from shellgate.config import load_config

        try:
            store = load_config(config).approval.store
        except ShellgateError as exc:
            raise fail(_shown(str(exc)), exc.hint) from None
        if store is None:
            raise fail(
                "no approval store: give --store URL, or set [approval] store in the config",
                "--config FILE, or $SHELLGATE_CONFIG, names the config",
            )
    try:
        return ApprovalQueue(Database(store))
    except ShellgateError as exc:
        raise fail(_shown(str(exc))) from None


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _who(row: QueuedApproval) -> str:
    pid = f", pid {row.pid}" if row.pid is not None else ""
    return (f"{_shown(row.subject)}@{_shown(row.host)} "
            f"(tenant {_shown(row.tenant)}, session {_shown(row.session)}{pid})")


def _line(row: QueuedApproval, now: float) -> str:
    """One row, one line: every free-text field escaped, the command in a code span."""
    from shellgate.tools.render import code

    parts = [row.id, row.status, f"age {_duration(now - row.created_at)}"]
    if row.status == "pending":
        parts.append(f"expires in {_duration(row.expires_at - now)}")
    elif row.person:
        said = f": {_shown(row.message)}" if row.message else ""
        parts.append(f"by {_shown(row.person)}{said}")
    parts.append(_who(row))
    parts.append(code(_shown(row.command)))
    parts.append(f"why: {_shown(row.reason)}")
    parts.append(f"rule: {_shown(row.rule) or '-'}")
    return "  ".join(parts)


def list_command(
    show_all: Annotated[
        bool, typer.Option("--all", help="Also answered and expired ones (newest first).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array of rows.")] = False,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, help="With --all: at most N rows.")
    ] = 50,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """List pending approvals (oldest first): id, age, expiry, who, command, why, rule."""
    from shellgate.errors import StoreError

    queue = _open(store, config)
    try:
        rows = queue.recent(limit) if show_all else queue.pending()
    except StoreError as exc:
        raise fail(_shown(str(exc))) from None
    now = time.time()
    if as_json:
        out: list[dict[str, Any]] = []
        for row in rows:
            item = row.to_json()
            item["age_s"] = round(now - row.created_at, 3)
            item["expires_in_s"] = (
                round(max(0.0, row.expires_at - now), 3) if row.status == "pending" else None
            )
            out.append(item)
        typer.echo(json.dumps(out, ensure_ascii=True))  # \\u escapes: terminal-safe
        return
    if not rows:
        typer.echo("no pending approvals" if not show_all else "no approvals")
        return
    for row in rows:
        typer.echo(_line(row, now))


def _person(as_name: str | None) -> str:
    import getpass

    try:
        user = getpass.getuser()
    except Exception as exc:  # no login name, no $USER: nobody to record
        raise fail(f"cannot tell who you are (no OS user name: {exc})") from None
    if as_name is None:
        return user
    name = as_name.strip()
    if not name or len(name) > MAX_DISPLAY_NAME or _shown(name) != name:
        raise fail(
            f"invalid --as: a display name is 1 to {MAX_DISPLAY_NAME} printable characters"
        )
    return f"{user} as {name}"


def _answer(
    word: Literal["approve", "deny"],
    approval_id: str,
    message: str,
    as_name: str | None,
    store: str | None,
    config: Path | None,
) -> None:
    from shellgate.errors import StoreError
    from shellgate.store.approvals import MAX_MESSAGE, NotPending, well_formed
    from shellgate.tools.render import code

    if not well_formed(approval_id):
        raise fail(f"malformed approval id {_shown(repr(approval_id))}",
                   "ids are what 'shellgate approvals list' shows")
    if len(message) > MAX_MESSAGE:
        raise fail(f"--message is longer than {MAX_MESSAGE} characters")
    person = _person(as_name)
    queue = _open(store, config)
    try:
        row = queue.answer(approval_id, word, person=person, message=message)
    except NotPending as exc:
        typer.echo(f"error: {_shown(str(exc))}", err=True)
        raise typer.Exit(EXIT_NOT_PENDING) from None
    except (StoreError, ValueError) as exc:
        raise fail(_shown(str(exc))) from None
    typer.echo(f"{row.status} {row.id} as {_shown(row.person)}: {code(_shown(row.command))} "
               f"for {_who(row)}")


def approve_command(
    approval_id: IdArg,
    message: MessageOpt = "",
    as_name: AsOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Approve a pending call: it runs once, as asked."""
    _answer("approve", approval_id, message, as_name, store, config)


def deny_command(
    approval_id: IdArg,
    message: MessageOpt = "",
    as_name: AsOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Deny a pending call: it does not run; the model reads your message."""
    _answer("deny", approval_id, message, as_name, store, config)
