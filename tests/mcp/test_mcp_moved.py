"""The MCP door's old flat module paths (the table is tests/core/test_moved_modules.py):
the warning points at the importing line, the old path is the new module, and the
package never shadows the mcp SDK."""

from __future__ import annotations

import sys

import pytest

import shellgate

OLD = ["shellgate.mcp_server", "shellgate.mcp_ask", "shellgate.mcp_wire", "shellgate.mcp_http",
       "shellgate.mcp_tokens"]  # fmt: skip


@pytest.mark.parametrize("old", OLD)
def test_the_warning_points_at_the_importer_and_the_module_is_the_new_one(
    monkeypatch: pytest.MonkeyPatch, old: str
) -> None:
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(shellgate, old.rsplit(".", 1)[1], raising=False)
    new = "shellgate.mcp." + old.rsplit("_", 1)[1]
    with pytest.warns(DeprecationWarning, match=rf"^{old} is deprecated: import from {new}$") as seen:
        __import__(old)  # an import statement's call: the importing frame is this one
    assert [w.filename for w in seen] == [__file__]
    assert sys.modules[old] is sys.modules[new]  # a patch through the old path lands


def test_from_import_of_an_old_name_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "shellgate.mcp_server", raising=False)
    monkeypatch.delattr(shellgate, "mcp_server", raising=False)
    with pytest.warns(DeprecationWarning, match=r"import from shellgate\.mcp\.server$"):
        from shellgate.mcp_server import ShellgateMCP
    from shellgate.mcp.server import ShellgateMCP as current

    assert ShellgateMCP is current


def test_the_package_does_not_shadow_the_sdk() -> None:
    import mcp.server.lowlevel

    import shellgate.mcp

    assert mcp.__name__ == "mcp"
    assert shellgate.mcp.__name__ == "shellgate.mcp"
    assert mcp.__file__ is not None
    assert "shellgate" not in mcp.__file__.split("/")[-2:]
    assert mcp.server.lowlevel.Server.__module__.startswith("mcp.")
