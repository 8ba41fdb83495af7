"""The only package that spawns processes.

``base`` holds the seam (``Executor`` and its ``@final`` invariants), ``local`` and
``bwrap`` the implementations, ``_process`` and ``_output`` the shared machinery.
"""

from __future__ import annotations

from shellgate.config import Config
from shellgate.executors._output import SpillStore
from shellgate.executors.base import ExecRequest, Executor, TaskProcess


def make_executor(
    config: Config, kind: str | None = None, *, spill: SpillStore | None = None
) -> Executor:
    """The executor for ``kind`` (default: the configured one)."""
    chosen = kind or config.executor.kind
    if chosen == "local":
        from shellgate.executors.local import LocalExecutor

        return LocalExecutor(config, spill=spill)
    if chosen == "bwrap":
        from shellgate.executors.bwrap import BwrapExecutor

        return BwrapExecutor(config, spill=spill)
    raise ValueError(f"unknown executor kind: {chosen}")


__all__ = ["ExecRequest", "Executor", "SpillStore", "TaskProcess", "make_executor"]
