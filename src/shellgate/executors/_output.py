"""Output collection: per-stream tail-keep in memory, spill to disk on overflow.

Invariants:

* At most ``max_bytes`` of a stream are held in memory: the *last* ones.
* A spill file exists only once a stream overflowed; it then holds the whole
  stream from byte 0 (what was buffered is written first), is created 0600 inside
  the store's private 0700 directory under an unguessable name, and is deleted —
  for good — once the stream passes ``max_spill_bytes`` (the notice then says
  ``(unavailable)``).
* Reads are offset-based and do not consume, so a foreground result and a
  background ``bash_output`` delta come from the same collector.
* Text cuts never split a UTF-8 character: leading continuation bytes of a kept
  tail are dropped; a trailing partial character is held back while the stream is
  still open; anything else undecodable becomes U+FFFD.
"""

from __future__ import annotations

import collections
import contextlib
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from shellgate.models import OutputView


class SpillStore:
    """A private directory for one gate's spill files, with a size budget.

    ``budget_bytes`` bounds all live spill files of the gate together: a stream
    that would push the total past it is discarded (``(unavailable)``), so a
    long-lived server cannot fill the disk.
    """

    def __init__(self, budget_bytes: int, parent: str | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="shellgate-spill-", dir=parent))
        os.chmod(self.path, 0o700)
        self.budget_bytes = budget_bytes
        self._used = 0
        self._closed = False

    def create(self, stream: str) -> tuple[int, Path]:
        name = f"{stream}-{secrets.token_hex(16)}.log"
        path = self.path / name
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
        )
        return fd, path

    def reserve(self, nbytes: int) -> bool:
        if self._closed or self._used + nbytes > self.budget_bytes:
            return False
        self._used += nbytes
        return True

    def release(self, nbytes: int) -> None:
        self._used = max(0, self._used - nbytes)

    def close(self, *, keep_files: bool = False) -> None:
        """Remove every spill file (the gate is closing).

        ``keep_files``: leave spill files for a user who was shown their paths
        (``shellgate run``); the directory still goes when nothing spilled.
        """
        self._closed = True
        if not keep_files:
            shutil.rmtree(self.path, ignore_errors=True)
            return
        with contextlib.suppress(OSError):  # not empty: the user's files stay
            os.rmdir(self.path)


@dataclass(frozen=True)
class Chunk:
    """Bytes read from ``start``; ``lost`` tells that bytes before it were dropped."""

    data: bytes
    start: int
    end: int
    lost: bool


class StreamBuffer:
    """One stream's collector (stdout or stderr) of one command."""

    def __init__(self, name: str, max_bytes: int, max_spill_bytes: int, store: SpillStore) -> None:
        self.name = name
        self.max_bytes = max_bytes
        self.max_spill_bytes = max_spill_bytes
        self._store = store
        self._chunks: collections.deque[bytes] = collections.deque()
        self._kept = 0  # bytes in _chunks
        self.total = 0  # bytes seen so far
        self._spill_fd: int | None = None
        self.spill_path: Path | None = None
        self.spill_discarded = False
        self.closed = False

    @property
    def truncated(self) -> bool:
        return self.total > self.max_bytes

    @property
    def kept_from(self) -> int:
        """Stream offset of the first byte still in memory."""
        return self.total - self._kept

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self.total + len(data) > self.max_bytes and not self.spill_discarded:
            self._spill(data)
        self.total += len(data)
        # The tail lives as a list of chunks: appending is O(1) and trimming drops
        # whole chunks, so a 1 GiB stream costs no 64 kB memmove per read.
        chunks = self._chunks
        if len(data) >= self.max_bytes:
            chunks.clear()
            chunks.append(data[-self.max_bytes :])
            self._kept = self.max_bytes
            return
        chunks.append(data)
        self._kept += len(data)
        excess = self._kept - self.max_bytes
        while excess > 0:
            first = chunks[0]
            if len(first) <= excess:
                chunks.popleft()
                self._kept -= len(first)
                excess -= len(first)
            else:
                chunks[0] = first[excess:]
                self._kept -= excess
                excess = 0

    def _spill(self, data: bytes) -> None:
        if self._spill_fd is None:
            if self.total != self._kept:  # pragma: no cover - invariant
                raise AssertionError("spill must start while the whole stream is buffered")
            first = b"".join(self._chunks)
            if len(first) + len(data) > self.max_spill_bytes or not self._store.reserve(
                len(first) + len(data)
            ):
                self._discard()
                return
            try:
                self._spill_fd, self.spill_path = self._store.create(self.name)
            except OSError:
                self._store.release(len(first) + len(data))
                self._discard()
                return
            self._write(first)
            self._write(data)
            return
        if self.total + len(data) > self.max_spill_bytes or not self._store.reserve(len(data)):
            self._discard()
            return
        self._write(data)

    def _write(self, data: bytes) -> None:
        assert self._spill_fd is not None
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._spill_fd, view)
                view = view[written:]
        except OSError:
            self._discard()

    def _discard(self) -> None:
        """Past the cap (or on a disk error) the spill file goes away for good."""
        self.spill_discarded = True
        if self._spill_fd is not None:
            os.close(self._spill_fd)
            self._spill_fd = None
        if self.spill_path is not None:
            try:
                size = self.spill_path.stat().st_size
                self.spill_path.unlink()
                self._store.release(size)
            except OSError:
                pass
            self.spill_path = None

    def close(self) -> None:
        self.closed = True
        if self._spill_fd is not None:
            os.close(self._spill_fd)
            self._spill_fd = None

    def read_from(self, offset: int) -> Chunk:
        """Everything from ``offset`` that is still in memory (non-consuming)."""
        kept_from = self.kept_from
        lost = offset < kept_from
        start = max(offset, kept_from)
        data = b"".join(self._chunks)[start - kept_from :]
        return Chunk(data=data, start=start, end=self.total, lost=lost)

    def view(self) -> OutputView:
        chunk = self.read_from(0)
        return OutputView.model_construct(  # values built here, types checked by mypy
            text=decode_tail(chunk.data, cut=chunk.lost, final=True),
            truncated=self.truncated,
            spill_path=str(self.spill_path) if self.spill_path is not None else None,
            total_bytes=self.total,
        )


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def decode_tail(data: bytes, *, cut: bool, final: bool) -> str:
    """Decode a kept tail: drop leading continuation bytes if the start was cut."""
    if cut:
        skip = 0
        while skip < min(len(data), 3) and _is_continuation(data[skip]):
            skip += 1
        data = data[skip:]
    if not final:
        data = data[: complete_prefix(data)]
    return data.decode("utf-8", errors="replace")


def complete_prefix(data: bytes) -> int:
    """Length of ``data`` without a trailing, still incomplete UTF-8 character."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if not _is_continuation(byte):
            if byte >= 0xF0:
                need = 4
            elif byte >= 0xE0:
                need = 3
            elif byte >= 0xC0:
                need = 2
            else:
                need = 1
            return n - back if need > back else n
    return n
