"""The MCP door's old flat module paths still import: they warn, and give the new modules."""

from __future__ import annotations

import importlib
import sys

import pytest

import shellgate

MOVED = [
    ("shellgate.mcp_server", "shellgate.mcp.server", ["ShellgateMCP", "MCPHandlers", "DECLINED"]),
    ("shellgate.mcp_ask", "shellgate.mcp.ask", ["ModernAsk", "APPROVAL_INPUT", "CANCELLED"]),
    ("shellgate.mcp_wire", "shellgate.mcp.wire", ["Refused", "read_line", "MAX_LINE_BYTES"]),
    ("shellgate.mcp_http", "shellgate.mcp.http", ["ShellgateHTTP", "parse_address"]),
    ("shellgate.mcp_tokens", "shellgate.mcp.tokens", ["FileTokenVerifier", "load_tokens"]),
]


@pytest.mark.parametrize(("old", "new", "names"), MOVED)
def test_the_old_path_warns_and_gives_the_same_objects(
    monkeypatch: pytest.MonkeyPatch, old: str, new: str, names: list[str]
) -> None:
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(shellgate, old.rsplit(".", 1)[1], raising=False)
    with pytest.warns(DeprecationWarning, match=rf"^{old} is deprecated: import {new} instead$") as seen:
        __import__(old)  # an import statement's call, so the warning's frame is this one
    module = sys.modules[old]
    assert [w.filename for w in seen] == [__file__]  # the warning points at the importer
    current = importlib.import_module(new)
    assert module is current
    for name in names:
        assert getattr(module, name) is getattr(current, name)


def test_from_import_of_an_old_name_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "shellgate.mcp_server", raising=False)
    monkeypatch.delattr(shellgate, "mcp_server", raising=False)
    with pytest.warns(DeprecationWarning, match=r"import shellgate\.mcp\.server instead"):
        from shellgate.mcp_server import ShellgateMCP
    from shellgate.mcp.server import ShellgateMCP as current

    assert ShellgateMCP is current


def test_the_package_does_not_shadow_the_sdk() -> None:
    import mcp.server.lowlevel

    import shellgate.mcp

    assert mcp.__name__ == "mcp"
    assert shellgate.mcp.__name__ == "shellgate.mcp"
    assert not mcp.__file__ or "shellgate" not in mcp.__file__.split("/")[-2:]
    assert mcp.server.lowlevel.Server.__module__.startswith("mcp.")
