"""The console over plain HTTP (httpx against a real ``shellgate serve``): headers,
logins, sessions, CSRF and origin checks, bad input, the playground, audit, policies."""

from __future__ import annotations

import html
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from shellgate.audit.log import AuditLog
from tests.conftest import wait_until
from tests.console.console_helpers import (
    ALICE,
    BOB,
    ConsoleProcess,
    csrf_of,
    login,
    write_setup,
)
from tests.mcp.mcp_helpers import server_env


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_setup(tmp_path_factory.mktemp("console"))


@pytest.fixture(scope="module")
def server(setup: Path) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(setup) as proc:
        yield proc


@pytest.fixture
def client(server: ConsoleProcess) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


@pytest.fixture
def alice(client: httpx.Client) -> httpx.Client:
    assert login(client).status_code == 303
    return client


def assert_secure_headers(response: httpx.Response) -> None:
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_every_answer_carries_the_security_headers(alice: httpx.Client) -> None:
    for path in (
        "/login",
        "/approvals",
        "/audit",
        "/policies",
        "/playground",
        "/static/console.css",
        "/static/console.js",
        "/nowhere",
    ):
        assert_secure_headers(alice.get(path, headers={"Accept": "text/html"}))
    with httpx.Client(base_url=str(alice.base_url)) as anonymous:
        assert_secure_headers(anonymous.get("/approvals"))


def test_pages_need_a_session(client: httpx.Client) -> None:
    for path in ("/", "/approvals", "/audit", "/policies", "/playground"):
        page = client.get(path, headers={"Accept": "text/html"})
        assert page.status_code == 303, path
        assert page.headers["location"] == "/login"
    assert client.get("/approvals/state", headers={"Accept": "application/json"}).status_code == 401
    assert client.get("/audit").status_code == 401  # not HTML: no redirect


def test_a_wrong_token_does_not_log_in(server: ConsoleProcess, client: httpx.Client) -> None:
    wrong = "not-a-real-token-0123456789"
    answer = login(client, wrong)
    assert answer.status_code == 401
    assert "That token is not valid." in answer.text
    assert "shellgate_session" not in answer.headers.get("set-cookie", "")
    assert client.get("/approvals", headers={"Accept": "text/html"}).status_code == 303
    assert "failed login from 127.0.0.1" in server.stderr()
    assert wrong not in server.stderr()
    assert ALICE not in server.stderr()


