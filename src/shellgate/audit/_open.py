"""Choosing the audit log a configuration names: the file, or a database store."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from shellgate.audit.log import AuditLog

if TYPE_CHECKING:
    from shellgate.config import AuditConfig


class AuditSink(Protocol):
    """What the gate, the hooks and the tools use of an audit log.

    :class:`~shellgate.audit.log.AuditLog` (a file) and
    :class:`~shellgate.store.audit_log.StoreAuditLog` (a database) both are one.
    ``append`` returns only once the record is durable as configured, and raises
    :class:`~shellgate.errors.AuditError` when it cannot be written: the caller
    must then not run the call.
    """

    @property
    def path(self) -> Path | None: ...

    @property
    def enabled(self) -> bool: ...

    @property
    def last_hash(self) -> str: ...

    def append(self, record: Mapping[str, object]) -> str: ...

    def reopen(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> AuditSink: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


def open_audit(config: AuditConfig) -> AuditSink:
    """The audit log ``[audit]`` names: ``store`` (and ``log``) if set, else ``path``.

    The store code (and psycopg) is imported only for a store, so the file log's
    users (the hook's fast path) load nothing more.
    """
    if config.store is not None:
        from shellgate.store.audit_log import StoreAuditLog

        return StoreAuditLog(config.store, config.log, fsync=config.fsync)
    return AuditLog(config.path, fsync=config.fsync)
