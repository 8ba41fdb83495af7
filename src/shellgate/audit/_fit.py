"""Sealing a record into its line, so that every record *can* be written.

Two kinds of value would otherwise make ``append`` fail, leaving a call off the
record: text that is not valid Unicode, and fields too large for one line.
Both are handled here, deterministically, and only when needed (the common
record pays nothing):

* **Escaping.** A string holding a surrogate code point (U+D800–U+DFFF: a lone
  surrogate, or a byte of invalid UTF-8 that Python decoded with
  ``surrogateescape``, e.g. ``\\xff`` -> U+DCFF) cannot be UTF-8. It is written
  with every ``\\`` doubled and every surrogate as ``\\uXXXX`` (lowercase hex),
  and its JSON Pointer (RFC 6901) is listed, sorted, in the record's
  ``escaped`` field. The escaping is reversible: undo the two rules on the
  listed fields. Keys are written by the gate, never by a model: a key holding
  a surrogate is refused.
* **Cutting.** When the sealed line would exceed ``MAX_RECORD_BYTES``, every
  string longer than a cap (64 KiB, then 16 KiB, 4 KiB, 1 KiB, 256 bytes, until
  the line fits) keeps its first cap bytes of UTF-8 (never splitting a
  character), and the record's ``cut`` field maps its JSON Pointer to
  ``{"bytes": <full length>, "sha256": <hex of the full text>}`` — both over the
  field's UTF-8 as it would have been written (after escaping). A record that
  does not fit even then (thousands of short fields) is refused.

``escaped`` and ``cut`` are the log's keys, like the chain fields: a caller
supplying one is refused. Both are covered by the record's hash.
"""

from __future__ import annotations

import hashlib
import re
import time
from datetime import UTC, datetime

from shellgate.audit._chain import MAX_RECORD_BYTES, sealed
from shellgate.errors import AuditError

#: Keys the log adds when it must (see the module docstring).
FIT_KEYS = frozenset({"escaped", "cut"})
#: Longest a string field is kept when the record is too long, tried in turn (bytes).
CUT_FIELD_BYTES = (64 * 1024, 16 * 1024, 4 * 1024, 1024, 256)

_SURROGATE = re.compile("[\ud800-\udfff]")


_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def utc_now() -> str:
    """Current UTC time as ISO 8601 with microseconds and ``Z``.

    The date and time of day are formatted once per second (two records of a
    call fall in the same one): ``datetime.strftime`` on every record cost more
    than hashing it.
    """
    global _second
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    last, text = _second
    if seconds != last:
        text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second = (seconds, text)
    return f"{text}.{nanos // 1000:06d}Z"


def seal(body: dict[str, object], seq: int, prev: str) -> tuple[bytes, str]:
    """``(line, hash)``: ``body`` with ``seq``, ``time``, ``prev`` and ``hash``, plus ``\\n``.

    Escapes and cuts as the module docstring says, only when the plain record
    cannot be written; raises :class:`AuditError` for a record that still does
    not fit.
    """
    chain = {"seq": seq, "time": utc_now(), "prev": prev}
    try:
        line, digest = sealed({**body, **chain})
    except UnicodeEncodeError:
        body = escaped(body)
        line, digest = sealed({**body, **chain})
    if len(line) + 1 <= MAX_RECORD_BYTES:
        return line + b"\n", digest
    size = len(line) + 1
    for cap in CUT_FIELD_BYTES:
        cuts: dict[str, object] = {}
        short = _cut(body, cap, "", cuts)
        if not cuts:
            continue
        assert isinstance(short, dict)
        line, digest = sealed({**short, "cut": cuts, **chain})
        if len(line) + 1 <= MAX_RECORD_BYTES:
            return line + b"\n", digest
    raise AuditError(
        f"audit record is {size} bytes, over the {MAX_RECORD_BYTES}-byte limit "
        f"even with every string cut to {CUT_FIELD_BYTES[-1]} bytes"
    )


def pointer(parent: str, key: str | int) -> str:
    """The JSON Pointer (RFC 6901) of ``key`` under ``parent``."""
    return f"{parent}/{str(key).replace('~', '~0').replace('/', '~1')}"


def escape_text(text: str) -> str:
    """``text`` with ``\\`` doubled and each surrogate as ``\\uXXXX`` (reversible)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text.replace("\\", "\\\\"))


def escaped(body: dict[str, object]) -> dict[str, object]:
    """``body`` with its non-Unicode strings escaped and listed under ``escaped``."""
    where: list[str] = []
    out = _escape(body, "", where)
    assert isinstance(out, dict)
    if where:
        out["escaped"] = sorted(where)
    return out


def _escape(value: object, at: str, where: list[str]) -> object:
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        where.append(at)
        return escape_text(value)
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            if _SURROGATE.search(key) is not None:
                raise AuditError(
                    f"audit record key {escape_text(key)!r} at {at or '/'} is not valid Unicode"
                )
            out[key] = _escape(item, pointer(at, key), where)
        return out
    if isinstance(value, list):
        return [_escape(item, pointer(at, i), where) for i, item in enumerate(value)]
    return value


def _cut(value: object, cap: int, at: str, cuts: dict[str, object]) -> object:
    if isinstance(value, str):
        if len(value) <= cap // 4:  # at most 4 bytes a character: surely short enough
            return value
        data = value.encode("utf-8")
        if len(data) <= cap:
            return value
        cuts[at] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        return data[:cap].decode("utf-8", "ignore")  # drops only a split last character
    if isinstance(value, dict):
        return {key: _cut(item, cap, pointer(at, key), cuts) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item, cap, pointer(at, i), cuts) for i, item in enumerate(value)]
    return value
