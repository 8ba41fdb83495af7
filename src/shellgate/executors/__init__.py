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


async def probe_sandbox(config: Config) -> str | None:
    """Why a call could not run sandboxed under ``config`` here, or ``None`` when it can.

    Runs the bwrap executor's own start-up probe (``true`` under the real profile,
    as the gate does before its first sandboxed call) and closes it again; for
    ``shellgate check``, which reports ``sandbox`` only where the call can be
    confined. ``config`` is the one the call would run under
    (:func:`shellgate.policy.confine.confined_config`).
    """
    from shellgate.executors.bwrap import BwrapExecutor

    executor = BwrapExecutor(config)
    try:
        await executor.open()
        return executor.unavailable_reason
    finally:
        await executor.aclose()


__all__ = [
    "ExecRequest",
    "Executor",
    "SpillStore",
    "TaskProcess",
    "make_executor",
    "probe_sandbox",
]