def test_a_login_sets_a_strict_httponly_session_cookie(client: httpx.Client) -> None:
    answer = login(client)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/approvals"
    cookie = next(
        c for c in answer.headers.get_list("set-cookie") if c.startswith("shellgate_session=")
    )
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie
    assert "Secure" not in cookie  # loopback: plain HTTP
    assert ALICE not in cookie
    page = client.get("/approvals", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert "alice@example.com" in page.text


def test_a_login_needs_the_forms_nonce_and_the_same_origin(server: ConsoleProcess) -> None:
    with server.client() as c:
        c.get("/login")
        assert c.post("/login", data={"token": ALICE}).status_code == 403  # no nonce
        assert c.post("/login", data={"token": ALICE, "nonce": "guess"}).status_code == 403
    with server.client() as c:
        page = c.get("/login")
        nonce = page.text.split('name="nonce" value="')[1].split('"')[0]
        evil = c.post(
            "/login",
            data={"token": ALICE, "nonce": nonce},
            headers={"Origin": "https://evil.example"},
        )
        assert evil.status_code == 403
        assert c.get("/approvals", headers={"Accept": "text/html"}).status_code == 303


def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(alice: httpx.Client) -> None:
    token = csrf_of(alice)
    for data in ({}, {"csrf": ""}, {"csrf": "x" * 43}, {"csrf": token + "x"}):
        refused = alice.post("/logout", data=data)
        assert refused.status_code == 403, data
        assert "CSRF" in refused.text
    # the session is still there: nothing was changed
    assert alice.get("/approvals", headers={"Accept": "text/html"}).status_code == 200
    refused = alice.post("/playground", data={"command": "echo hi"})
    assert refused.status_code == 403


def test_another_sessions_csrf_token_is_refused(
    server: ConsoleProcess, alice: httpx.Client
) -> None:
    with server.client() as bob:
        login(bob, BOB)
        bobs = csrf_of(bob)
    assert alice.post("/logout", data={"csrf": bobs}).status_code == 403
    assert alice.get("/approvals", headers={"Accept": "text/html"}).status_code == 200


def test_a_post_from_another_origin_is_refused(alice: httpx.Client) -> None:
    token = csrf_of(alice)
    cases = [
        {"Origin": "https://evil.example"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},  # no Sec-Fetch-Site, no Referer: cannot tell
        {"Origin": "", "Referer": "https://evil.example/page"},
    ]
    for headers in cases:
        alice.headers.pop("Origin", None)
        refused = alice.post("/logout", data={"csrf": token}, headers=headers)
        assert refused.status_code == 403, headers
    alice.headers.pop("Origin", None)
    # a browser's same-origin form under Referrer-Policy: no-referrer
    ok = alice.post(
        "/playground",
        data={"csrf": token, "command": "echo hi"},
        headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"},
    )
    assert ok.status_code == 200


def test_a_post_without_a_session_is_refused(client: httpx.Client) -> None:
    assert client.post("/logout", data={"csrf": "x"}).status_code == 403
    assert client.post("/playground", data={"csrf": "x", "command": "ls"}).status_code == 403


def test_logout_ends_the_session(alice: httpx.Client) -> None:
    cookie = alice.cookies["shellgate_session"]
    answer = alice.post("/logout", data={"csrf": csrf_of(alice)})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login"
    with httpx.Client(
        base_url=str(alice.base_url), cookies={"shellgate_session": cookie}
    ) as replay:
        assert replay.get("/approvals", headers={"Accept": "text/html"}).status_code == 303


def test_a_host_that_is_not_loopback_is_refused(server: ConsoleProcess) -> None:
    answer = httpx.get(server.url + "/login", headers={"Host": "evil.example:8470"})
    assert answer.status_code == 421
    assert httpx.get(server.url + "/login", headers={"Host": "localhost:1"}).status_code == 200


def test_bad_form_input_is_refused(alice: httpx.Client) -> None:
    token = csrf_of(alice)
    as_json = alice.post("/playground", json={"csrf": token, "command": "ls"})
    assert as_json.status_code == 403  # not a form: no CSRF token
    huge = alice.post("/playground", data={"csrf": token, "command": "x" * 300_000})
    assert huge.status_code == 413
    empty = alice.post("/playground", data={"csrf": token, "command": "   "})
    assert empty.status_code == 400
    assert "Type a command." in empty.text
    long_subject = alice.post(
        "/playground", data={"csrf": token, "command": "ls", "subject": "s" * 200}
    )
    assert long_subject.status_code == 400
    bad_draft = alice.post(
        "/playground",
        data={"csrf": token, "command": "ls", "draft": "p, agent", "draft_set": "team"},
    )
    assert bad_draft.status_code == 422
    assert "policy.csv" in bad_draft.text
    no_set = alice.post(
        "/playground",
        data={
            "csrf": token,
            "command": "ls",
            "draft": "p, agent, *, ls, allow",
            "draft_set": "nope",
        },
    )
    assert no_set.status_code == 422
    assert "no current policy set is named" in html.unescape(no_set.text)


def test_the_playground_explains_as_shellgate_check_does(setup: Path, alice: httpx.Client) -> None:
    command = "echo hi && rm -rf /tmp/x"
    page = alice.post("/playground", data={"csrf": csrf_of(alice), "command": command})
    assert page.status_code == 200
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "shellgate.cli",
            "check",
            "--config",
            str(setup),
            "--workdir",
            str(setup.parent / "ws"),
            "--",
            command,
        ],
        capture_output=True,
        text=True,
        env=server_env(),
        check=False,
    )
    assert checked.returncode == 11, checked.stderr
    shown = html.unescape(page.text.split('<pre id="explanation">')[1].split("</pre>")[0])
    assert shown == checked.stdout.rstrip("\n")
    assert 'rule <span id="rule">team/policy.csv:3</span>' in page.text


def test_the_playground_explains_a_sandbox_answer(setup: Path, alice: httpx.Client) -> None:
    page = alice.post("/playground", data={
        "csrf": csrf_of(alice), "command": "pytest -q",
        "draft": "p, agent, *, pytest *, sandbox, tests run confined", "draft_set": "team"})
    assert page.status_code == 200
    assert '<section id="result" class="sandbox">' in page.text
    assert 'id="sandbox-note"' in page.text
    assert "runs confined: bwrap" in html.unescape(page.text)
    # the neighbour: an ask is no sandbox answer and gets no such note
    asked = alice.post("/playground", data={"csrf": csrf_of(alice), "command": "touch x"})
    assert '<section id="result" class="ask">' in asked.text
    assert 'id="sandbox-note"' not in asked.text
    # the baseline is under the console's sets as under a gate's
    baseline = alice.post("/playground", data={"csrf": csrf_of(alice),
                                               "command": "dd if=/dev/zero of=/dev/sda"})
    assert 'rule <span id="rule">baseline/policy.csv:' in baseline.text


def test_the_audit_trail_filters_by_the_sandbox_effect(setup: Path, alice: httpx.Client) -> None:
    page = alice.get("/audit", params={"effect": "sandbox"})
    assert page.status_code == 200
    assert '<option value="sandbox" selected>' in page.text


def test_the_playground_tries_draft_rows_without_changing_the_set(
    setup: Path, alice: httpx.Client
) -> None:
    token = csrf_of(alice)
    before = alice.post("/playground", data={"csrf": token, "command": "make build"})
    assert "<h2>ask" in before.text
    draft = "p, agent, *, make *, allow, builds are fine\n"
    tried = alice.post(
        "/playground",
        data={"csrf": token, "command": "make build", "draft": draft, "draft_set": "team"},
    )
    assert "<h2>allow" in tried.text
    assert "team/policy.csv:6" in tried.text  # the draft row, after the set's own rows
    assert "make *" not in (setup.parent / "team" / "policy.csv").read_text()
    after = alice.post("/playground", data={"csrf": token, "command": "make build"})
    assert "<h2>ask" in after.text


