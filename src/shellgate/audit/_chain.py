"""The record format, in one place: canonical JSON lines chained by SHA-256.

A record line is the canonical JSON of one object (keys sorted, no whitespace,
UTF-8, no NaN/Infinity) followed by ``\\n``. Every record carries:

* ``seq`` — 1 for the first record, +1 for each next one;
* ``time`` — UTC, ISO 8601 with microseconds and a ``Z``;
* ``prev`` — the ``hash`` of the previous record (``"0" * 64`` for the first);
* ``hash`` — SHA-256 (hex) of the canonical JSON of the record *without* ``hash``.

So editing any field breaks that record's ``hash``; recomputing the hash breaks
the next record's ``prev``; deleting, inserting or reordering records breaks
``seq`` and ``prev``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from shellgate.errors import AuditError

GENESIS = "0" * 64
#: Keys the log owns; a caller supplying one could forge the chain.
CHAIN_KEYS = frozenset({"seq", "time", "prev", "hash"})
#: Keys that would hold environment values, refused at any depth (case-insensitive).
FORBIDDEN_KEYS = frozenset({"env", "environment"})
#: Longest record line accepted, in bytes (the longest command is 100 kB by default).
MAX_RECORD_BYTES = 1024 * 1024
#: Deepest nesting accepted in a record.
MAX_DEPTH = 32


_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical(record: Mapping[str, Any]) -> bytes:
    """The one serialisation used for writing, hashing and verifying.

    Keys sorted, no whitespace, UTF-8, no NaN/Infinity (one shared encoder:
    ``json.dumps`` would build a new one for every call).
    """
    return _ENCODER.encode(record).encode("utf-8")


def record_hash(record: Mapping[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of ``record`` without its ``hash`` key."""
    body = {key: value for key, value in record.items() if key != "hash"}
    return hashlib.sha256(canonical(body)).hexdigest()


#: What ``sealed`` serialises in the hash's place: random per process, so no
#: value of a record can spell it (a quote inside a JSON string is escaped, so
#: only a key of the record itself can put ``"hash":"`` in the line, and the
#: caller passes a record without ``hash``).
_SLOT = f'"hash":"{secrets.token_hex(16)}"'
_SLOT_VALUE = _SLOT[len('"hash":"') : -1]


def sealed(record: Mapping[str, Any]) -> tuple[bytes, str]:
    """``(canonical(record + hash), hash)`` for a record without ``hash``, in one pass.

    The hash covers the canonical JSON of the record; the written line is the
    same JSON with ``"hash"`` in its sorted place. The record is serialised once,
    with a placeholder where its hash goes: without that member (and the comma
    that joins it) it is the canonical JSON the hash covers, and with the digest
    in its place it is the line (equal to :func:`canonical` by construction;
    ``tests/audit`` checks it on random records).
    """
    text = _ENCODER.encode({**record, "hash": _SLOT_VALUE})
    at = text.index(_SLOT)
    end = at + len(_SLOT)
    if text[at - 1] == ",":  # a member before it: drop the comma before
        bare = text[: at - 1] + text[end:]
    elif text[end] == ",":  # the first member: drop the comma after
        bare = text[:at] + text[end + 1 :]
    else:  # the only member
        bare = text[:at] + text[end:]
    digest = hashlib.sha256(bare.encode("utf-8")).hexdigest()
    line = f'{text[:at]}"hash":"{digest}"{text[end:]}'
    return line.encode("utf-8"), digest


def plain(value: object, where: str = "record", depth: int = 0) -> object:
    """``value`` as plain JSON data, refusing environment keys and unknown types.

    Paths become strings, tuples lists, pydantic models their JSON dump (then
    checked like everything else). Raises :class:`AuditError` naming the field.
    """
    return _plain(value, (where,), depth)


def _where(path: tuple[object, ...]) -> str:
    # Built only for an error message: a record of thousands of fields costs no
    # string per field on the happy path.
    out = str(path[0])
    for part in path[1:]:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


_FORBIDDEN_LENGTHS = frozenset(len(key) for key in FORBIDDEN_KEYS)


def _plain(value: object, path: tuple[object, ...], depth: int) -> object:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value  # the common case first, by exact type: records are mostly these
    if depth > MAX_DEPTH:
        raise AuditError(f"audit record nested deeper than {MAX_DEPTH} levels at {_where(path)}")
    # Dicts and lists next (concrete types, checked in C): an isinstance against
    # an ABC (os.PathLike, Mapping) costs a Python-level __instancecheck__.
    if isinstance(value, dict):
        return _plain_mapping(value, path, depth)
    if isinstance(value, (list, tuple)):
        return _plain_items(value, path, depth)
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise AuditError(f"audit record field {_where(path)} is {value!r}, not a JSON number")
        return value
    if isinstance(value, (PurePath, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return _plain_mapping(value, path, depth)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(mode="json"), path, depth)
    raise AuditError(
        f"audit record field {_where(path)} has type {type(value).__name__}, not JSON data"
    )


def _plain_mapping(
    value: Mapping[object, object], path: tuple[object, ...], depth: int
) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise AuditError(f"audit record key {key!r} at {_where(path)} is not a string")
        if len(key) in _FORBIDDEN_LENGTHS and key.lower() in FORBIDDEN_KEYS:
            raise AuditError(
                f"audit record field {_where((*path, key))} would hold environment values, "
                "which are never written to the audit log"
            )
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            out[key] = item  # inline: no frame and no path tuple per scalar field
        else:
            out[key] = _plain(item, (*path, key), depth + 1)
    return out


def _plain_items(
    value: list[object] | tuple[object, ...], path: tuple[object, ...], depth: int
) -> list[object]:
    return [
        item
        if type(item) is str or type(item) is int or type(item) is bool or item is None
        else _plain(item, (*path, i), depth + 1)
        for i, item in enumerate(value)
    ]
