"""``shellgate policy import``: other agents' permission rules as a shellgate policy set.

One module per source format, each a ``read(file, text) -> Imported`` that only
reads (:mod:`.claude`, :mod:`.codex`, :mod:`.gemini`), and one writer
(:mod:`.writer`) that turns the result into ``model.conf``, ``policy.csv`` and a
``tests.csv`` that ``shellgate policy test`` passes. Shared types and the writing
principle (an allow is never written broader than its source) are in
:mod:`.common`; the user documentation is ``docs/import.md``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from shellgate.policy.importers.common import Imported, SourceError

#: ``--from`` value → module name. Each module is imported only when used.
SOURCES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
MAX_SOURCE_BYTES = 16 * 1024**2  # bytes; a bound, not a target


def read_source(source: str, file: Path) -> Imported:
    """Read ``file`` as ``source``; raises :class:`SourceError` for unreadable or bad input."""
    if source not in SOURCES:
        raise SourceError(f"unknown source {source!r} (expected {', '.join(SOURCES)})")
    try:
        if file.stat().st_size > MAX_SOURCE_BYTES:
            raise SourceError(f"larger than {MAX_SOURCE_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SourceError(f"cannot read: {detail}") from None
    module = importlib.import_module(f"shellgate.policy.importers.{SOURCES[source]}")
    imported: Imported = module.read(file, text)
    return imported


__all__ = ["SOURCES", "Imported", "SourceError", "read_source"]
