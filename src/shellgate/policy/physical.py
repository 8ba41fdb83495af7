"""Physical paths (symlinks resolved), read once per decision.

Several built-in layers resolve the same path in one decision (the protected
paths, the secrets, the ``write:`` rules each see a segment's writes); every
``os.path.realpath`` is a walk of ``lstat`` calls. :func:`realpath` answers
from a cache that lives for one decision only (:func:`one_decision`, which the
decider opens around its layers): the file system may change between two
calls, never within the microseconds of one decision's reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_memo: ContextVar[dict[str, str] | None] = ContextVar("shellgate_realpath_memo", default=None)
_MAX_MEMO = 4096  # paths one decision resolves at most before resolving afresh


def realpath(path: str) -> str:
    """``os.path.realpath(path)``, remembered for the rest of this decision."""
    memo = _memo.get()
    if memo is None:
        return os.path.realpath(path)
    found = memo.get(path)
    if found is None:
        found = os.path.realpath(path)
        if len(memo) < _MAX_MEMO:
            memo[path] = found
    return found


@contextmanager
def one_decision() -> Iterator[None]:
    """Remember resolved paths until the block ends (nested blocks share one memo)."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)
