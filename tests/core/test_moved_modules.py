"""Modules that moved keep their old import paths, with a DeprecationWarning naming
where they went (docs/architecture.md)."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("shellgate.resume", "shellgate.tools.resume",
         ("GateDecision", "approve", "decide", "handoff", "sandbox_refusal")),
    ],
)
def test_an_old_path_warns_and_gives_the_same_objects(
    old: str, new: str, names: tuple[str, ...]
) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: import from {new}"):
        module = importlib.import_module(old)
    moved = importlib.import_module(new)
    for name in names:
        assert getattr(module, name) is getattr(moved, name)


def test_tool_result_keeps_its_public_home() -> None:
    import shellgate
    from shellgate.gate import ToolResult
    from shellgate.tools.result import ToolResult as moved

    assert ToolResult is moved is shellgate.ToolResult
