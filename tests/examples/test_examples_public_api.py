"""The examples use only shellgate's public names, and every public name resolves."""

from __future__ import annotations

import ast

import pytest

import shellgate
from tests.examples.examples_helpers import EXAMPLES

PUBLIC_MODULES = {"shellgate"}


def _imports() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(EXAMPLES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shellgate"):
                found += [(path.name, node.module or "", alias.name) for alias in node.names]
    return found


def test_examples_import_only_from_documented_modules() -> None:
    imports = _imports()
    assert imports, "no example imports shellgate?"
    private = [(f, m, n) for f, m, n in imports if m not in PUBLIC_MODULES]
    assert not private, f"examples reach into internals: {private}"
    top = [n for _f, m, n in imports if m == "shellgate"]
    assert set(top) <= set(shellgate.__all__)


@pytest.mark.parametrize("name", shellgate.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(shellgate, name) is not None
