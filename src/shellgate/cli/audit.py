"""``shellgate audit verify FILE...`` and ``shellgate audit tail FILE [-n N]``.

Exit status of ``verify``: 0 the chain is intact (from genesis), 1 a bad record
(its file, line and why on stdout), 2 a file cannot be read (one line on
stderr), 3 the chain is intact but its first file continues an earlier log that
was not given (rotated files: pass them all, oldest first). ``tail``: 0, or 2
when the file cannot be read.

Imports of rich and the audit package happen inside the commands, so
registering the group costs nothing for the other commands' start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shellgate.cli._common import ShellgateCommand

if TYPE_CHECKING:
    from rich.text import Text

EXIT_BAD_RECORD = 1
EXIT_UNREADABLE = 2
EXIT_CONTINUES = 3
#: Records read per call shown by ``tail`` (decision, approval, result).
RECORDS_PER_CALL = 3


def register(app: typer.Typer) -> None:
    """Add the ``audit`` command group to ``app``."""
    group = typer.Typer(
        name="audit",
        help="Check and read the hash-chained audit log.",
        no_args_is_help=True,
    )
    group.command("verify", cls=ShellgateCommand)(verify_command)
    group.command("tail", cls=ShellgateCommand)(tail_command)
    app.add_typer(group, name="audit")


def _fail_unreadable(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_UNREADABLE)


def verify_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="The audit log; or rotated files of one log, oldest first (checked as one chain).",
            metavar="FILE...",
        ),
    ],
) -> None:
    """Verify the hash chain; name the first bad record's line and why."""
    from shellgate.audit import verify
    from shellgate.errors import AuditError

    try:
        result = verify(*files)
    except AuditError as exc:
        raise _fail_unreadable(str(exc)) from None
    if not result.ok:
        typer.echo(
            f"{result.file}:{result.first_bad}: bad record: {result.reason} "
            f"({result.records} valid records before it)"
        )
        raise typer.Exit(EXIT_BAD_RECORD)
    head = f"(head {result.last_hash[:16]})"
    where = str(files[0]) if len(files) == 1 else f"{files[0]} … {files[-1]} ({len(files)} files)"
    across = "" if len(files) == 1 else " across the files"
    if result.continues is None:
        typer.echo(f"{where}: ok, {result.records} records, chain intact{across} {head}")
        return
    seq, digest = result.continues
    typer.echo(
        f"{where}: {result.records} records, chain intact{across}, but not from genesis: "
        f"{files[0]} continues an earlier log (its first record links to seq {seq}, hash "
        f"{digest[:16]}) that was not given; pass the rotated files too, oldest first {head}"
    )
    raise typer.Exit(EXIT_CONTINUES)


def tail_command(
    file: Annotated[Path, typer.Argument(help="The audit log (JSON Lines).")],
    n: Annotated[int, typer.Option("-n", "--lines", min=1, help="Calls to show.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Raw records, one per line.")] = False,
) -> None:
    """Show the last calls: time, subject, decision, command, result."""
    import json

    from shellgate.audit import tail
    from shellgate.errors import AuditError

    try:
        records = tail(file, n * RECORDS_PER_CALL)
    except AuditError as exc:
        raise _fail_unreadable(str(exc)) from None
    if as_json:
        for record in records[-n:]:
            typer.echo(json.dumps(record, ensure_ascii=False, sort_keys=True))
        return
    _print_table(file, _rows(records)[-n:])


def _text(value: object) -> Text:
    from rich.text import Text

    from shellgate.approval.question import visible

    return Text(visible("" if value is None else str(value)))


def _result(record: dict[str, Any]) -> str:
    if record.get("timed_out"):
        outcome = "timed out"
    elif record.get("signal"):
        outcome = f"signal {record['signal']}"
    elif record.get("exit_code") is not None:
        outcome = f"exit {record['exit_code']}"
    else:
        outcome = "error" if record.get("is_error") else "finished"
    if record.get("truncated"):
        outcome += ", truncated"
    return outcome


def _rows(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One row per call (records joined by ``call_id``), in order of first record."""
    rows: list[dict[str, str]] = []
    by_call: dict[str, dict[str, str]] = {}
    for record in records:
        kind = str(record.get("type", "?"))
        call_id = record.get("call_id")
        row = by_call.get(call_id) if isinstance(call_id, str) else None
        if row is None:
            when = str(record.get("time", ""))[:19].replace("T", " ")
            row = {"time": when, "subject": "", "decision": "", "command": "", "result": ""}
            rows.append(row)
            if isinstance(call_id, str):
                by_call[call_id] = row
        if kind == "decision":
            row["subject"] = str(record.get("subject", ""))
            row["decision"] = str(record.get("decision", ""))
            row["command"] = str(record.get("command", ""))
        elif kind == "approval":
            row["decision"] = f"{row['decision'] or 'ask'} → {record.get('answer', '?')}"
            if record.get("approver"):
                row["decision"] += f" ({record['approver']})"
        elif kind == "result":
            row["result"] = _result(record)
        elif kind == "unreadable":
            row["decision"] = "UNREADABLE"
            row["command"] = f"{record.get('reason', '')}: {record.get('raw', '')}"
        else:  # task, invalid, refused, link…: who, what and how it ended, when known
            row["decision"] = row["decision"] or kind
            row["subject"] = row["subject"] or str(record.get("subject") or "")
            what = " ".join(str(record[k]) for k in ("tool", "task_id") if record.get(k))
            row["command"] = row["command"] or what or str(record.get("reason") or "")
            row["result"] = row["result"] or str(record.get("error") or record.get("status") or "")
    return rows


#: A table cell shows at most this many characters of a command (a 64 KiB command
#: would otherwise fill thousands of lines); ``--json`` prints the records whole.
_CELL_CHARS = 300


def _clip(text: str) -> str:
    if len(text) <= _CELL_CHARS:
        return text
    return f"{text[:_CELL_CHARS]}… ({len(text)} characters; --json for all)"


def _print_table(file: Path, rows: list[dict[str, str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=str(file), title_justify="left", expand=False)
    for name in ("time", "subject", "decision", "command", "result"):
        table.add_column(name, overflow="fold", no_wrap=name == "time")
    for row in rows:
        table.add_row(
            *(
                _text(_clip(row[name]))
                for name in ("time", "subject", "decision", "command", "result")
            )
        )
    if not rows:
        typer.echo(f"{file}: no records")
        return
    Console(highlight=False).print(table)
