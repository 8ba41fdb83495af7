"""``shellgate demo``: a scripted agent session against the example policies.

It builds a throw-away workspace, copies the ``default`` policy set into it and
drives real gates (local, then bwrap when it works here) through the moments a
newcomer should see: allowed, asked and approved, asked and refused, denied by a
named rule, a background task with its notice, a sandboxed write refused, and
the audit log verified. No network; a few seconds.

The exit status means something: :func:`run_demo` returns 1 when any step did
not behave as expected (each step asserts its expectation), 0 otherwise.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.console import Console

from shellgate.demo.script import ScriptedApprover, run_script
from shellgate.demo.view import Check, View
from shellgate.demo.workspace import DemoWorld, find_policy_set

__all__ = ["Check", "DemoWorld", "ScriptedApprover", "find_policy_set", "run_demo"]


def run_demo(
    console: Console | None = None, *, policy: Path | None = None, keep: bool = False
) -> int:
    """Run the demo; return its exit status (0 when every step behaved as expected).

    ``policy`` replaces the shipped ``default`` set (the steps still expect the
    default set's answers, so another set shows where it differs); ``keep``
    leaves the workspace and audit log on disk and prints where.
    """
    console = console or Console(highlight=False)
    source = policy if policy is not None else find_policy_set()
    if policy is not None:
        # Load it where the user keeps it: an error then names their file, not
        # the demo's throw-away copy of it.
        from shellgate.policy.loader import load_policy_set

        load_policy_set(policy)
    world = DemoWorld.create(source)
    view = View(console)
    started = time.monotonic()
    try:
        view.intro(str(source), str(world.workspace))
        checks = asyncio.run(run_script(world, view))
        view.summary(checks, time.monotonic() - started)
    finally:
        if keep:
            console.print(f"kept: {world.root}", highlight=False, markup=False)
        else:
            world.remove()
    return 1 if any(c.passed is False for c in checks) else 0
