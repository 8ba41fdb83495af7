"""The tokens file: its format, its permissions, and a lookup that never shows a token."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shellgate.config import load_config
from shellgate.errors import ConfigError
from shellgate.mcp.http import ShellgateHTTP
from shellgate.mcp.tokens import FileTokenVerifier, Principal, load_tokens
from tests.mcp.mcp_helpers import server_env
from tests.mcp_http.http_helpers import ALICE, BOB, TOKENS, write_setup, write_tokens

SECRET = "s3cret-token-0123456789abcdefABCD"


def test_a_good_file_maps_each_token_to_its_principal(tmp_path: Path) -> None:
    write_tokens(tmp_path / "tokens", TOKENS + f"\n  # indented comment\n{SECRET} alice team-a\n")
    table = load_tokens(tmp_path / "tokens")
    assert table.lookup(ALICE) == Principal("alice", "team-a")
    assert table.lookup(SECRET) == Principal("alice", "team-a")  # a second token, same principal
    assert table.lookup(BOB) == Principal("bob", "team-b")
    for wrong in ("", ALICE[:-1], ALICE + "x", ALICE.upper(), f" {ALICE}"):
        assert table.lookup(wrong) is None
    assert len(table) == 3
    assert table.principals == {Principal("alice", "team-a"), Principal("bob", "team-b")}


def test_only_digests_are_kept(tmp_path: Path) -> None:
    write_tokens(tmp_path / "tokens", f"{SECRET} alice team-a\n")
    verifier = FileTokenVerifier(load_tokens(tmp_path / "tokens"))
    assert SECRET not in repr(vars(verifier.table))

    async def check() -> None:
        access = await verifier.verify_token(SECRET)
        assert access is not None
        assert SECRET not in access.model_dump_json()
        assert (access.subject, access.client_id) == ("alice", "team-a")

    asyncio.run(check())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            f"{SECRET} alice\n",
            "tokens:1: expected 'TOKEN SUBJECT TENANT', found 2 fields",
            id="two-fields",
        ),
        pytest.param(
            f"# c\n\n{SECRET} alice team-a extra\n",
            "tokens:3: expected 'TOKEN SUBJECT TENANT', found 4 fields",
            id="four-fields",
        ),
        pytest.param(
            f"{SECRET}\n",
            "tokens:1: expected 'TOKEN SUBJECT TENANT', found 1 field",
            id="token-only",
        ),
        pytest.param(
            f"{SECRET} alice team-a\n{BOB} bob b\n{SECRET} carol c\n",
            "tokens:3: the same token as line 1",
            id="duplicate",
        ),
        pytest.param(
            "short-0123 alice team-a\n",
            "tokens:1: the token is too short (10 characters; at least 16)",
            id="short",
        ),
        pytest.param(
            f'{SECRET}"x alice team-a\n',
            "tokens:1: the token holds a character a bearer token cannot carry",
            id="bad-char",
        ),
        pytest.param(
            f"{SECRET} al,ice team-a\n", "tokens:1: invalid subject 'al,ice'", id="bad-subject"
        ),
        pytest.param(f"{SECRET} alice *\n", "tokens:1: invalid tenant '*'", id="star-tenant"),
        pytest.param(
            "# only a comment\n\n",
            "tokens: no tokens (every line is blank or a comment), so nobody could connect",
            id="empty",
        ),
    ],
)
def test_a_bad_line_is_refused_with_its_number_and_never_the_token(
    tmp_path: Path, text: str, message: str
) -> None:
    write_tokens(tmp_path / "tokens", text)
    with pytest.raises(ConfigError) as info:
        load_tokens(tmp_path / "tokens")
    assert str(info.value) == f"{tmp_path}/{message}"
    assert info.value.hint
    assert SECRET not in str(info.value) + info.value.hint


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o644, 0o666])
def test_a_file_others_may_use_is_refused(tmp_path: Path, mode: int) -> None:
    write_tokens(tmp_path / "tokens", f"{SECRET} alice team-a\n", mode=mode)
    with pytest.raises(ConfigError) as info:
        load_tokens(tmp_path / "tokens")
    assert str(info.value).endswith(f"open to others than its owner (mode {mode:04o})")
    assert info.value.hint == f"chmod 600 {tmp_path / 'tokens'}"


def test_not_a_file_or_missing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the tokens file: No such file"):
        load_tokens(tmp_path / "absent")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_tokens(fifo)
    (tmp_path / "bin").write_bytes(b"\xff\xfe not text\n")
    (tmp_path / "bin").chmod(0o600)
    with pytest.raises(ConfigError, match=r"bin:1: the tokens file is not UTF-8"):
        load_tokens(tmp_path / "bin")


def _mcp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "mcp", "--config", str(tmp_path / "shellgate.toml"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=server_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("tokens", "mode", "args", "error", "hint"),
    [
        pytest.param(f"{SECRET} alice team-a\n", 0o644, ("--http", "0"),
                     "the tokens file is open to others than its owner (mode 0644)", "chmod 600", id="mode"),
        pytest.param(f"{SECRET} alice\n", 0o600, ("--http", "0"),
                     "tokens:1: expected 'TOKEN SUBJECT TENANT', found 2 fields", "one token a line", id="line"),
        pytest.param(f"{SECRET} a b\n{SECRET} c d\n", 0o600, ("--http", "0"),
                     "tokens:2: the same token as line 1", "every token must be unique", id="duplicate"),
        pytest.param("\n", 0o600, ("--http", "0"), "no tokens", "openssl rand", id="empty"),
        pytest.param(f"{SECRET} a b\n", 0o600, ("--http", "0.0.0.0:0"),
                     "--http: 0.0.0.0 is not a loopback address", "TLS proxy", id="remote"),
        pytest.param(f"{SECRET} a b\n", 0o600, ("--http", "host:port"),
                     "--http host:port: expected PORT or HOST:PORT", "--http 8080", id="address"),
        pytest.param(f"{SECRET} a b\n", 0o600, ("--http", "::1:80"),
                     "--http ::1:80: an IPv6 address needs brackets", "[::1]:8080", id="ipv6"),
        pytest.param(f"{SECRET} a b\n", 0o600, ("--tokens", "tokens"),
                     "--tokens is for --http", "add --http", id="tokens-without-http"),
    ],
)  # fmt: skip
def test_a_bad_start_exits_2_with_error_and_hint(
    tmp_path: Path, tokens: str, mode: int, args: tuple[str, ...], error: str, hint: str
) -> None:
    write_setup(tmp_path)
    write_tokens(tmp_path / "tokens", tokens, mode=mode)
    done = _mcp(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]
    assert lines[0].startswith("error: ")
    assert error in lines[0]
    assert lines[1].startswith("hint: ")
    assert hint in lines[1]
    assert len(lines) == 2
    assert SECRET not in done.stderr
    assert not (tmp_path / "audit.jsonl").exists() or not (tmp_path / "audit.jsonl").read_text()


def test_http_without_tokens_configured_exits_2(tmp_path: Path) -> None:
    config = write_setup(tmp_path)
    config.write_text(config.read_text().replace('tokens_file = "tokens"', ""))
    done = _mcp(tmp_path, "--http", "0")
    assert done.returncode == 2
    assert "error: --http needs bearer tokens, and none are configured" in done.stderr
    assert "hint: set [mcp] tokens_file in the config, or pass --tokens FILE" in done.stderr


def test_a_port_in_use_exits_2(tmp_path: Path) -> None:
    write_setup(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _mcp(tmp_path, "--http", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert (
        f"error: --http: cannot listen on http://127.0.0.1:{port}/mcp: Address already in use"
        in done.stderr
    )


def test_a_remote_address_needs_allow_remote(tmp_path: Path) -> None:
    everywhere = "0.0.0.0"  # noqa: S104 - resolved and checked, never bound here
    write_setup(tmp_path)
    config = load_config(tmp_path / "shellgate.toml")
    with pytest.raises(ConfigError, match="is not a loopback address"):
        ShellgateHTTP(config, tokens_file=tmp_path / "tokens", host=everywhere, port=0)
    remote = config.model_copy(update={"mcp": config.mcp.model_copy(update={"allow_remote": True})})
    server = ShellgateHTTP(remote, tokens_file=tmp_path / "tokens", host=everywhere, port=0)
    assert not server.loopback
    local = ShellgateHTTP(config, tokens_file=tmp_path / "tokens", host="::1", port=0)
    assert local.loopback
