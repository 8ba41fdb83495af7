"""The local executor: plain ``bash -c`` in its own session, hardened in the argv."""

from __future__ import annotations

import os

from shellgate.executors.base import ExecSpec, Executor, SpawnPlan, shell_argv


class LocalExecutor(Executor):
    """Trusted hosts and laptops: no file confinement, every process rule of tools.md."""

    kind = "local"

    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        drop = self.config.executor.drop_capabilities and os.geteuid() == 0
        fast = self.hardening.enters_workdir
        prefix = self.hardening.prefix(
            spec.limits, drop_caps=drop, workdir=str(spec.cwd) if fast else None
        )
        return SpawnPlan(argv=[*prefix, *shell_argv(spec)], enters_workdir=fast)
