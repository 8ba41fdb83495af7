"""The approvals page over a real queue (SQLite): listing, answering as the logged-in
person, refusals that change nothing; in chromium, a waiting ``shellgate run`` answered
from the console runs (approve) or does not (deny)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from shellgate.store import approvals
from shellgate.store.db import Database
from tests.conftest import wait_until
from tests.console.console_helpers import ConsoleProcess, csrf_of, login, write_setup
from tests.mcp.mcp_helpers import server_env

QUEUE = """
[approval]
mode = "queue"
store = "sqlite:queue.db"
timeout_ms = 120000
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_setup(tmp_path_factory.mktemp("approvals"), extra=QUEUE)


@pytest.fixture(scope="module")
def server(setup: Path) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(setup) as proc:
        yield proc


@pytest.fixture(scope="module")
def queue(setup: Path) -> Iterator[Any]:
    db = Database(f"sqlite://{setup.parent / 'queue.db'}")
    try:
        yield approvals.ApprovalQueue(db)
    finally:
        db.close()


def submit(queue: Any, command: str = "touch notes.txt") -> Any:
    return queue.submit(
        subject="agent",
        tenant="default",
        session="s1",
        host="ci-7",
        command=command,
        workdir="/work",
        reason="writes files (ask 'touch *' matches 'touch notes.txt')",
        rule="team/policy.csv:2",
        question=f"Run `{command}`?",
        call_id="call-1",
        timeout_s=600,
    )


@pytest.fixture
def alice(server: ConsoleProcess) -> Iterator[httpx.Client]:
    with server.client() as client:
        assert login(client).status_code == 303
        yield client


def test_a_pending_approval_is_shown_with_who_what_why_and_rule(
    queue: Any, alice: httpx.Client
) -> None:
    pending = submit(queue)
    page = alice.get("/approvals")
    assert page.status_code == 200
    section = page.text.split(f'id="approval-{pending.id}"')[1].split("</section>")[0]
    for text in (
        "touch notes.txt",
        "agent in default",
        "ci-7",
        "team/policy.csv:2",
        "writes files",
        "Expires in",
        "call-1",
    ):
        assert text in section.replace("&#39;", "'"), text
    queue.answer(pending.id, "deny", person="cleanup")


def test_an_answer_is_given_as_the_logged_in_person(queue: Any, alice: httpx.Client) -> None:
    pending = submit(queue)
    done = alice.post(
        f"/approvals/{pending.id}",
        data={"csrf": csrf_of(alice, "/approvals"), "answer": "approve", "message": "go ahead"},
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/approvals?answered=approve"
    row = queue.get(pending.id)
    assert row.status == "approved"
    assert row.person == "alice@example.com"
    assert row.message == "go ahead"
    page = alice.get("/approvals?answered=approve")
    assert "Approved: the call runs now." in page.text
    assert "go ahead" in page.text.split('id="recent"')[1]
    again = alice.post(
        f"/approvals/{pending.id}", data={"csrf": csrf_of(alice, "/approvals"), "answer": "deny"}
    )
    assert again.status_code == 409
    assert "Not answered" in again.text
    assert queue.get(pending.id).status == "approved"


def test_refused_answers_change_nothing(
    server: ConsoleProcess, queue: Any, alice: httpx.Client
) -> None:
    pending = submit(queue)
    token = csrf_of(alice, "/approvals")
    url = f"/approvals/{pending.id}"
    assert alice.post(url, data={"answer": "approve"}).status_code == 403  # no CSRF token
    assert alice.post(url, data={"csrf": token[::-1], "answer": "approve"}).status_code == 403
    assert (
        alice.post(
            url,
            data={"csrf": token, "answer": "approve"},
            headers={"Origin": "https://evil.example"},
        ).status_code
        == 403
    )
    with httpx.Client(base_url=server.url, headers={"Origin": server.url}) as anonymous:
        assert anonymous.post(url, data={"csrf": token, "answer": "approve"}).status_code == 403
    assert alice.post(url, data={"csrf": token, "answer": "yes"}).status_code == 400
    assert (
        alice.post(
            url, data={"csrf": token, "answer": "approve", "message": "m" * 1001}
        ).status_code
        == 400
    )
    unknown = alice.post("/approvals/nope", data={"csrf": token, "answer": "approve"})
    assert unknown.status_code == 409
    assert queue.get(pending.id).status == "pending"
    queue.answer(pending.id, "deny", person="cleanup")


def test_the_state_changes_when_the_queue_does(queue: Any, alice: httpx.Client) -> None:
    before = alice.get("/approvals/state").json()["state"]
    pending = submit(queue)
    after = alice.get("/approvals/state").json()["state"]
    assert before != after
    queue.answer(pending.id, "deny", person="cleanup")
    assert alice.get("/approvals/state").json()["state"] not in (before, after)


# -- in the browser, with a real gate waiting --------------------------------------------


@pytest.fixture
def page(browser: Browser, server: ConsoleProcess) -> Iterator[Page]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server.url + "/login")
        page.fill("#token", "alice-console-token-0123456789abcdef")
        page.click("button[type=submit]")
        assert page.url == server.url + "/approvals"
        yield page
    finally:
        context.close()


