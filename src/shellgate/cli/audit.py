"""``shellgate audit verify|tail|export``: the audit log, in files or in a database store.

Each command reads either ``FILE...`` (one log, or its rotated files oldest
first, read as one chain) or ``--store URL [--log NAME]`` — never both. With
neither, ``--config FILE`` (or ``$SHELLGATE_CONFIG``) names the log: its
``[audit] store`` and ``[audit] log`` if a store is set, else its ``[audit] path``.

Exit status of ``verify``: 0 the chain is intact (from genesis), 1 a bad record
(its file and line, or its ``seq`` in a store, and why, on stdout), 2 the log
cannot be read or the command line is wrong (one line on stderr), 3 the chain
is intact but its first file continues an earlier log that was not given
(rotated files: pass them all, oldest first). ``tail``: 0, or 2. ``export``:
as ``verify``, the message on stderr (stdout carries the records).

Imports of rich, the audit package and the store happen inside the commands,
so registering the group costs nothing for the other commands' start-up.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO, Optional

import typer

from shellgate.cli._common import ShellgateCommand, fail

if TYPE_CHECKING:
    from shellgate.audit.reader import VerifyResult
    from shellgate.store.db import Database

EXIT_BAD_RECORD = 1
EXIT_UNREADABLE = 2
EXIT_CONTINUES = 3
#: Records read per call shown by ``tail`` (decision, approval, result).
RECORDS_PER_CALL = 3

FilesArg = Annotated[
    Optional[list[Path]],  # noqa: UP045 - typer reads Optional, not X | None
    typer.Argument(
        help="The audit log; or rotated files of one log, oldest first (read as one chain).",
        metavar="FILE...",
        show_default=False,
    ),
]
StoreOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--store", metavar="URL",
                 help="A database store (sqlite:… or postgresql://…) instead of FILE."),
]
LogOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--log", metavar="NAME",
                 help="The log in the store (default: [audit] log, else 'default')."),
]
ConfigOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--config", metavar="FILE",
                 help="With no FILE or --store: read the log its [audit] names."),
]


def register(app: typer.Typer) -> None:
    """Add the ``audit`` command group to ``app``."""
    group = typer.Typer(
        name="audit",
        help="Check, read and export the hash-chained audit log.",
        no_args_is_help=True,
    )
    group.command("verify", cls=ShellgateCommand)(verify_command)
    group.command("tail", cls=ShellgateCommand)(tail_command)
    group.command("export", cls=ShellgateCommand)(export_command)
    app.add_typer(group, name="audit")


def _fail_unreadable(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_UNREADABLE)


@dataclass
class Source:
    """The log a command reads: files, or one log in a store."""

    files: list[Path]
    store: str | None = None
    log: str = "default"
    db: Database | None = None

    @property
    def title(self) -> str:
        if self.db is not None:
            return f"{self.db.display} (log {self.log!r})"
        if len(self.files) == 1:
            return str(self.files[0])
        return f"{self.files[0]} … {self.files[-1]} ({len(self.files)} files)"

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


def _source(
    command: str, files: list[Path] | None, store: str | None, log: str | None,
    config: Path | None,
) -> Source:
    """Resolve FILE... / --store / --config into one log (see the module docstring)."""
    if files and store is not None:
        raise fail("give FILE... or --store URL, not both",
                   f"see 'shellgate audit {command} --help'")
    if files and log is not None:
        raise fail("--log names a log in a store: it needs --store URL, not FILE")
    if (files or store is not None) and config is not None:
        raise fail("--config names the log only when no FILE or --store is given")
    if not files and store is None:
        chosen = config if config is not None else os.environ.get("SHELLGATE_CONFIG")
        if not chosen:
            raise fail(f"missing argument '{'FILE' if command == 'tail' else 'FILE...'}'",
                       f"see 'shellgate audit {command} --help'")
        from shellgate.config import load_config
        from shellgate.errors import ShellgateError

        try:
            audit = load_config(chosen).audit
        except ShellgateError as exc:
            raise fail(str(exc), exc.hint) from None
        if audit.store is not None:
            store, log = audit.store, log or audit.log
        elif audit.path is not None:
            if log is not None:
                raise fail(f"--log: {chosen} writes a file ([audit] path), not a store")
            return Source([audit.path])
        else:
            raise fail(f"{chosen}: [audit] names no log (path is empty and no store is set)")
    if store is None:
        assert files
        return Source(list(files))
    return _open_store(store, log or "default")


def _open_store(url: str, log: str) -> Source:
    from shellgate.errors import AuditError
    from shellgate.store.audit import has_log, log_names, open_reader

    try:
        db = open_reader(url)
    except AuditError as exc:
        raise _fail_unreadable(str(exc)) from None
    try:
        if not has_log(db, log):
            names = log_names(db)
            known = f"its logs: {', '.join(names)}" if names else "it holds no audit records"
            raise _fail_unreadable(f"{db.display}: no audit log named {log!r} ({known})")
    except AuditError as exc:
        db.close()
        raise _fail_unreadable(str(exc)) from None
    except typer.Exit:
        db.close()
        raise
    return Source([], url, log, db)


def _verified(source: Source, each: Any = None) -> VerifyResult:
    from shellgate.audit import verify
    from shellgate.errors import AuditError
    from shellgate.store.audit import verify_store

    try:
        if source.db is not None:
            return verify_store(source.db, source.log, each=each)
        return verify(*source.files, each=each)
    except AuditError as exc:
        raise _fail_unreadable(str(exc)) from None


def _bad_record(source: Source, result: VerifyResult) -> str:
    where = (f"{source.title}: seq {result.first_bad}" if source.db is not None
             else f"{result.file}:{result.first_bad}")
    return (f"{where}: bad record: {result.reason} "
            f"({result.records} valid records before it)")


def _continues(source: Source, result: VerifyResult) -> str:
    assert result.continues is not None
    seq, digest = result.continues
    return (f"{source.files[0]} continues an earlier log (its first record links to seq "
            f"{seq}, hash {digest[:16]}) that was not given; pass the rotated files too, "
            "oldest first")


def verify_command(
    files: FilesArg = None,
    store: StoreOpt = None,
    log: LogOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Verify the hash chain; name the first bad record (line, or seq in a store) and why."""
    source = _source("verify", files, store, log, config)
    try:
        result = _verified(source)
    finally:
        source.close()
    if not result.ok:
        typer.echo(_bad_record(source, result))
        raise typer.Exit(EXIT_BAD_RECORD)
    head = f"(head {result.last_hash[:16]})"
    across = " across the files" if len(source.files) > 1 else ""
    if result.continues is None:
        typer.echo(f"{source.title}: ok, {result.records} records, chain intact{across} {head}")
        return
    typer.echo(f"{source.title}: {result.records} records, chain intact{across}, but not from "
               f"genesis: {_continues(source, result)} {head}")
    raise typer.Exit(EXIT_CONTINUES)


