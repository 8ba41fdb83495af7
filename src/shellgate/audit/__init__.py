"""The audit log: append-only, hash-chained JSON Lines (``docs/audit.md``).

* :class:`AuditLog` writes one record per line, on disk before ``append``
  returns, chained by SHA-256 so any edit, deletion or reordering shows;
* :func:`verify` checks a log and names the first bad line;
* :func:`tail` reads the last records back, damaged lines included.

Environment values are never written: a record with an ``env`` or
``environment`` key, at any depth, is refused.
"""

from __future__ import annotations

from shellgate.audit._chain import GENESIS, MAX_RECORD_BYTES, canonical, record_hash
from shellgate.audit.log import AuditLog
from shellgate.audit.reader import VerifyResult, tail, verify

__all__ = [
    "GENESIS",
    "MAX_RECORD_BYTES",
    "AuditLog",
    "VerifyResult",
    "canonical",
    "record_hash",
    "tail",
    "verify",
]
