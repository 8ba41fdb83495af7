"""``shellgate serve`` start-up: the tokens file, the address, SIGTERM, and no heavy imports
for the other commands."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import wait_until
from tests.console.console_helpers import (
    ALICE,
    NONCE,
    ConsoleProcess,
    login,
    serve_argv,
    write_setup,
    write_tokens,
)
from tests.mcp.mcp_helpers import server_env


def refused(config: Path, *args: str) -> str:
    """Run ``shellgate serve`` expecting exit 2 at start-up; its stderr."""
    done = subprocess.run(
        serve_argv(config, "--listen", "127.0.0.1:0", *args),
        capture_output=True,
        text=True,
        env=server_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    return done.stderr


@pytest.mark.parametrize(
    ("text", "mode", "message"),
    [
        (f"{ALICE} alice\n", 0o644, "the tokens file is open to others than its owner (mode 0644)"),
        (f"{ALICE} alice\n", 0o640, "the tokens file is open to others than its owner (mode 0640)"),
        (
            f"# people\n{ALICE} alice extra\n",
            0o600,
            "tokens:2: expected 'TOKEN PERSON', found 3 fields",
        ),
        (f"{ALICE}\n", 0o600, "tokens:1: expected 'TOKEN PERSON', found 1 field"),
        ("short alice\n", 0o600, "tokens:1: the token is too short (5 characters; at least 16)"),
        (f"{ALICE} al/ice\n", 0o600, "tokens:1: invalid person 'al/ice'"),
        (f"{ALICE} alice\n{ALICE} bob\n", 0o600, "tokens:2: the same token as line 1"),
        ("# nobody\n\n", 0o600, "no tokens (every line is blank or a comment)"),
    ],
)
def test_a_bad_tokens_file_is_refused(tmp_path: Path, text: str, mode: int, message: str) -> None:
    config = write_setup(tmp_path)
    write_tokens(tmp_path / "tokens", text, mode)
    err = refused(config)
    assert err.startswith("error: ")
    assert message in err
    assert ALICE not in err


def test_a_missing_tokens_file_is_refused(tmp_path: Path) -> None:
    config = write_setup(tmp_path)
    (tmp_path / "tokens").unlink()
    assert "cannot read the tokens file" in refused(config)
    config.write_text(config.read_text().replace('tokens_file = "tokens"\n', ""))
    err = refused(config)
    assert "error: the console needs a tokens file, and none is configured" in err
    assert "hint: set [console] tokens_file, or pass --tokens FILE" in err


def test_tokens_from_the_command_line(tmp_path: Path) -> None:
    config = write_setup(tmp_path)
    other = write_tokens(tmp_path / "other", "other-token-0123456789abcdef carol\n")
    with ConsoleProcess(config, "--tokens", str(other)) as server, server.client() as c:
        assert login(c, ALICE).status_code == 401
        assert login(c, "other-token-0123456789abcdef").status_code == 303


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("nonsense", "--listen nonsense: expected PORT or HOST:PORT"),
        ("127.0.0.1:99999", "expected PORT or HOST:PORT (a port from 0 to 65535)"),
        ("::1:80", "an IPv6 address needs brackets"),
        (
            "0.0.0.0:0",
            "0.0.0.0 is not a loopback address, and serving the console beyond this machine needs [console] allow_remote = true",
        ),
    ],
)
def test_a_bad_or_remote_address_is_refused(tmp_path: Path, listen: str, message: str) -> None:
    config = write_setup(tmp_path)
    assert message in refused(config, "--listen", listen)


def test_allow_remote_serves_beyond_loopback_with_secure_cookies(tmp_path: Path) -> None:
    config = write_setup(tmp_path, extra="allow_remote = true\n")
    with ConsoleProcess(config, "--listen", "0.0.0.0:0") as server:
        port = server.url.rsplit(":", 1)[1]
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers={"Origin": base}) as c:
            page = c.get("/login")
            nonce_cookie = page.headers["set-cookie"]
            assert "Secure" in nonce_cookie
            assert "HttpOnly" in nonce_cookie
            nonce = NONCE.search(page.text)
            assert nonce is not None
            # httpx, like a browser, keeps a Secure cookie off plain HTTP: sent by hand here
            # (behind the TLS proxy an admin must put in front, the browser sends it)
            c.cookies.clear()
            answer = c.post(
                "/login",
                data={"nonce": nonce.group(1), "token": ALICE},
                headers={"Cookie": f"shellgate_login={nonce.group(1)}"},
            )
            assert answer.status_code == 303
            cookie = next(
                v
                for v in answer.headers.get_list("set-cookie")
                if v.startswith("shellgate_session=")
            )
            assert "Secure" in cookie
            assert "HttpOnly" in cookie


def test_sigterm_stops_it_cleanly(tmp_path: Path) -> None:
    server = ConsoleProcess(write_setup(tmp_path))
    try:
        assert httpx.get(server.url + "/login").status_code == 200
        assert server.stop() == 0
        assert "SIGTERM: shutting down" in server.stderr()
    finally:
        server.close()


def test_other_commands_do_not_import_the_console() -> None:
    code = (
        "import sys\n"
        "from shellgate.cli._app import build_app\n"
        "build_app()\n"
        "heavy = {'starlette', 'jinja2', 'uvicorn', 'shellgate.console'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=server_env(), check=False
    )
    assert done.returncode == 0, done.stderr


def test_serve_help_names_its_options() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        env=server_env(),
        check=False,
    )
    assert done.returncode == 0
    for option in ("--config FILE", "--listen [HOST:]PORT", "--tokens FILE"):
        assert option in done.stdout


def test_sighup_rereads_the_tokens_file(tmp_path: Path) -> None:
    config = write_setup(tmp_path)
    newcomer = "newcomer-token-0123456789abcdef"
    with ConsoleProcess(config) as server:
        write_tokens(tmp_path / "tokens", f"{newcomer} dana\n")
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: "SIGHUP: 1 console tokens loaded" in server.stderr(), 30)
        with server.client() as c:
            assert login(c, ALICE).status_code == 401
            assert login(c, newcomer).status_code == 303
        write_tokens(tmp_path / "tokens", f"{newcomer} dana\n", 0o644)  # a bad file: kept the last
        server.proc.send_signal(signal.SIGHUP)
        assert wait_until(
            lambda: "tokens not reloaded, the last good ones stay" in server.stderr(), 30
        )
        with server.client() as c:
            assert login(c, newcomer).status_code == 303


def test_repeated_failed_logins_are_slowed_down(tmp_path: Path) -> None:
    with ConsoleProcess(write_setup(tmp_path)) as server, server.client() as c:
        for _ in range(10):
            assert login(c, "wrong-token-0123456789abcdef").status_code == 401
        assert login(c, "wrong-token-0123456789abcdef").status_code == 429
        assert login(c, ALICE).status_code == 429  # even the right token waits out the window
        assert "too many failed logins" in server.stderr()


def test_a_bad_log_level_is_refused(tmp_path: Path) -> None:
    assert "invalid --log-level" in refused(write_setup(tmp_path), "--log-level", "LOUD")
