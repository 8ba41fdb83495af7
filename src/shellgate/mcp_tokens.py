"""Bearer tokens for ``shellgate mcp --http``: the admin's file, read strictly.

The file (``[mcp] tokens_file`` or ``--tokens FILE``) holds one token a line::

    # TOKEN                             SUBJECT   TENANT
    3f9c2a7e5b8d41f0a6c9e2b7d4f1a8c3    ci-bot    team-a

Invariants:

* The file is refused unless it is a regular file owned by the user shellgate
  runs as (or root) that nobody else may read or write (``chmod 600``), as ssh
  refuses a private key others can read.
* Every line is checked, and a bad one is refused with its line number: three
  fields; a token of at least :data:`MIN_TOKEN_CHARS` RFC 6750 ``b64token``
  characters; a subject and a tenant of :data:`NAME_CHARS`; no token twice.
  A file with no token at all is refused too (it would let nobody in).
* A token itself is never kept, logged or put in an error: only its SHA-256
  digest is held, and a presented token is hashed and compared against every
  digest with :func:`hmac.compare_digest`, all of them every time, so the time
  taken says nothing about which token (if any) matched.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from shellgate.errors import ConfigError

MIN_TOKEN_CHARS = 16  # shorter is guessable; `openssl rand -hex 32` gives 64
MAX_FILE_BYTES = 1024 * 1024  # bytes; a tokens file is a handful of lines
MAX_NAME_CHARS = 128  # characters of a subject or tenant
#: RFC 6750 ``b64token``: what an ``Authorization: Bearer`` header may carry.
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
#: Subjects and tenants: what casbin rules and the audit log read unambiguously.
NAME_CHARS = "letters, digits and . _ - @ +, starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")


@dataclass(frozen=True)
class Principal:
    """Who a token speaks for: the subject and tenant its calls are decided and audited as."""

    subject: str
    tenant: str


class TokenTable:
    """SHA-256 digests of the valid tokens, each with its principal."""

    def __init__(self, entries: list[tuple[bytes, Principal]], source: Path) -> None:
        self._entries = tuple(entries)
        self.source = source

    @property
    def principals(self) -> frozenset[Principal]:
        return frozenset(principal for _digest, principal in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, token: str) -> Principal | None:
        """The principal of ``token``, or ``None``; constant time over the whole table."""
        digest = _digest(token)
        found: Principal | None = None
        for known, principal in self._entries:  # no early exit: every digest, every time
            if hmac.compare_digest(known, digest):
                found = principal
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


def load_tokens(path: Path) -> TokenTable:
    """Read and check the tokens file; :class:`ConfigError` (naming the line) if it is bad."""
    text = _read_private(path)
    entries: list[tuple[bytes, Principal]] = []
    first_seen: dict[bytes, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        fields = line.split()
        if len(fields) != 3:
            raise ConfigError(
                f"{where}: expected 'TOKEN SUBJECT TENANT', found {len(fields)} field"
                f"{'' if len(fields) == 1 else 's'}",
                hint="one token a line: the token, the subject and the tenant it speaks for, "
                "separated by spaces (docs/mcp.md)",
            )
        token, subject, tenant = fields
        _check_token(token, where)
        for role, name in (("subject", subject), ("tenant", tenant)):
            if len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
                shown = name if len(name) <= 40 else name[:40] + "…"
                raise ConfigError(
                    f"{where}: invalid {role} {shown!r}",
                    hint=f"a {role} is at most {MAX_NAME_CHARS} {NAME_CHARS}",
                )
        digest = _digest(token)
        if digest in first_seen:
            raise ConfigError(
                f"{where}: the same token as line {first_seen[digest]}",
                hint="every token must be unique: one token names one principal",
            )
        first_seen[digest] = number
        entries.append((digest, Principal(subject, tenant)))
    if not entries:
        raise ConfigError(
            f"{path}: no tokens (every line is blank or a comment), so nobody could connect",
            hint="add a line 'TOKEN SUBJECT TENANT'; make a token with: openssl rand -hex 32",
        )
    return TokenTable(entries, path)


def _check_token(token: str, where: str) -> None:
    """Refuse a weak or unsendable token without ever quoting it."""
    if not _TOKEN.fullmatch(token):
        raise ConfigError(
            f"{where}: the token holds a character a bearer token cannot carry",
            hint="a token is made of A-Z a-z 0-9 - . _ ~ + / (and = at its end)",
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{where}: the token is too short ({len(token)} characters; at least "
            f"{MIN_TOKEN_CHARS})",
            hint="make a token with: openssl rand -hex 32",
        )


def _read_private(path: Path) -> str:
    """The file's text, refused unless only its owner (shellgate's user or root) can use it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tokens file: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)  # the file opened, not the name: no swap between check and read
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: the tokens file is not a regular file")
        if info.st_uid not in (os.geteuid(), 0):
            raise ConfigError(
                f"{path}: the tokens file is owned by uid {info.st_uid}, not by the user "
                f"shellgate runs as (uid {os.geteuid()}) or root",
                hint=f"chown {os.geteuid()} {path}",
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise ConfigError(
                f"{path}: the tokens file is open to others than its owner (mode {mode:04o})",
                hint=f"chmod 600 {path}",
            )
        if info.st_size > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: the tokens file is over {MAX_FILE_BYTES} bytes")
        data = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tokens file: {exc.strerror}") from exc
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: the tokens file is not UTF-8 text") from None


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
