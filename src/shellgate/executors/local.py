"""The local executor: plain ``bash -c`` in its own session, hardened in the argv.

With the ``sg-exec`` helper the session's leader is the call's supervisor
(``--subreaper``): every process the call starts stays below it and dies with it
when the gate dies, however the gate dies.
"""

from __future__ import annotations

import os

from shellgate.executors._spawn import SUPERVISOR_FD
from shellgate.executors.base import ExecSpec, Executor, SpawnPlan, shell_argv


class LocalExecutor(Executor):
    """Trusted hosts and laptops: no file confinement, every process rule of tools.md."""

    kind = "local"

    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        drop = self.config.executor.drop_capabilities and os.geteuid() == 0
        fast = self.hardening.enters_workdir
        supervised = self.hardening.supervises
        prefix = self.hardening.prefix(
            spec.limits,
            drop_caps=drop,
            workdir=str(spec.cwd) if fast else None,
            status_fd=SUPERVISOR_FD if supervised else None,
        )
        return SpawnPlan(
            argv=[*prefix, *shell_argv(spec)], enters_workdir=fast, supervised=supervised
        )
