"""Bearer tokens for ``shellgate mcp --http``: the admin's file, read strictly.

The file (``[mcp] tokens_file`` or ``--tokens FILE``) holds one token a line::

    # TOKEN                             SUBJECT   TENANT
    3f9c2a7e5b8d41f0a6c9e2b7d4f1a8c3    ci-bot    team-a

The file is read by :func:`shellgate.tokens_file.read_token_file`, whose
invariants hold here: owner-only file, every line checked (three fields, a
strong token, a subject and a tenant of :data:`~shellgate.tokens_file.NAME_CHARS`,
no token twice, at least one token), and only digests kept, compared in
constant time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from shellgate.tokens_file import DigestTable, read_token_file


@dataclass(frozen=True)
class Principal:
    """Who a token speaks for: the subject and tenant its calls are decided and audited as."""

    subject: str
    tenant: str


class TokenTable(DigestTable[Principal]):
    """SHA-256 digests of the valid tokens, each with its principal."""

    @property
    def principals(self) -> frozenset[Principal]:
        return self.values()


def load_tokens(path: Path) -> TokenTable:
    """Read and check the tokens file; :class:`ConfigError` (naming the line) if it is bad."""
    entries = read_token_file(
        path,
        names=("subject", "tenant"),
        line_hint="one token a line: the token, the subject and the tenant it speaks for, "
        "separated by spaces (docs/mcp.md)",
        holder="principal",
        nobody="connect",
        make=Principal,
    )
    return TokenTable(entries, path)


class FileTokenVerifier:
    """The SDK's ``TokenVerifier`` over a :class:`TokenTable` (swapped on SIGHUP).

    The ``AccessToken`` it returns carries the principal (``client_id`` is the
    tenant, ``subject`` the subject: the SDK binds a session to that pair, so a
    session opened with one principal's token answers 404 to another's) and
    never the token itself.
    """

    def __init__(self, table: TokenTable) -> None:
        self.table = table

    async def verify_token(self, token: str) -> AccessToken | None:
        principal = self.table.lookup(token)
        if principal is None:
            return None
        return AccessToken(
            token="",  # withheld: nothing downstream needs it, and nothing may log it
            client_id=principal.tenant,
            subject=principal.subject,
            scopes=[],
        )


def principal_of(access: AccessToken) -> Principal | None:
    """The principal an ``AccessToken`` from :class:`FileTokenVerifier` speaks for."""
    if access.subject is None:
        return None
    return Principal(access.subject, access.client_id)
