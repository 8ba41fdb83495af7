"""shellgate: a policy gate between AI agents and the shell.

The public surface is small and typed; everything else is an implementation
detail. Nothing happens at import time: names are resolved on first use
(PEP 562), so ``shellgate check`` does not pay for the gate, the MCP SDK or the
approvers, and the gate, its plugins and its executors are created explicitly.
"""

import importlib as _importlib
import typing as _typing

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AllowApprover": "shellgate.approval",
    "Approval": "shellgate.approval",
    "ApprovalAnswer": "shellgate.models",
    "ApprovalRefused": "shellgate.approval",
    "ApprovalRequest": "shellgate.models",
    "Approver": "shellgate.approval",
    "AuditError": "shellgate.errors",
    "AuditLog": "shellgate.audit",
    "CallInfo": "shellgate.models",
    "CallbackApprover": "shellgate.approval",
    "Config": "shellgate.config",
    "ConfigError": "shellgate.errors",
    "Decision": "shellgate.models",
    "DenyApprover": "shellgate.approval",
    "ExecutionError": "shellgate.errors",
    "Gate": "shellgate.gate",
    "GateDecision": "shellgate.tools.resume",
    "NoticeSink": "shellgate.tools.tasks",
    "Owner": "shellgate.tools.tasks",
    "PluginError": "shellgate.errors",
    "PolicyError": "shellgate.errors",
    "PromptApprover": "shellgate.approval",
    "RunResult": "shellgate.models",
    "SandboxUnavailable": "shellgate.errors",
    "Segment": "shellgate.models",
    "ShellgateError": "shellgate.errors",
    "SyncGate": "shellgate.gate",
    "TaskError": "shellgate.errors",
    "ToolInputError": "shellgate.errors",
    "ToolResult": "shellgate.gate",
    "Verdict": "shellgate.models",
    "hookimpl": "shellgate.hookspecs",
    "load_config": "shellgate.config",
    "schemas": "shellgate.tools.schemas",
}

__all__ = [
    "AllowApprover",
    "Approval",
    "ApprovalAnswer",
    "ApprovalRefused",
    "ApprovalRequest",
    "Approver",
    "AuditError",
    "AuditLog",
    "CallInfo",
    "CallbackApprover",
    "Config",
    "ConfigError",
    "Decision",
    "DenyApprover",
    "ExecutionError",
    "Gate",
    "GateDecision",
    "NoticeSink",
    "Owner",
    "PluginError",
    "PolicyError",
    "PromptApprover",
    "RunResult",
    "SandboxUnavailable",
    "Segment",
    "ShellgateError",
    "SyncGate",
    "TaskError",
    "ToolInputError",
    "ToolResult",
    "Verdict",
    "__version__",
    "hookimpl",
    "load_config",
    "schemas",
]


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'shellgate' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _typing.TYPE_CHECKING:
    from shellgate.approval import (
        AllowApprover,
        Approval,
        ApprovalRefused,
        Approver,
        CallbackApprover,
        DenyApprover,
        PromptApprover,
    )
    from shellgate.audit import AuditLog
    from shellgate.config import Config, load_config
    from shellgate.errors import (
        AuditError,
        ConfigError,
        ExecutionError,
        PluginError,
        PolicyError,
        SandboxUnavailable,
        ShellgateError,
        TaskError,
        ToolInputError,
    )
    from shellgate.gate import Gate, SyncGate, ToolResult
    from shellgate.hookspecs import hookimpl
    from shellgate.models import (
        ApprovalAnswer,
        ApprovalRequest,
        CallInfo,
        Decision,
        RunResult,
        Segment,
        Verdict,
    )
    from shellgate.tools.resume import GateDecision
    from shellgate.tools.schemas import schemas
    from shellgate.tools.tasks import NoticeSink, Owner
