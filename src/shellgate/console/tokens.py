"""The console's login tokens: ``TOKEN PERSON`` lines in a file only its owner can read.

The file (``[console] tokens_file`` or ``shellgate serve --tokens FILE``)::

    # TOKEN                                                            PERSON
    6f1d0c3e9a...(openssl rand -hex 32)                                alice@example.com

The file checks are those of the MCP bearer tokens (:mod:`shellgate.mcp_tokens`,
reused): a regular file owned by shellgate's user (or root) and closed to group
and others (``chmod 600``), at least 16 token characters, no token twice, at
least one token. A token is never kept, logged or quoted in an error: only its
SHA-256 digest is held, and a presented token is compared against every digest
with :func:`hmac.compare_digest`, all of them every time.

The person is who the console says answered an approval: it goes into the
approval row and the audit record as written here.
"""

from __future__ import annotations

import hmac
from pathlib import Path

from shellgate.errors import ConfigError
from shellgate.mcp_tokens import (
    _NAME,
    MAX_NAME_CHARS,
    NAME_CHARS,
    _check_token,
    _digest,
    _read_private,
)


class LoginTokens:
    """SHA-256 digests of the valid console tokens, each with its person."""

    def __init__(self, entries: list[tuple[bytes, str]], source: Path) -> None:
        self._entries = tuple(entries)
        self.source = source

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def people(self) -> frozenset[str]:
        return frozenset(person for _digest, person in self._entries)

    def lookup(self, token: str) -> str | None:
        """The person ``token`` belongs to, or ``None``; constant time over the table."""
        digest = _digest(token)
        found: str | None = None
        for known, person in self._entries:  # no early exit: every digest, every time
            if hmac.compare_digest(known, digest):
                found = person
        return found


def load_login_tokens(path: Path) -> LoginTokens:
    """Read and check the tokens file; :class:`ConfigError` naming the line if it is bad."""
    text = _read_private(path)
    entries: list[tuple[bytes, str]] = []
    first_seen: dict[bytes, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        fields = line.split()
        if len(fields) != 2:
            raise ConfigError(
                f"{where}: expected 'TOKEN PERSON', found {len(fields)} field"
                f"{'' if len(fields) == 1 else 's'}",
                hint="one login a line: the token, then the person it belongs to (docs/console.md)",
            )
        token, person = fields
        _check_token(token, where)
        if len(person) > MAX_NAME_CHARS or not _NAME.fullmatch(person):
            shown = person if len(person) <= 40 else person[:40] + "…"
            raise ConfigError(
                f"{where}: invalid person {shown!r}",
                hint=f"a person is at most {MAX_NAME_CHARS} {NAME_CHARS}",
            )
        digest = _digest(token)
        if digest in first_seen:
            raise ConfigError(
                f"{where}: the same token as line {first_seen[digest]}",
                hint="every token must be unique: one token names one person",
            )
        first_seen[digest] = number
        entries.append((digest, person))
    if not entries:
        raise ConfigError(
            f"{path}: no tokens (every line is blank or a comment), so nobody could log in",
            hint="add a line 'TOKEN PERSON'; make a token with: openssl rand -hex 32",
        )
    return LoginTokens(entries, path)
