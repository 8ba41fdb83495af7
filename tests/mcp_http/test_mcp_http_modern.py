"""The modern ask over HTTP: ``input_required`` per principal, the token's subject on the record."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.mcp.mcp_helpers import ScriptedUser, answer, touch
from tests.mcp_http.http_helpers import ALICE, BOB, HttpServer, audit_records, text_of, write_setup


@asynccontextmanager
async def connect_modern(
    url: str, token: str, *, elicitation: ElicitationFnT | None = None
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode="auto",
            elicitation_callback=elicitation,
        ) as client,
    ):
        yield client


async def test_modern_ask_over_http_is_per_principal(tmp_path: Path) -> None:
    with HttpServer(write_setup(tmp_path)) as server:
        async with connect_modern(server.url, ALICE, elicitation=ScriptedUser("accept")) as alice:
            assert alice.protocol_version == "2026-07-28"
            ran = await alice.call_tool("bash", touch("a.txt"))
            first = await alice.session.call_tool(
                "bash", touch("b.txt"), allow_input_required=True
            )
        assert (text_of(ran), ran.is_error) == ("(no output)", False)
        assert isinstance(first, types.InputRequiredResult)
        async with connect_modern(server.url, BOB, elicitation=ScriptedUser()) as bob:
            stolen = await answer(bob, touch("b.txt"), first)
    assert isinstance(stolen, types.CallToolResult)
    assert stolen.is_error
    assert "was issued to another principal or session" in text_of(stolen)
    assert (tmp_path / "ws" / "a.txt").exists()
    assert not (tmp_path / "ws" / "b.txt").exists()
    approvals = [
        (r["answer"], r["approver"]) for r in audit_records(tmp_path) if r.get("type") == "approval"
    ]
    assert approvals == [("allow_once", "mcp-user:alice"), ("deny", "shellgate")]
