"""The console tests' one browser: Debian's chromium (``make test-system`` installs it),
driven by PyPI playwright with ``executable_path`` (``playwright install`` never runs).
A missing chromium fails the tests: a skip would hide a missing install step."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium per module; each test opens a context of its own. Not per session:
    between its calls the sync API leaves its own event loop marked as running in this
    thread, and every asyncio test after it would fail to start its loop."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
