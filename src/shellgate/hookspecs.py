"""Every hook shellgate calls, documented here and only here.

Built-in behaviour is implemented as ordinary plugins of these same hooks
(``shellgate.policy.builtin``, ``shellgate.policy.casbin_layer``…), so a third-party
layer has exactly the powers of a built-in one. Implementations take keyword
arguments and may declare only the ones they use, so these specs can grow.

Evaluation order (see ``docs/hooks.md``): built-in layers in their documented
order (input guard, command analysis, protected paths, …, casbin rules), then
configured plugins in config order, then the closing default. Order only decides
who may stop the waterfall early and what the audit log shows first: the reducer
takes the strictest answer, so no order can let an allow beat a deny or an ask.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pluggy

from shellgate.models import CallInfo, Decision, RunResult, Segment

PROJECT = "shellgate"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def shellgate_check(call: CallInfo, segment: Segment) -> Decision | None:
    """Decide one simple command of a ``bash`` call, or abstain with ``None``.

    Called once per analysed segment, for every layer in order. Return a
    :class:`~shellgate.models.Decision` with effect ``deny`` (a veto: nothing below
    runs for this call), ``ask``, ``sandbox`` (run unasked, but confined; an ask
    where it cannot be) or ``allow``, a reason the model can read, your layer's
    name and, for rule-based layers, the rule. Set ``require_sandbox`` to force the
    bwrap executor for the call.

    Raising, taking longer than the configured plugin timeout, or returning
    anything that is not a ``Decision`` or ``None`` counts as ``deny`` with a
    reason that names the plugin (fail closed). A plugin's checks run on a worker
    thread and the timeout is enforced while they run: a check still running at
    its deadline is abandoned (see :mod:`shellgate.policy.deadline`). Declare it a
    plain ``@hookimpl``; a wrapper is refused at start-up.
    """


@hookspec
def shellgate_execute(  # type: ignore[empty-body]
    call: CallInfo, plan: dict[str, Any]
) -> Generator[None, RunResult, RunResult]:
    """Around-wrapper of the execution of an approved call (``wrapper=True`` only).

    Declare it ``@hookimpl(wrapper=True)``: a plain ``@hookimpl`` or pluggy's
    old-style ``hookwrapper=True`` is refused at start-up (``PluginError``).
    ``plan`` is a mutable dict with ``executor`` (``"local"`` | ``"bwrap"``) and
    ``sandbox_mode``; a wrapper may make it *stricter* before ``yield`` (a wider
    mode or a weaker executor is refused and the call fails closed). The value of
    ``yield`` is the :class:`~shellgate.models.RunResult` (or it raises the
    execution error); return it (or raise) to pass it on. Failing before ``yield``
    stops the call before anything runs; failing after it makes the call a tool
    error naming the wrapper, with the run still on the audit record. Audit and
    metrics live here.
    """
