"""The writer: one hash-chained JSON line per record, on disk before ``append`` returns.

Invariants:

* ``append`` returns only after the whole line reached the kernel in a single
  ``write`` of an ``O_APPEND`` descriptor (``fsync=True`` also waits for the disk).
  A process killed mid-command has therefore already logged the decision.
* Records never interleave: a thread lock serialises writers in this process and
  an exclusive ``flock`` serialises processes sharing the file; under both locks
  the writer re-reads the chain's tail when the file grew behind its back, so two
  processes appending to one log still produce one valid chain.
* A write that fails part-way poisons the log: every later ``append`` raises
  :class:`~shellgate.errors.AuditError` (the gate must not run unaudited calls).
* Opening an existing log continues its chain from its last record, after
  checking that record's own hash; a log that ends mid-record is refused.
* Rotation never starts a silent new chain: when the writer knows a chain and
  finds its file empty at an append (a new file after :meth:`AuditLog.reopen`,
  or the same file truncated under it, as ``copytruncate`` does), it first
  writes a ``link`` record that continues the chain (``seq`` + 1, ``prev`` =
  the last hash it wrote), in the same ``write`` as the record itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from shellgate.audit._chain import (
    CHAIN_KEYS,
    GENESIS,
    MAX_RECORD_BYTES,
    canonical,
    plain,
    record_hash,
)
from shellgate.audit._fit import FIT_KEYS, seal
from shellgate.errors import AuditError

_TAIL_CHUNK_BYTES = 64 * 1024
_OPEN_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def _read_last_line(fd: int, size: int, where: Path) -> bytes:
    """The last line of the file (with its ``\\n``), reading backwards in chunks."""
    buf = b""
    pos = size
    while pos > 0:
        step = min(_TAIL_CHUNK_BYTES, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        cut = buf.rfind(b"\n", 0, len(buf) - 1)
        if cut >= 0:
            return buf[cut + 1 :]
        if len(buf) > MAX_RECORD_BYTES + 1:
            raise AuditError(f"{where}: last record is longer than {MAX_RECORD_BYTES} bytes")
    return buf


def _tail_state(fd: int, size: int, where: Path) -> tuple[int, str]:
    """``(seq, hash)`` of the last record, or ``(0, GENESIS)`` for an empty log."""
    if size == 0:
        return 0, GENESIS
    line = _read_last_line(fd, size, where)
    damaged = f"{where}: the last record is damaged ({{}}); run 'shellgate audit verify'"
    if not line.endswith(b"\n"):
        raise AuditError(damaged.format("it ends mid-record"))
    try:
        record = json.loads(line)
    except ValueError:
        raise AuditError(damaged.format("not JSON")) from None
    if not isinstance(record, dict):
        raise AuditError(damaged.format("not a JSON object"))
    seq, digest = record.get("seq"), record.get("hash")
    if type(seq) is not int or not isinstance(digest, str):
        raise AuditError(damaged.format("no seq or hash"))
    if record_hash(record) != digest or canonical(record) + b"\n" != line:
        raise AuditError(damaged.format("its hash does not match its content"))
    return seq, digest


def checked_body(record: Mapping[str, object]) -> dict[str, object]:
    """``record`` as plain JSON data, or :class:`AuditError` (every log's checks:
    a mapping, none of the log's own keys, no environment, JSON values only)."""
    if not isinstance(record, Mapping):
        raise AuditError(f"audit record must be a mapping, got {type(record).__name__}")
    owned = (CHAIN_KEYS | FIT_KEYS).intersection(record)
    if owned:
        raise AuditError(
            f"audit record must not set {', '.join(sorted(owned))}: the log adds them"
        )
    body = plain(record)
    assert isinstance(body, dict)  # a Mapping stays a dict under plain()
    return body


def _open_log(path: Path) -> tuple[int, int, tuple[int, str]]:
    """``(fd, size, (seq, hash) of its last record)`` for the log at ``path``."""
    try:
        fd = os.open(path, _OPEN_FLAGS, 0o600)  # commands can hold secrets: owner only
    except OSError as exc:
        raise AuditError(f"{path}: cannot open audit log: {exc.strerror}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise AuditError(f"{path}: audit log is not a regular file")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            return fd, size, _tail_state(fd, size, path)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError as exc:
        os.close(fd)
        raise AuditError(f"{path}: cannot read audit log: {exc.strerror}") from exc
    except BaseException:
        os.close(fd)
        raise


class AuditLog:
    """Append-only, hash-chained JSON Lines audit log (see ``docs/audit.md``).

    ``path=None`` disables the file but keeps every check (a record that would be
    refused on disk is refused in memory too) and an in-memory chain.

    ``fsync`` (default off): ``append`` always hands the line to the kernel
    before returning, which survives the death of this process; ``fsync`` also
    survives a kernel crash or power loss, at the price of a disk flush (often
    milliseconds) on every record.
    """

    def __init__(self, path: Path | None, *, fsync: bool = False) -> None:
        self.path = path
        self._fsync = fsync
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._closed = False
        self._failed: str | None = None
        self._seq, self._prev, self._size = 0, GENESIS, 0
        #: Why the next record into an empty file needs a link ("reopened" after reopen()).
        self._link_reason = "truncated"
        if path is None:
            return
        self._fd, self._size, (self._seq, self._prev) = _open_log(path)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    @property
    def last_hash(self) -> str:
        """Hash of the last record this writer knows of (``"0" * 64`` if none)."""
        return self._prev

    def reopen(self) -> None:
        """Open ``path`` again, for log rotation (the MCP server calls it on SIGHUP).

        Contract:

        * Thread-safe: serialised with :meth:`append` by the same lock, so a record
          goes wholly to the old file or wholly to the new one.
        * After a rename (``logrotate`` ``create``), records go to the new file at
          ``path``. If that file is empty (or absent: it is created, mode 0600),
          the next append first writes a ``link`` record continuing the chain
          (``seq`` + 1, ``prev`` = the last hash written to the old file); if it
          already holds records, their chain is continued, as at start-up.
        * On any failure (``path`` cannot be opened, is not a regular file, or ends
          in a damaged record) it raises :class:`~shellgate.errors.AuditError` and
          keeps writing to the file it had open: no call goes unaudited.
        * A no-op for a disabled log (``path=None``); raises on a closed log or a
          log whose earlier write failed (it stays unusable).
        * Never call it from a raw ``signal.signal`` handler: the handler may run
          in a thread that is inside :meth:`append`, holding the (non-reentrant)
          lock. Schedule it instead (``loop.add_signal_handler``, or a flag the
          main loop checks).
        """
        with self._lock:
            self._check_usable()
            if self.path is None:
                return
            self._catch_up()
            fd, size, (seq, prev) = _open_log(self.path)
            old, self._fd, self._size = self._fd, fd, size
            if size:
                self._seq, self._prev = seq, prev
            self._link_reason = "reopened"
            if old is not None:
                os.close(old)

    def _catch_up(self) -> None:
        """Learn the chain other writers extended in the file still open.

        The chain a new, empty file links to is the old file's, not only what
        this writer wrote: another process may have appended since.
        """
        fd = self._fd
        if fd is None:
            return
        assert self.path is not None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                size = os.fstat(fd).st_size
                if size not in (0, self._size):
                    self._seq, self._prev = _tail_state(fd, size, self.path)
                    self._size = size
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as exc:
            raise AuditError(f"{self.path}: cannot read audit log: {exc.strerror}") from exc

    def _check_usable(self) -> None:
        """Raise unless appends may go on (call with the lock held)."""
        if self._closed:
            raise AuditError(f"{self.path}: audit log is closed")
        if self._failed is not None:
            raise AuditError(
                f"{self.path}: audit log unusable after a failed write ({self._failed})"
            )

    def append(self, record: Mapping[str, object]) -> str:
        """Write ``record`` as the next line of the chain and return its hash.

        Adds ``seq``, ``time``, ``prev`` and ``hash`` (and, only when needed,
        ``escaped`` and ``cut``: text that is not valid Unicode is escaped and
        oversized strings are cut, see :mod:`shellgate.audit._fit`); the caller
        must not supply them. Refuses (``AuditError``) keys named
        ``env``/``environment`` at any depth, non-JSON values, a record that does
        not fit ``MAX_RECORD_BYTES`` even cut, a closed log and a log whose
        earlier write failed.
        """
        body = checked_body(record)
        with self._lock:
            self._check_usable()
            if self._fd is None:
                return self._chain(body)[1]  # disabled file: the chain lives in memory
            fd = self._fd
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                raise AuditError(f"{self.path}: cannot lock audit log: {exc.strerror}") from exc
            try:
                return self._append_locked(fd, body)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _chain(self, body: dict[str, object]) -> tuple[bytes, str]:
        line, digest = seal(body, self._seq + 1, self._prev)
        self._seq, self._prev = self._seq + 1, digest
        return line, digest

    def _append_locked(self, fd: int, body: dict[str, object]) -> str:
        assert self.path is not None
        try:
            size = os.fstat(fd).st_size
            if size not in (0, self._size):  # another writer appended: continue *its* chain
                self._seq, self._prev = _tail_state(fd, size, self.path)
                self._size = size
        except OSError as exc:
            raise AuditError(f"{self.path}: cannot read audit log: {exc.strerror}") from exc
        seq, prev, link = self._seq, self._prev, b""
        if size == 0 and seq > 0:
            # A new file after reopen(), or this one truncated under us (copytruncate):
            # continue the chain with a link record, never restart it silently.
            reason = "truncated" if self._size > 0 else self._link_reason
            link, prev = seal({"type": "link", "reason": reason}, seq + 1, prev)
            seq += 1
        record, digest = seal(body, seq + 1, prev)
        line = link + record
        try:
            view = memoryview(line)
            while view:  # a regular file takes it in one write; loop for the rare short one
                view = view[os.write(fd, view) :]
            if self._fsync:
                os.fsync(fd)
        except OSError as exc:
            self._failed = f"{exc.strerror}"
            raise AuditError(f"{self.path}: cannot write audit log: {exc.strerror}") from exc
        self._seq, self._prev, self._size = seq + 1, digest, size + len(line)
        return digest

    def close(self) -> None:
        """Close the file; later appends raise. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
