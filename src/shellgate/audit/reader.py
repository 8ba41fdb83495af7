"""Reading the log back: chain verification and a tail for people.

:func:`verify` checks, line by line, everything :mod:`shellgate.audit._chain`
promises and stops at the first bad line, naming it (1-based) and why. Given a
series of rotated files (oldest first) it checks them as one chain: each later
file must continue the previous one (its first record, normally a ``link``,
has the next ``seq`` and the previous file's last hash as ``prev``); a file or
line that restarts at genesis instead is a bad record. A first file that starts
with a ``link`` continues a chain whose earlier files were not given: that is
reported (``VerifyResult.continues``), never taken for a chain from genesis.

What a hash chain cannot show: records cut off the *end* of the log leave a
shorter valid chain. ``VerifyResult.last_hash`` is the head of the chain; keep
it elsewhere (a ticket, a remote log) to detect that too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from shellgate.audit._chain import GENESIS, MAX_RECORD_BYTES, canonical, record_hash
from shellgate.errors import AuditError

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of :func:`verify`.

    ``ok``: no bad record. ``records`` counts the valid records before
    ``first_bad`` (all of them when ``ok``), over every file given;
    ``first_bad`` is the 1-based line of the first bad record in ``file`` and
    ``reason`` says what is wrong with it; ``last_hash`` is the hash of the last
    valid record (``"0" * 64`` for an empty log). ``continues`` is ``None`` when
    the chain starts at genesis, else ``(seq, hash)`` of the record the first
    file's leading ``link`` continues: the chain before it was not checked.
    """

    ok: bool
    records: int
    first_bad: int | None = None
    reason: str | None = None
    last_hash: str = GENESIS
    file: Path | None = None
    continues: tuple[int, str] | None = None

    @property
    def from_genesis(self) -> bool:
        """Intact and checked from the first record of the chain."""
        return self.ok and self.continues is None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The record on one line, or ``(None, why it is not one)``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"not a JSON object (a {type(value).__name__})"
    return value, None


def _fields_problem(record: dict[str, Any]) -> str | None:
    seq = record.get("seq")
    if type(seq) is not int or seq < 1:
        return "field 'seq' is missing or not a positive integer"
    for key in ("prev", "hash"):
        value = record.get(key)
        if not isinstance(value, str) or not _HEX64.fullmatch(value):
            return f"field '{key}' is missing or not a SHA-256 hex digest"
    when = record.get("time")
    if not isinstance(when, str):
        return "field 'time' is missing or not a string"
    try:
        datetime.fromisoformat(when)
    except ValueError:
        return "field 'time' is not an ISO 8601 time"
    return None


def _line_problem(raw: bytes, record: dict[str, Any], seq: int, prev: str) -> str | None:
    """Why this parsed line breaks the chain after ``(seq, prev)``, or ``None``."""
    problem = _fields_problem(record)
    if problem:
        return problem
    if record_hash(record) != record["hash"]:
        return "hash mismatch: the record's content was edited"
    if canonical(record) + b"\n" != raw:
        return "not in canonical form: the line was edited or re-serialised"
    expected = seq + 1
    got = record["seq"]
    if got == 1 and record["prev"] == GENESIS and expected > 1:
        return (
            f"the chain restarts at genesis (seq 1, where {expected} was expected) "
            "without a link: the log was truncated or replaced and a new chain started"
        )
    if got != expected:
        if expected == 1:
            return f"first record has seq {got}, not 1: records before it were deleted"
        if got > expected:
            return (
                f"seq {got} where {expected} was expected: "
                f"{got - expected} record(s) before it were deleted or moved"
            )
        return f"seq {got} where {expected} was expected: records were reordered or duplicated"
    if record["prev"] != prev:
        if expected == 1:
            return "first record's prev is not the genesis value: the log was cut at the start"
        return (
            "prev does not match the previous record's hash: "
            "a record was deleted, inserted or replaced"
        )
    return None


def verify(
    path: Path, *more: Path, each: Callable[[int, bytes], None] | None = None
) -> VerifyResult:
    """Check the chain of the log at ``path`` (then of ``more``, rotated files in
    order, oldest first, as one chain); stop at the first bad line.

    ``each(seq, line)``, when given, is called with every good line, in order, as
    soon as it is checked (``shellgate audit export`` writes them out).
    Raises :class:`~shellgate.errors.AuditError` when a file cannot be read.
    """
    seq, prev = 0, GENESIS
    continues: tuple[int, str] | None = None
    previous: Path | None = None  # the last file that held records
    for current in (path, *more):
        lineno = 0
        try:
            with open(current, "rb") as handle:
                while raw := handle.readline(MAX_RECORD_BYTES + 1):
                    lineno += 1
                    if lineno == 1:
                        bad = _check_first(raw, seq, prev, previous)
                        if isinstance(bad, tuple) and seq == 0 and bad[0] > 1:
                            continues = (bad[0] - 1, _prev_of(raw))
                    else:
                        bad = _check_raw(raw, seq, prev)
                    if isinstance(bad, str):
                        return VerifyResult(
                            ok=False,
                            records=seq - (continues[0] if continues else 0),
                            first_bad=lineno,
                            reason=bad,
                            last_hash=prev,
                            file=current,
                            continues=continues,
                        )
                    seq, prev = bad
                    if each is not None:
                        each(seq, raw)
            if lineno:
                previous = current
        except OSError as exc:
            raise AuditError(f"{current}: cannot read audit log: {exc.strerror or exc}") from exc
    count = seq - (continues[0] if continues else 0)
    return VerifyResult(ok=True, records=count, last_hash=prev, continues=continues)