def waiting_run(setup: Path, command: str) -> subprocess.Popen[str]:
    """``shellgate run`` of a command the policy asks about: it waits in the queue."""
    return subprocess.Popen(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(setup), "--", command],
        cwd=setup.parent / "ws",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
    )


def pending_for(queue: Any, command: str) -> Any:
    def mine() -> list[Any]:
        return [a for a in queue.pending() if a.command == command]

    assert wait_until(lambda: bool(mine()), 60)
    return mine()[0]


@pytest.mark.browser
def test_approving_in_the_console_runs_the_waiting_call(
    setup: Path, queue: Any, server: ConsoleProcess, page: Page
) -> None:
    command = "touch approved.txt"
    run = waiting_run(setup, command)
    try:
        pending = pending_for(queue, command)
        page.goto(server.url + "/approvals")
        card = page.locator(f"#approval-{pending.id}")
        assert command in card.locator(".command").inner_text()
        card.locator("input[name=message]").fill("looks fine")
        card.locator("button.approve").click()
        assert page.inner_text("#note") == "Approved: the call runs now."
        _out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, err
    assert (setup.parent / "ws" / "approved.txt").exists()
    assert queue.get(pending.id).person == "alice@example.com"
    assert "alice@example.com" in (setup.parent / "audit.jsonl").read_text()


@pytest.mark.browser
def test_denying_in_the_console_keeps_the_call_from_running(
    setup: Path, queue: Any, server: ConsoleProcess, page: Page
) -> None:
    command = "touch denied.txt"
    run = waiting_run(setup, command)
    try:
        pending = pending_for(queue, command)
        page.goto(server.url + "/approvals")
        page.locator(f"#approval-{pending.id} button.deny").click()
        assert page.inner_text("#note") == "Denied: the call will not run."
        run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode != 0
    assert not (setup.parent / "ws" / "denied.txt").exists()
    assert queue.get(pending.id).status == "denied"


@pytest.mark.browser
def test_a_hostile_pending_command_renders_inert(
    queue: Any, server: ConsoleProcess, page: Page
) -> None:
    hostile = "echo '\x1b[2J<script>window.pwned=1</script>' \u202egnp.exe"
    pending = submit(queue, hostile)
    try:
        page.goto(server.url + "/approvals")
        shown = page.locator(f"#approval-{pending.id} .command").inner_text()
        assert "<script>window.pwned=1</script>" in shown
        assert "\\x1b[2J" in shown
        assert "\\u202e" in shown
        assert page.locator(f"#approval-{pending.id} script").count() == 0
        assert page.evaluate("typeof window.pwned") == "undefined"
    finally:
        queue.answer(pending.id, "deny", person="cleanup")


@pytest.mark.browser
def test_a_new_approval_appears_without_a_reload_by_hand(
    queue: Any, server: ConsoleProcess, page: Page
) -> None:
    # Away first: the page the login landed on polls the state too, and its answer
    # could stand for the new page's, whose own first read may come after the submit
    # below (then it never sees a change, and never reloads).
    page.goto("about:blank")
    with page.expect_response(lambda r: r.url.endswith("/approvals/state")):
        page.goto(server.url + "/approvals")  # the page's script has read the queue's state
    pending = submit(queue, "touch live.txt")
    try:
        page.wait_for_selector(f"#approval-{pending.id}", timeout=20_000)  # polled every 2 s
        assert "touch live.txt" in page.inner_text(f"#approval-{pending.id} .command")
    finally:
        queue.answer(pending.id, "deny", person="cleanup")


def test_an_escalation_out_of_the_sandbox_says_what_it_asks_for(
    queue: Any, alice: httpx.Client
) -> None:
    pending = queue.submit(
        subject="agent", tenant="default", session="s1", host="ci-7", command="./build.sh",
        workdir="/work", reason="the policy runs it in the sandbox (the closing default is "
        "sandbox); asks for the wider 'full-access' sandbox mode: it writes ~/.cache",
        rule=None, question="Allow this command? `./build.sh`", call_id="call-2",
        timeout_s=600, escalation="full-access",
    )
    plain = submit(queue)  # its neighbour: no escalation, no such row
    page = alice.get("/approvals").text.replace("&#39;", "'")
    section = page.split(f'id="approval-{pending.id}"')[1].split("</section>")[0]
    assert "<dt>Escalation</dt>" in section
    assert "'full-access' mode (unconfined)" in section
    assert "the policy runs it in the sandbox" in section
    other = page.split(f'id="approval-{plain.id}"')[1].split("</section>")[0]
    assert "<dt>Escalation</dt>" not in other
    queue.answer(pending.id, "deny", person="cleanup")
    queue.answer(plain.id, "deny", person="cleanup")
