"""``/audit``: the audit trail, newest first, with filters and the chain's status.

The trail is ``[audit] store`` (``shellgate.store.audit``: ``read_records`` and
``verify_store`` for the ``[audit] log`` chain) or else the ``[audit] path``
file (:mod:`shellgate.audit.reader`). The chain is verified on every view and
its status shown above the records: intact, or the first bad record and why.
Filters match exactly (subject, type, effect, call id) or as a substring of the
record's JSON (text); the newest :data:`SHOWN` matching records are listed. Every
view verifies the whole chain and reads the log from its start (a store applies
the subject, type and call id filters itself), so a view costs time in
proportion to the log.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shellgate.console.core import Console
from shellgate.errors import ShellgateError

SHOWN = 200  # records listed at most (the newest that match)
PAGE = 1000  # records read from a store at a time
FILTERS = ("subject", "type", "effect", "call_id", "text")
MAX_FILTER_CHARS = 200


@dataclass(frozen=True)
class Chain:
    ok: bool
    records: int
    summary: str


@dataclass(frozen=True)
class Trail:
    source: str
    chain: Chain | None
    records: list[dict[str, Any]]
    scanned: int
    error: str = ""


def _file_records(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                record = json.loads(raw)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                text = raw.decode("utf-8", "replace")[:200]
                record = {"type": "unreadable", "line": number, "raw": text}
            yield record


def _store_records(db: Any, log: str, filters: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The log's records in seq order; the exact filters the table has columns for are
    applied by the database (the rest by :func:`_matches`)."""
    from shellgate.store.audit import read_records

    exact = {k: v for k, v in filters.items() if k in ("type", "subject", "call_id")}
    after = 0
    while True:
        batch = read_records(db, log, after_seq=after, limit=PAGE, **exact)
        yield from batch
        if len(batch) < PAGE:
            return
        after = int(batch[-1]["seq"])


def _matches(record: dict[str, Any], filters: dict[str, str]) -> bool:
    for key, wanted in filters.items():
        if key == "text":
            if wanted.lower() not in json.dumps(record, ensure_ascii=False).lower():
                return False
            continue
        field = "decision" if key == "effect" else key
        if str(record.get(field, "")) != wanted:
            return False
    return True


def _chain(result: Any) -> Chain:
    if result.ok:
        start = (
            ""
            if result.continues is None
            else (f" (continues an earlier log after seq {result.continues[0]}, not checked)")
        )
        return Chain(True, result.records, f"intact: {result.records} records{start}")
    place = f"{result.file}:" if result.file is not None else "record seq "
    return Chain(False, result.records, f"broken at {place}{result.first_bad}: {result.reason}")


def read_trail(console: Console, filters: dict[str, str]) -> Trail:
    audit = console.config.audit
    shown: deque[dict[str, Any]] = deque(maxlen=SHOWN)
    scanned = 0
    if audit.store is not None:
        db = console.database(audit.store)
        source = f"store {db.display}, log {audit.log!r}"
        try:
            from shellgate.store.audit import verify_store
        except ImportError:
            return Trail(
                source,
                None,
                [],
                0,
                "This shellgate cannot read an audit store (shellgate.store.audit is missing).",
            )
        try:
            chain = _chain(verify_store(db, audit.log))
            records = _store_records(db, audit.log, filters)
            for record in records:
                scanned += 1
                if _matches(record, filters):
                    shown.append(record)
        except ShellgateError as exc:
            return Trail(source, None, [], scanned, f"The audit store cannot be read: {exc}")
    elif audit.path is not None:
        from shellgate.audit.reader import verify

        path = Path(audit.path)
        source = f"file {path}"
        if not path.exists():
            return Trail(source, None, [], 0, f"{path}: no audit log yet")
        try:
            chain = _chain(verify(path))
            for record in _file_records(path):
                scanned += 1
                if _matches(record, filters):
                    shown.append(record)
        except (ShellgateError, OSError) as exc:
            return Trail(source, None, [], scanned, f"The audit log cannot be read: {exc}")
    else:
        return Trail("none", None, [], 0, "No audit trail is configured ([audit] path is empty).")
    return Trail(source, chain, list(reversed(shown)), scanned)


def routes(console: Console) -> list[Route]:
    async def page(request: Request) -> Response:
        query = request.query_params
        filters = {k: query[k].strip() for k in FILTERS if query.get(k, "").strip()}
        too_long = [k for k, v in filters.items() if len(v) > MAX_FILTER_CHARS]
        if too_long:
            trail = Trail(
                "", None, [], 0, f"The {too_long[0]} filter is over {MAX_FILTER_CHARS} characters."
            )
            status = 400
        else:
            trail = await run_in_threadpool(read_trail, console, filters)
            status = 200
        return console.render(
            request,
            "audit.html",
            status_code=status,
            trail=trail,
            filters={k: query.get(k, "") for k in FILTERS},
            shown_max=SHOWN,
            as_json=lambda r: json.dumps(r, indent=2, ensure_ascii=False, sort_keys=True),
        )

    return [Route("/audit", console.page(page), methods=["GET"])]
