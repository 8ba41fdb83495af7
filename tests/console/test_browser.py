"""The console in a real browser: Debian's chromium driven by PyPI playwright
(``executable_path``; ``playwright install`` is never run). Select with ``-m browser``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from shellgate.audit.log import AuditLog
from tests.console.console_helpers import ALICE, ConsoleProcess, write_setup

pytestmark = pytest.mark.browser
HOSTILE = "echo '\x1b[31mred\x1b[0m <script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">' \u202etxt.exe"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(write_setup(tmp_path_factory.mktemp("browser"))) as proc:
        yield proc


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def log_in(page: Page, url: str, token: str = ALICE) -> None:
    page.goto(url + "/approvals")
    assert page.url == url + "/login"  # redirected: no session yet
    page.fill("#token", token)
    page.click("button[type=submit]")


def test_a_wrong_token_fails_and_the_right_one_logs_in(server: ConsoleProcess, page: Page) -> None:
    log_in(page, server.url, "wrong-token-0123456789abcdef")
    assert page.inner_text("#error") == "That token is not valid."
    assert page.url == server.url + "/login"
    page.fill("#token", ALICE)
    page.click("button[type=submit]")
    assert page.url == server.url + "/approvals"
    assert page.inner_text(".who") == "alice@example.com"
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["shellgate_session"]
    assert session["httpOnly"]
    assert session["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script reads it


def test_the_playground_shows_the_deciding_rule(server: ConsoleProcess, page: Page) -> None:
    log_in(page, server.url)
    page.click("text=Playground")
    page.fill("#command", "echo hi && rm -rf /tmp/x")
    page.click("#decide")
    assert page.inner_text("#result h2").startswith("deny")
    assert page.inner_text("#rule") == "team/policy.csv:3"
    rows = page.locator("#segments tbody tr")
    assert rows.count() == 2
    assert "team/policy.csv:1" in rows.nth(0).inner_text()
    assert "segment 2: 'rm -rf /tmp/x' -> deny" in page.inner_text("#explanation")


def test_hostile_command_text_renders_inert(server: ConsoleProcess, page: Page) -> None:
    log_in(page, server.url)
    page.goto(server.url + "/playground")
    page.fill("#command", HOSTILE)
    page.click("#decide")
    explanation = page.inner_text("#explanation")
    assert "<script>window.pwned=1</script>" in explanation  # shown as text
    assert "\\x1b[31m" in explanation
    assert "\\u202e" in explanation
    assert "\x1b" not in page.content()
    assert "\u202e" not in page.content()
    assert page.locator("#result script, #result img").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_hostile_audit_records_render_inert(server: ConsoleProcess, page: Page) -> None:
    audit = Path(server.stderr_path).with_name("audit.jsonl")
    log = AuditLog(audit)
    try:
        log.append(
            {
                "type": "decision",
                "call_id": "evil1",
                "subject": "agent",
                "command": HOSTILE,
                "decision": "deny",
                "rule": "<b>x</b>",
            }
        )
    finally:
        log.close()
    log_in(page, server.url)
    page.goto(server.url + "/audit?call_id=evil1")
    row = page.locator("#records tbody tr").first
    assert "<script>window.pwned=1</script>" in row.inner_text()
    assert "<b>x</b>" in row.inner_text()
    assert page.locator("#records script, #records img, #records b").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_a_form_posted_from_another_site_is_refused(server: ConsoleProcess, page: Page) -> None:
    log_in(page, server.url)
    page.goto(server.url + "/playground")
    csrf = page.get_attribute("input[name=csrf]", "value")  # even the right token does not help
    evil = f"""<form id=f method=post action="{server.url}/logout">
        <input name=csrf value="{csrf}"></form><script>document.getElementById('f').submit()</script>"""
    page.route(
        "http://evil.test/**", lambda route: route.fulfill(body=evil, content_type="text/html")
    )
    with page.expect_response(f"{server.url}/logout") as answer:
        page.goto("http://evil.test/attack")
    assert answer.value.status == 403
    page.goto(server.url + "/approvals")
    assert page.url == server.url + "/approvals"  # still logged in: the logout did not happen
    page.click("text=Log out")
    assert page.url == server.url + "/login"
    page.goto(server.url + "/approvals")
    assert page.url == server.url + "/login"
