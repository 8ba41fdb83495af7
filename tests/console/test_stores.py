"""The store-backed pages over SQLite and PostgreSQL: the audit table with its chain
status, the policy store's versions and sets, and the playground deciding with the
store's sets exactly as ``shellgate check`` does."""

from __future__ import annotations

import html
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from shellgate.config import AuditConfig
from shellgate.store import policies as store_policies
from shellgate.store.db import Database
from tests.console.console_helpers import ConsoleProcess, csrf_of, login, write_setup
from tests.mcp.mcp_helpers import server_env


@pytest.fixture
def alice_on() -> Iterator[Callable[[Path], httpx.Client]]:
    """A factory: a console on ``setup``, and a logged-in client."""
    servers: list[ConsoleProcess] = []
    clients: list[httpx.Client] = []

    def start(setup: Path) -> httpx.Client:
        server = ConsoleProcess(setup)
        servers.append(server)
        client = server.client()
        clients.append(client)
        assert login(client).status_code == 303
        return client

    try:
        yield start
    finally:
        for client in clients:
            client.close()
        for server in servers:
            server.close()


def test_the_audit_page_reads_the_store(
    tmp_path: Path, store_url: str, alice_on: Callable[[Path], httpx.Client]
) -> None:
    from shellgate.audit import open_audit

    log = open_audit(AuditConfig(store=store_url, log="fleet"))
    try:
        log.append(
            {
                "type": "decision",
                "call_id": "s1",
                "subject": "agent",
                "command": "echo one",
                "decision": "allow",
            }
        )
        log.append(
            {
                "type": "decision",
                "call_id": "s2",
                "subject": "ci",
                "command": "rm -rf /",
                "decision": "deny",
            }
        )
    finally:
        log.close()
    setup = write_setup(tmp_path, audit=f'store = "{store_url}"\nlog = "fleet"')
    alice = alice_on(setup)
    page = alice.get("/audit")
    assert page.status_code == 200
    assert "intact: 2 records" in page.text
    assert "log &#39;fleet&#39;" in page.text
    rows = page.text.split("<tbody>")[1]
    assert rows.index("rm -rf /") < rows.index("echo one")
    only = alice.get("/audit", params={"subject": "ci"}).text.split("<tbody>")[1]
    assert "rm -rf /" in only
    assert "echo one" not in only


def test_the_policies_page_and_playground_read_the_store(
    tmp_path: Path, store_url: str, alice_on: Callable[[Path], httpx.Client]
) -> None:
    setup = write_setup(tmp_path)
    with Database(store_url) as db:
        store = store_policies.PolicyStore(db)
        first = store.push("team", tmp_path / "team", author="alice", reason="first rules")
        (tmp_path / "team" / "policy.csv").write_text(
            (tmp_path / "team" / "policy.csv").read_text() + "p, agent, *, make *, allow, builds\n"
        )
        second = store.push("team", tmp_path / "team", author="bob", reason="builds are fine")
    assert second == first + 1
    text = setup.read_text().replace('paths = ["team"]', f'store = "{store_url}"')
    setup.write_text(text)
    (tmp_path / "team" / "policy.csv").write_text("")  # the files are not what decides now
    alice = alice_on(setup)
    page = alice.get("/policies")
    assert page.status_code == 200, page.text
    assert f"head version {second}" in page.text
    history = html.unescape(page.text.split('id="history"')[1].split("</table>")[0])
    assert "builds are fine" in history
    assert "first rules" in history
    assert "p, agent, *, make *, allow, builds" in page.text

    command = "make build && rm -rf /tmp/x"
    tried = alice.post("/playground", data={"csrf": csrf_of(alice), "command": command})
    assert tried.status_code == 200, tried.text
    checked = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--config", str(setup), "--workdir", str(tmp_path / "ws"), "--", command],
        capture_output=True, text=True, env=server_env(), check=False,
    )  # fmt: skip
    assert checked.returncode == 11, checked.stderr
    shown = html.unescape(tried.text.split('<pre id="explanation">')[1].split("</pre>")[0])
    assert shown == checked.stdout.rstrip("\n")
