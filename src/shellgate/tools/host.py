"""What a call's steps need from the gate that runs them.

:class:`~shellgate.gate.Gate` owns a deployment and drives each call; the steps
it hands the call to (:mod:`shellgate.tools.bash`, :mod:`shellgate.tools.resume`) see
it only through :class:`GateHost`, so they sit below the gate instead of importing
it back.
"""

from __future__ import annotations

from typing import Protocol

from shellgate.approval import Approver, SessionGrants
from shellgate.approval.sealed import ApprovalSeal
from shellgate.audit import AuditSink
from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.executors import Executor
from shellgate.models import CallInfo, ExecutorKind
from shellgate.tools.result import ToolResult
from shellgate.tools.tasks import Owner, TaskRegistry


class GateHost(Protocol):
    """The gate as a call's steps use it (attributes and methods of ``Gate``)."""

    config: Config
    env: dict[str, str]
    decider: Decider
    approver: Approver
    tasks: TaskRegistry
    audit: AuditSink
    grants: SessionGrants
    seal: ApprovalSeal
    executor: Executor

    @property
    def opened(self) -> bool: ...

    @property
    def closing(self) -> bool: ...

    @property
    def sandboxed(self) -> bool: ...

    async def open(self) -> None: ...

    async def executor_for(self, kind: ExecutorKind) -> Executor: ...

    async def confined_executor(self) -> Executor: ...

    async def sandbox_unavailable(self) -> str | None: ...

    def call_info(
        self, owner: Owner, command: str, description: str, workdir: str
    ) -> CallInfo: ...

    def _refused(self, tool: str, owner: Owner, arguments: object, error: str) -> ToolResult: ...


