"""The local executor: plain ``bash -c`` in its own session, hardened in the argv.

With the ``sg-exec`` helper the session's leader is the call's supervisor
(``--subreaper``): every process the call starts stays below it and dies with it
when the gate dies, however the gate dies. That supervisor is started ahead of
its call where the helper can wait for one (``--request``, see ``_spare``):
after each call, for the next.
"""

from __future__ import annotations

import os

from shellgate.config import Limits
from shellgate.executors._spawn import SUPERVISOR_FD
from shellgate.executors.base import ExecSpec, Executor, SpawnPlan, shell_argv


class LocalExecutor(Executor):
    """Trusted hosts and laptops: no file confinement, every process rule of tools.md."""

    kind = "local"

    def _drop_caps(self) -> bool:
        return self.config.executor.drop_capabilities and os.geteuid() == 0

    def _spare_argv(self, limits: Limits, drop_caps: bool) -> tuple[str, ...] | None:
        if not self.hardening.spares:
            return None
        return tuple(self.hardening.spare_argv(limits, drop_caps=drop_caps))

    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        fast = self.hardening.enters_workdir
        supervised = self.hardening.supervises
        drop = self._drop_caps()
        prefix = self.hardening.prefix(
            spec.limits,
            drop_caps=drop,
            workdir=str(spec.cwd) if fast else None,
            status_fd=SUPERVISOR_FD if supervised else None,
        )
        command = shell_argv(spec)
        return SpawnPlan(
            argv=[*prefix, *command],
            enters_workdir=fast,
            supervised=supervised,
            spare=self._spare_argv(spec.limits, drop),
            command=tuple(command),
        )
