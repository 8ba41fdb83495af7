"""Sealing a record into its line: chain fields, hash, and the size limit."""

from __future__ import annotations

from datetime import UTC, datetime

from shellgate.audit._chain import MAX_RECORD_BYTES, sealed
from shellgate.errors import AuditError


def utc_now() -> str:
    """Current UTC time as ISO 8601 with microseconds and ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seal(body: dict[str, object], seq: int, prev: str) -> tuple[bytes, str]:
    """``(line, hash)``: ``body`` with ``seq``, ``time``, ``prev`` and ``hash``, plus ``\\n``."""
    line, digest = sealed(dict(body, seq=seq, time=utc_now(), prev=prev))
    if len(line) + 1 > MAX_RECORD_BYTES:
        raise AuditError(
            f"audit record is {len(line) + 1} bytes, over the {MAX_RECORD_BYTES}-byte limit"
        )
    return line + b"\n", digest
