"""The console's /metrics over real HTTP, from the audit trail real ``shellgate run``s wrote."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.console.console_helpers import ALICE, ConsoleProcess, write_setup
from tests.mcp.mcp_helpers import server_env
from tests.ops.ops_helpers import assert_monotonic, parse, total, value


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    return write_setup(tmp_path)


@pytest.fixture
def console(setup: Path) -> Iterator[ConsoleProcess]:
    server = ConsoleProcess(setup)
    try:
        yield server
    finally:
        server.close()


def run(config: Path, *command: str) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(config), *command],
        capture_output=True, text=True, env=server_env(), cwd=config.parent, timeout=60,
        check=False,
    )
    return done.returncode


def scrape(console: ConsoleProcess) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    answer = httpx.get(console.url + "/metrics", headers={"Authorization": f"Bearer {ALICE}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return parse(answer.content)


def test_the_console_serves_the_trail_s_metrics(setup: Path, console: ConsoleProcess) -> None:
    assert run(setup, "echo", "one") == 0
    assert run(setup, "rm", "-rf", "gone") == 126  # denied
    first = scrape(console)
    assert value(first, "shellgate_store_up", store="audit") == 1
    assert total(first, "shellgate_decisions_total", effect="allow", layer="casbin") == 1
    assert total(first, "shellgate_decisions_total", effect="deny", layer="casbin") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="exit_0") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="denied") == 1
    assert run(setup, "echo", "two") == 0
    second = scrape(console)
    assert_monotonic(first, second)
    assert value(second, "shellgate_results_total", executor="local", outcome="exit_0") == 2
