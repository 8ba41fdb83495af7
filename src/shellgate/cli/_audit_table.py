"""The table ``shellgate audit tail`` prints: one row per call, escaped for a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.text import Text


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


def call_rows(records: list[dict[str, Any]]) -> list[dict[str, str]]:
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


def print_table(title: str, rows: list[dict[str, str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", expand=False)
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
        typer.echo(f"{title}: no records")
        return
    Console(highlight=False).print(table)
