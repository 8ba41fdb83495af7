"""The one exception tree for host-facing failures.

Model-facing outcomes (a non-zero exit, a timeout, a policy denial) are *data*,
rendered by :mod:`shellgate.tools.render`; the exceptions here are for the host
program and the CLI::

    ShellgateError
    ├── ConfigError            bad config file, key or value (start-up)
    ├── PolicyError            a policy set that does not load (start-up, names file:line)
    ├── PluginError            a configured plugin that cannot be loaded (start-up)
    ├── ToolInputError         arguments that fail validation: "Error: <message>", nothing ran
    ├── ExecutionError         infrastructure failure: spawn failed, workdir unusable
    │   └── SandboxUnavailable the sandbox cannot start; the command never runs unconfined
    ├── TaskError              unknown or foreign task id, task limit reached
    ├── AuditError             the audit log cannot be written or verified
    └── StoreError             a database store (SQLite, PostgreSQL) cannot be reached or used
"""

from __future__ import annotations


class ShellgateError(Exception):
    """Base of every error shellgate raises on purpose.

    ``str(error)`` is one line naming what is at fault; ``hint``, when set, is one
    more line saying what to do about it (the CLI prints it as ``hint: …``).
    """

    hint: str | None = None


class ConfigError(ShellgateError):
    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class PolicyError(ShellgateError):
    pass


class PluginError(ShellgateError):
    pass


class ToolInputError(ShellgateError):
    pass


class ExecutionError(ShellgateError):
    pass


class SandboxUnavailable(ExecutionError):
    def __init__(self, reason: str) -> None:
        super().__init__(f"sandbox unavailable: {reason}")
        self.reason = reason


class TaskError(ShellgateError):
    pass


class AuditError(ShellgateError):
    pass


class StoreError(ShellgateError):
    pass
