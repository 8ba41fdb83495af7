"""The workspace-root layer: a write of the workspace itself, or of a directory
holding it, asks — whatever the rules and the closing default say.

``write:**`` covers what lies *inside* the workspace, never the workspace root
(docs/policies.md), so such a write gets the closing default. Under a
``sandbox`` default that would be a sandboxed ``rm -rf /home/me/project`` or
``rm -rf ..``: the sandbox keeps the workspace writable, so it confines nothing
there, and the whole project would be gone. No pattern can name "the workspace"
(it differs per call), so this layer is where that write is decided: ``ask``,
with the path, as a decision of scope ``writes`` (it never decides the command).
Since the strictest answer wins, a ``deny`` from the baseline (``rm -rf /``,
``rm -rf ~``) still denies.
"""

from __future__ import annotations

import os

from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment

LAYER = "workspace-root"


def holds(path: str, workspace: str) -> bool:
    """Whether ``path`` is ``workspace`` or a directory above it (both absolute)."""
    root = workspace.rstrip("/")
    held = path.rstrip("/")
    return held == root or root.startswith(held + "/")


class WorkspaceRootLayer:
    """Ask for a write whose target (symlinks resolved) is the workspace or holds it."""

    name = LAYER

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        for write in segment.writes:
            physical = os.path.realpath(write.path)
            if holds(physical, call.workspace) or holds(write.path, call.workspace):
                what = "the workspace itself" if physical.rstrip("/") == call.workspace.rstrip(
                    "/") else "a directory holding the workspace"
                return Decision(
                    effect="ask",
                    reason=f"writes '{physical}' ({write.how}), {what}: no write: rule "
                    "covers it and a sandbox would not confine it (the workspace is "
                    "writable there)",
                    layer=LAYER,
                    scope="writes",
                )
        return None
