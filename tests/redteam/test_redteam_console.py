"""The console's login throttle held for /login only: /metrics takes the same
tokens (as a bearer) and answered every wrong guess at full speed, so a client
could guess console tokens there without ever being slowed down. Now a wrong
bearer token counts as a failed login and a throttled client waits on both."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.console.console_helpers import ALICE, ConsoleProcess, login, write_setup


def test_wrong_metrics_tokens_are_throttled_like_logins(tmp_path: Path) -> None:
    with ConsoleProcess(write_setup(tmp_path)) as server, server.client() as c:
        wrong = {"Authorization": "Bearer wrong-token-0123456789abcdef"}
        for _ in range(10):
            assert httpx.get(server.url + "/metrics", headers=wrong).status_code == 401
        assert httpx.get(server.url + "/metrics", headers=wrong).status_code == 429
        right = {"Authorization": f"Bearer {ALICE}"}
        assert httpx.get(server.url + "/metrics", headers=right).status_code == 429
        assert login(c, ALICE).status_code == 429  # the guesses count against logins too