def test_the_policies_page_shows_the_file_sets(alice: httpx.Client) -> None:
    page = alice.get("/policies")
    assert page.status_code == 200
    assert "files ([policy] paths)" in page.text
    assert "echoing is harmless" in page.text


def test_metrics_need_a_bearer_token(server: ConsoleProcess) -> None:
    assert httpx.get(server.url + "/metrics").status_code == 401
    wrong = httpx.get(
        server.url + "/metrics", headers={"Authorization": "Bearer nope-nope-nope-nope"}
    )
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    good = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {ALICE}"})
    assert good.status_code == 200
    assert good.headers["content-type"].startswith("text/plain")
    assert "shellgate_audit_last_seq{log=\"audit.jsonl\"}" in good.text


def test_the_audit_trail_newest_first_with_filters_and_chain_status(
    setup: Path, alice: httpx.Client
) -> None:
    path = setup.parent / "audit.jsonl"
    log = AuditLog(path)
    try:
        log.append(
            {
                "type": "decision",
                "call_id": "c1",
                "subject": "agent",
                "command": "echo one",
                "decision": "allow",
                "rule": "team/policy.csv:1",
            }
        )
        log.append(
            {
                "type": "decision",
                "call_id": "c2",
                "subject": "ci",
                "command": "rm -rf /",
                "decision": "deny",
                "rule": "team/policy.csv:3",
            }
        )
        log.append({"type": "result", "call_id": "c1", "subject": "agent", "outcome": "ok"})
    finally:
        log.close()
    page = alice.get("/audit")
    assert page.status_code == 200
    assert 'class="chain ok"' in page.text
    assert "intact: 3 records" in page.text
    rows = page.text.split("<tbody>")[1]
    assert rows.index("c1") < rows.index("rm -rf /") < rows.index("echo one")  # newest first
    only_deny = alice.get("/audit", params={"effect": "deny"}).text.split("<tbody>")[1]
    assert "rm -rf /" in only_deny
    assert "echo one" not in only_deny
    by_call = alice.get("/audit", params={"call_id": "c1"}).text.split("<tbody>")[1]
    assert "echo one" in by_call
    assert "rm -rf" not in by_call
    by_subject = alice.get("/audit", params={"subject": "ci"}).text.split("<tbody>")[1]
    assert "rm -rf /" in by_subject
    assert "echo one" not in by_subject
    by_text = alice.get("/audit", params={"text": "ECHO ONE"}).text.split("<tbody>")[1]
    assert "echo one" in by_text
    assert "rm -rf" not in by_text
    by_type = alice.get("/audit", params={"type": "result"}).text.split("<tbody>")[1]
    assert "c1" in by_type
    assert "rm -rf" not in by_type
    assert alice.get("/audit", params={"text": "x" * 300}).status_code == 400
    # an edited record: the chain status names it
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"rm -rf /", b"rm -rf ~")
    path.write_bytes(b"".join(lines))
    page = alice.get("/audit")
    assert 'class="chain bad"' in page.text
    assert f"broken at {path}:2: hash mismatch" in page.text


def test_a_session_expires(tmp_path: Path) -> None:
    setup = write_setup(tmp_path, extra="session_ttl_ms = 1500\n")
    with ConsoleProcess(setup) as server, server.client() as c:
        assert login(c).status_code == 303
        assert c.get("/approvals", headers={"Accept": "text/html"}).status_code == 200
        assert wait_until(
            lambda: c.get("/approvals", headers={"Accept": "text/html"}).status_code == 303,
            timeout_s=15,
        )


def test_unreachable_stores_are_said_and_nothing_is_shown_as_if_fine(tmp_path: Path) -> None:
    dead = "postgresql://nobody@127.0.0.1:1/shellgate"
    setup = write_setup(
        tmp_path,
        audit=f'store = "{dead}"',
        extra=f'[approval]\nmode = "queue"\nstore = "{dead}"\n',
    )
    setup.write_text(setup.read_text().replace("[policy]\n", f'[policy]\nstore = "{dead}"\n'))
    with ConsoleProcess(setup) as server, server.client() as alice:
        assert login(alice).status_code == 303
        approvals = alice.get("/approvals")
        assert approvals.status_code == 503
        assert "The approval queue cannot be read" in approvals.text
        assert 'id="approval-' not in approvals.text
        audit = alice.get("/audit")
        assert 'id="error"' in audit.text  # cannot be read (or cannot be read by this build)
        assert 'class="chain' not in audit.text
        policies = alice.get("/policies")
        assert policies.status_code == 503
        assert 'id="error"' in policies.text
        tried = alice.post("/playground", data={"csrf": csrf_of(alice), "command": "echo hi"})
        assert tried.status_code == 422
        assert 'id="result"' not in tried.text