def _tail(source: Source, n: int) -> list[dict[str, Any]]:
    """The last ``n`` records: from the store, or from the files, newest file last."""
    from shellgate.audit import tail
    from shellgate.errors import AuditError
    from shellgate.store.audit import tail_records

    try:
        if source.db is not None:
            return tail_records(source.db, source.log, n)
        records: list[dict[str, Any]] = []
        for file in reversed(source.files):  # a fresh rotated file may hold few records
            records = tail(file, n - len(records)) + records
            if len(records) >= n:
                break
        return records
    except AuditError as exc:
        raise _fail_unreadable(str(exc)) from None


def tail_command(
    files: FilesArg = None,
    store: StoreOpt = None,
    log: LogOpt = None,
    config: ConfigOpt = None,
    n: Annotated[int, typer.Option("-n", "--lines", min=1, help="Calls to show.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Raw records, one per line.")] = False,
) -> None:
    """Show the last calls: time, subject, decision, command, result."""
    import json

    from shellgate.cli._audit_table import call_rows, print_table

    source = _source("tail", files, store, log, config)
    try:
        records = _tail(source, n * RECORDS_PER_CALL)
    finally:
        source.close()
    if as_json:
        for record in records[-n:]:
            typer.echo(json.dumps(record, ensure_ascii=False, sort_keys=True))
        return
    print_table(source.title, call_rows(records)[-n:])


def _output(path: Path | None) -> BinaryIO:
    if path is None:
        return sys.stdout.buffer
    try:  # records hold commands, which can hold secrets: owner only, like the log
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise _fail_unreadable(f"{path}: cannot write: {exc.strerror}") from None
    return os.fdopen(fd, "wb")


def export_command(
    files: FilesArg = None,
    store: StoreOpt = None,
    log: LogOpt = None,
    config: ConfigOpt = None,
    after_seq: Annotated[
        int, typer.Option("--after-seq", metavar="N", min=0,
                          help="Only records with seq > N (the last one a SIEM has).")
    ] = 0,
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output", "-o", metavar="PATH",
                     help="Write here (mode 0600) instead of stdout."),
    ] = None,
) -> None:
    """Write the records as JSON Lines for a SIEM: exactly the hashed lines, checked first.

    The whole chain is verified as it is read; export stops at a bad record
    (exit 1, naming it on stderr) after the good records before it.
    """
    source = _source("export", files, store, log, config)
    written = [0, 0, 0]  # records, first seq, last seq
    try:
        out = _output(output)
        try:
            def each(seq: int, raw: bytes) -> None:
                if seq > after_seq:
                    out.write(raw)
                    written[0] += 1
                    written[1] = written[1] or seq
                    written[2] = seq

            result = _verified(source, each)
            out.flush()
        finally:
            if out is not sys.stdout.buffer:
                out.close()
    finally:
        source.close()
    span = f" (seq {written[1]}..{written[2]})" if written[0] else ""
    if not result.ok:
        typer.echo(f"error: {_bad_record(source, result)}; exported {written[0]} records"
                   f"{span}, none past it", err=True)
        raise typer.Exit(EXIT_BAD_RECORD)
    typer.echo(f"note: {source.title}: exported {written[0]} records{span}, chain intact",
               err=True)
    if result.continues is not None:
        typer.echo(f"note: not from genesis: {_continues(source, result)}", err=True)
        raise typer.Exit(EXIT_CONTINUES)
