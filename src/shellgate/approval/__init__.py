"""Approvals: who says yes to an ``ask``, and what a yes may cover.

The seam is one async callable, :class:`Approver`. The gate asks only through
:func:`ask_with_timeout`, which fails closed (timeout, crash, junk or an
unoffered session grant all mean ``deny``). Built-ins:

* :class:`DenyApprover` — headless default: nobody to ask means no;
* :class:`PromptApprover` — an interactive terminal;
* :class:`CallbackApprover` — a function from the Python API;
* :class:`AllowApprover` — tests only; warns on every use;
* :class:`~shellgate.approval.queue.QueueApprover` — a shared queue in a database
  that people answer with ``shellgate approvals`` or the web console.

An answer given out of band (a framework that pauses a run and resumes it) is an
:class:`Approval`, sealed and bound to one call by :class:`ApprovalSeal` (:mod:`.sealed`).

Allow-for-session is offered only where the deployment permits it
(:func:`session_scope` with ``permitted=config.approval.allow_session``) and
covers exact simple commands, never interpreters or wrappers (:mod:`.scope`).
"""

from __future__ import annotations

import logging
from typing import IO

from shellgate.approval.base import (
    AllowApprover,
    Approver,
    CallbackApprover,
    DenyApprover,
    approver_name,
    ask_with_timeout,
)
from shellgate.approval.prompt import PromptApprover
from shellgate.approval.question import approval_question, segment_shown
from shellgate.approval.scope import (
    INTERPRETERS_AND_WRAPPERS,
    SessionGrants,
    runs_other_code,
    segment_key,
    session_scope,
)
from shellgate.approval.sealed import Approval, ApprovalRefused, ApprovalSeal, arguments_digest
from shellgate.config import ApprovalConfig

__all__ = [
    "INTERPRETERS_AND_WRAPPERS",
    "AllowApprover",
    "Approval",
    "ApprovalRefused",
    "ApprovalSeal",
    "Approver",
    "CallbackApprover",
    "DenyApprover",
    "PromptApprover",
    "SessionGrants",
    "approval_question",
    "approver_name",
    "arguments_digest",
    "ask_with_timeout",
    "make_approver",
    "runs_other_code",
    "segment_key",
    "segment_shown",
    "session_scope",
]

logger = logging.getLogger("shellgate.approval")


def make_approver(
    config: ApprovalConfig, *, stdin: IO[str] | None = None, stdout: IO[str] | None = None
) -> Approver:
    """The approver ``[approval] mode`` names.

    ``stdin``/``stdout`` are the prompt's streams (defaults: ``sys.stdin``, and
    ``sys.stderr`` for output so the command's stdout stays clean). Whether an
    allow-for-session may be offered is not the approver's call: the gate passes
    ``config.allow_session`` to :func:`session_scope`, and :func:`ask_with_timeout`
    denies a session answer that was not offered.
    """
    if config.mode == "deny":
        return DenyApprover()
    if config.mode == "prompt":
        return PromptApprover(stdin, stdout)
    if config.mode == "allow":
        logger.warning(
            "approval mode 'allow' approves every ask without asking anyone; it exists "
            "for tests only"
        )
        return AllowApprover()
    if config.mode == "queue":
        from shellgate.approval.queue import QueueApprover

        assert config.store is not None  # ApprovalConfig refuses queue without a store
        return QueueApprover(config.store, timeout_ms=config.timeout_ms)
    raise ValueError(f"unknown approval mode {config.mode!r}")  # pragma: no cover - Literal