def _prev_of(raw: bytes) -> str:
    record, _ = _parse(raw)
    assert record is not None  # only called on a line that was checked good
    return str(record["prev"])


def _check_first(raw: bytes, seq: int, prev: str, previous: Path | None) -> tuple[int, str] | str:
    """Like :func:`_check_raw`, for a file's first line: where rotation links files."""
    record, _ = _parse(raw)
    is_link = (
        record is not None
        and record.get("type") == "link"
        and raw.endswith(b"\n")
        and _fields_problem(record) is None
    )
    if is_link and seq == 0:
        assert record is not None
        # The first file given continues an earlier one: check the link record
        # itself, and take its place in the chain on trust (said in the result).
        return _check_raw(raw, record["seq"] - 1, record["prev"])
    checked = _check_raw(raw, seq, prev)
    if not isinstance(checked, str) or seq == 0 or record is None or previous is None:
        return checked
    if record.get("seq") == 1 and isinstance(_check_raw(raw, 0, GENESIS), tuple):
        return (
            f"starts a new chain at genesis without a link to {previous} (which ends at "
            f"seq {seq}): records were lost between the files, or they are not one series"
        )
    if is_link and isinstance(_check_raw(raw, record["seq"] - 1, record["prev"]), tuple):
        return (
            f"the link does not continue {previous} (it ends at seq {seq}, hash "
            f"{prev[:16]}; the link follows seq {record['seq'] - 1}, hash "
            f"{str(record['prev'])[:16]}): records were lost between the files, or files "
            "are missing or out of order"
        )
    return checked


def _check_raw(raw: bytes, seq: int, prev: str) -> tuple[int, str] | str:
    """The new ``(seq, prev)`` after a good line, or the reason it is bad."""
    if not raw.endswith(b"\n"):
        if len(raw) > MAX_RECORD_BYTES:
            return f"line is longer than {MAX_RECORD_BYTES} bytes: not a record"
        record, _ = _parse(raw)
        if record is None:
            return "truncated mid-record: the last line is incomplete"
        return "truncated: the last record has no line end"
    if raw.strip() == b"":
        return "blank line: not a record"
    record, why = _parse(raw)
    if record is None:
        return str(why)
    problem = _line_problem(raw, record, seq, prev)
    if problem:
        return problem
    return record["seq"], record["hash"]


def _last_lines(path: Path, n: int) -> list[tuple[bytes, bool]]:
    """The last ``n`` lines without their ``\\n``, each with "had a line end"."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        buf = b""
        pos = size
        # n complete lines need n+1 newlines before them (or the file start).
        while pos > 0 and buf.count(b"\n", 0, max(len(buf) - 1, 0)) < n:
            step = min(64 * 1024, pos)
            pos -= step
            handle.seek(pos)
            buf = handle.read(step) + buf
    pieces = buf.split(b"\n")
    ended = pieces[-1] == b""
    if ended:
        pieces.pop()
    lines = [(piece, True) for piece in pieces]
    if lines and not ended:
        lines[-1] = (lines[-1][0], False)
    if pos > 0:
        lines = lines[1:]  # the first piece may be the end of an earlier line
    return lines[-n:]


def tail(path: Path, n: int) -> list[dict[str, Any]]:
    """The last ``n`` records, oldest first.

    A line that is not a record appears as ``{"type": "unreadable", "reason": …,
    "raw": <first 200 characters>}`` so a damaged log can still be read. Raises
    :class:`~shellgate.errors.AuditError` when the file cannot be read and
    ``ValueError`` for a negative ``n``.
    """
    if n < 0:
        raise ValueError(f"tail needs n >= 0, got {n}")
    if n == 0:
        return []
    try:
        lines = _last_lines(path, n)
    except OSError as exc:
        raise AuditError(f"{path}: cannot read audit log: {exc.strerror or exc}") from exc
    out: list[dict[str, Any]] = []
    for body, ended in lines:
        truncated = not ended
        record, why = _parse(body)
        if truncated or record is None:
            out.append(
                {
                    "type": "unreadable",
                    "reason": "truncated mid-record" if truncated else why,
                    "raw": body.decode("utf-8", "replace")[:200],
                }
            )
        else:
            out.append(record)
    return out
