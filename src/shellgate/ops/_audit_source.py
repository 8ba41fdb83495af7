"""Reading the audit trail incrementally, scrape after scrape (``ops/metrics.py``).

Each record is counted once. Both sources keep a cursor between scrapes, so a
scrape reads only what was appended since the last one (at most
:data:`MAX_RECORDS_PER_SCRAPE` records; a large backlog is caught up over the
next scrapes).

**A file** (``[audit] path``) is read like ``tail -F``: the reader keeps the file
open and its byte offset. A record is identified by its place in the chain
(``seq``), and only records past the last one counted are counted:

* **rotation** (rename, then the writer's ``reopen()``): the reader finishes the
  renamed file through its open descriptor, then moves to the new file at the
  path once that file holds data (its first record is the ``link``, whose
  ``seq`` continues the old file's), so nothing is lost or counted twice;
* **copytruncate** (the file shrinks under the reader, or its first bytes are
  no longer those of the first record read): it reads the file again from the
  start; the records it already counted are skipped by ``seq``;
* **a replaced file** holding a copy of what was counted (a restore, ``cp``) is
  skipped by ``seq`` likewise;
* **a new chain** (a file starting at genesis whose first hash differs from the
  chain counted so far — the log was deleted and started over) is counted as
  new records on top of the counts: counters never go down.

A line that is not a JSON object with an integer ``seq`` is counted in
``shellgate_audit_unreadable_lines_total`` and skipped (``shellgate audit
verify`` says what is wrong with it). A partial last line is left for the next
scrape.

**A database** (``[audit] store``): the table is append-only with ``seq`` per
log, so the cursor is the last ``seq`` read of each log
(:func:`shellgate.store.audit.read_records`); every log in the store is read.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shellgate.errors import StoreError

MAX_RECORDS_PER_SCRAPE = 100_000
READ_CHUNK_BYTES = 1 << 20
PAGE = 1000
LOG_DISCOVERY_S = 300.0
HEAD_BYTES = 256  # a first record's first bytes hold its call_id or hash
GENESIS = "0" * 64


class AuditFileCursor:
    """Where the reader is in ``[audit] path`` (see the module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        self._offset = 0
        self._partial = b""
        self._head = b""  # the file's first bytes: a truncated and rewritten file differs
        self._chain: str | None = None  # hash of the genesis record of the chain counted
        self.last_seq = 0
        self.unreadable = 0

    def heads(self) -> dict[str, int]:
        """The last ``seq`` read, by the file's name."""
        return {self.path.name: self.last_seq}

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def poll(self) -> Iterator[dict[str, Any]]:
        """The records not counted yet. Raises :class:`StoreError` when the path cannot be read."""
        budget = MAX_RECORDS_PER_SCRAPE
        if self._fd is not None:
            for record in self._drain(budget):
                budget -= 1
                yield record
            if budget <= 0:
                return
        try:
            st = os.stat(self.path)
        except OSError as exc:
            if self._fd is not None:  # renamed away and not replaced yet: the old one stays
                return
            raise StoreError(f"audit file {self.path}: {exc.strerror or exc}") from exc
        if self._fd is not None and (st.st_dev, st.st_ino) == self._ident:
            return
        if self._fd is not None and st.st_size == 0:
            return  # rotated, but the writers have not linked the new file yet
        self._open()
        for record in self._drain(budget):
            yield record

    def _open(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreError(f"audit file {self.path}: {exc.strerror or exc}") from exc
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise StoreError(f"audit file {self.path}: not a regular file")
        self.close()
        self._fd, self._ident = fd, (st.st_dev, st.st_ino)
        self._offset, self._partial, self._head = 0, b"", b""

    def _drain(self, budget: int) -> Iterator[dict[str, Any]]:
        """Complete lines from ``_offset`` (where the first unread line starts)."""
        assert self._fd is not None
        if os.fstat(self._fd).st_size < self._offset or (
            self._head and os.pread(self._fd, len(self._head), 0) != self._head
        ):  # truncated (copytruncate) and maybe written past our offset since: read it again
            self._offset, self._partial, self._head = 0, b"", b""
        while budget > 0:
            chunk = os.pread(self._fd, READ_CHUNK_BYTES, self._offset + len(self._partial))
            if not chunk:
                return
            data, start = self._partial + chunk, 0
            while budget > 0:
                end = data.find(b"\n", start)
                if end < 0:
                    break
                line, start = data[start:end], end + 1
                if self._offset == 0:
                    self._head = data[: min(end + 1, HEAD_BYTES)]
                self._offset += len(line) + 1
                record = self._accept(line)
                if record is not None:
                    budget -= 1
                    yield record
            # Out of budget: stop at a line boundary; the rest is read next scrape.
            self._partial = data[start:] if budget > 0 else b""

    def _accept(self, line: bytes) -> dict[str, Any] | None:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("seq"), int):
            self.unreadable += 1
            return None
        seq: int = record["seq"]
        if seq == 1 and record.get("prev") == GENESIS:
            first = str(record.get("hash"))
            if self._chain is not None and first != self._chain:
                self.last_seq = 0  # a new chain: everything in it is new
            self._chain = first
        if seq <= self.last_seq:
            return None  # counted already (a copy, a copytruncate, a re-read)
        self.last_seq = seq
        return record


class AuditStoreCursor:
    """The last ``seq`` read from each log of the audit table.

    Every log in the store is read (a fleet may keep one per environment, see
    docs/audit.md), the configured one from the start; the others are looked for
    every :data:`LOG_DISCOVERY_S` seconds (listing the logs reads the whole key
    index, too much for every scrape).
    """

    def __init__(self, log: str) -> None:
        self.logs: dict[str, int] = {log: 0}  # log -> the last seq read
        self.unreadable = 0
        self._next_discovery = 0.0

    def heads(self) -> dict[str, int]:
        return dict(self.logs)

    def poll(self, db: Any) -> Iterator[dict[str, Any]]:
        from shellgate.store.audit import log_names

        now = time.monotonic()
        if now >= self._next_discovery:
            for name in log_names(db):
                self.logs.setdefault(name, 0)
            self._next_discovery = now + LOG_DISCOVERY_S
        for log in sorted(self.logs):
            yield from self._poll_log(db, log)

    def _poll_log(self, db: Any, log: str) -> Iterator[dict[str, Any]]:
        from shellgate.store.audit import read_records

        read = 0
        while read < MAX_RECORDS_PER_SCRAPE:
            rows = read_records(db, log, after_seq=self.logs[log], limit=PAGE)
            for row in rows:
                seq = row.get("seq")
                if not isinstance(seq, int) or seq <= self.logs[log]:
                    self.unreadable += 1  # not expected of an append-only table
                    continue
                self.logs[log] = seq
                if row.get("type") == "unreadable":  # read_records' stand-in for a bad line
                    self.unreadable += 1
                    continue
                read += 1
                yield row
            if len(rows) < PAGE:
                return
