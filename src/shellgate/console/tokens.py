"""The console's login tokens: ``TOKEN PERSON`` lines in a file only its owner can read.

The file (``[console] tokens_file`` or ``shellgate serve --tokens FILE``)::

    # TOKEN                                                            PERSON
    6f1d0c3e9a...(openssl rand -hex 32)                                alice@example.com

The file checks are those of the MCP bearer tokens (one reader,
:func:`shellgate.tokens_file.read_token_file`): a regular file owned by
shellgate's user (or root) and closed to group and others (``chmod 600``), at
least 16 token characters, no token twice, at least one token. A token is never
kept, logged or quoted in an error: only its SHA-256 digest is held, and a
presented token is compared against every digest with
:func:`hmac.compare_digest`, all of them every time.

The person is who the console says answered an approval: it goes into the
approval row and the audit record as written here.
"""

from __future__ import annotations

from pathlib import Path

from shellgate.tokens_file import DigestTable, read_token_file


class LoginTokens(DigestTable[str]):
    """SHA-256 digests of the valid console tokens, each with its person."""

    @property
    def people(self) -> frozenset[str]:
        return self.values()


def load_login_tokens(path: Path) -> LoginTokens:
    """Read and check the tokens file; :class:`ConfigError` naming the line if it is bad."""
    entries = read_token_file(
        path,
        names=("person",),
        line_hint="one login a line: the token, then the person it belongs to (docs/console.md)",
        holder="person",
        nobody="log in",
        make=str,
    )
    return LoginTokens(entries, path)
