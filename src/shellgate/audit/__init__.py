"""The audit log: append-only, hash-chained JSON Lines (``docs/audit.md``).

* :class:`AuditLog` writes one record per line, on disk before ``append``
  returns, chained by SHA-256 so any edit, deletion or reordering shows;
* :meth:`AuditLog.reopen` follows a rotation: the new file's first record
  links to the old file's last (a ``link`` record), never a silent new chain;
* :func:`verify` checks a log, or rotated files as one chain, and names the
  first bad line;
* :func:`tail` reads the last records back, damaged lines included;
* :func:`open_audit` opens the log a configuration names: the file, or the
  table of a database store (:mod:`shellgate.store.audit`), behind one
  interface (:class:`AuditSink`).

Text that is not UTF-8 is escaped and oversized fields are cut (with their
length and SHA-256), so every record can be written (``_fit.py``).

Environment values are never written: a record with an ``env`` or
``environment`` key, at any depth, is refused.
"""

from __future__ import annotations

from shellgate.audit._chain import GENESIS, MAX_RECORD_BYTES, canonical, record_hash
from shellgate.audit._open import AuditSink, open_audit
from shellgate.audit.log import AuditLog
from shellgate.audit.reader import VerifyResult, tail, verify

__all__ = [
    "GENESIS",
    "MAX_RECORD_BYTES",
    "AuditLog",
    "AuditSink",
    "VerifyResult",
    "canonical",
    "open_audit",
    "record_hash",
    "tail",
    "verify",
]
