"""shellgate: a policy gate between AI agents and the shell.

The public surface is small and typed; everything else is an implementation
detail. Nothing happens at import time: the gate, its plugins and its executors
are created explicitly.
"""

from shellgate.approval import (
    AllowApprover,
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
from shellgate.tools.schemas import schemas
from shellgate.tools.tasks import NoticeSink, Owner

__version__ = "0.1.0"

__all__ = [
    "AllowApprover",
    "ApprovalAnswer",
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
