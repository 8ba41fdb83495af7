"""docs/hooks.md documents every hook of hookspecs.py (and nothing that is not one)."""

from __future__ import annotations

import re
from pathlib import Path

from shellgate import hookspecs

DOC = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"


def _hookspec_names() -> set[str]:
    marker = f"{hookspecs.PROJECT}_spec"  # what pluggy's HookspecMarker sets
    return {name for name, obj in vars(hookspecs).items() if callable(obj) and hasattr(obj, marker)}


def test_there_are_hooks_to_document() -> None:
    assert {"shellgate_check", "shellgate_execute"} <= _hookspec_names()


def test_every_hookspec_has_its_own_section_in_docs_hooks() -> None:
    headings = set(re.findall(r"^## `(\w+)`$", DOC.read_text(encoding="utf-8"), flags=re.M))
    missing = _hookspec_names() - headings
    assert not missing, f"docs/hooks.md has no '## `name`' section for {sorted(missing)}"
    stale = {h for h in headings if h.startswith("shellgate_")} - _hookspec_names()
    assert not stale, f"docs/hooks.md documents hooks that do not exist: {sorted(stale)}"
