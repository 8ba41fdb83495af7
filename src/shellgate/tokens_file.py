"""Token files, read strictly: the one reader behind ``shellgate mcp --http``'s bearer
tokens (:mod:`shellgate.mcp.tokens`) and ``shellgate serve``'s logins
(:mod:`shellgate.console.tokens`).

Invariants:

* The file is refused unless it is a regular file owned by the user shellgate
  runs as (or root) that nobody else may read or write (``chmod 600``), as ssh
  refuses a private key others can read.
* Every line is checked, and a bad one is refused with its line number: the
  right number of fields; a token of at least :data:`MIN_TOKEN_CHARS` RFC 6750
  ``b64token`` characters; names of :data:`NAME_CHARS`; no token twice. A file
  with no token at all is refused too (it would let nobody in).
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
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from shellgate.errors import ConfigError

T = TypeVar("T")

MIN_TOKEN_CHARS = 16  # shorter is guessable; `openssl rand -hex 32` gives 64
MAX_FILE_BYTES = 1024 * 1024  # bytes; a tokens file is a handful of lines
MAX_NAME_CHARS = 128  # characters of a name (subject, tenant, person)
#: RFC 6750 ``b64token``: what an ``Authorization: Bearer`` header may carry.
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
#: Subjects and tenants: what casbin rules and the audit log read unambiguously.
NAME_CHARS = "letters, digits and . _ - @ +, starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")


class DigestTable(Generic[T]):
    """SHA-256 digests of the valid tokens, each with what it stands for."""

    def __init__(self, entries: list[tuple[bytes, T]], source: Path) -> None:
        self._entries = tuple(entries)
        self.source = source

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> frozenset[T]:
        return frozenset(value for _digest, value in self._entries)

    def lookup(self, token: str) -> T | None:
        """What ``token`` stands for, or ``None``; constant time over the whole table."""
        digest = _digest(token)
        found: T | None = None
        for known, value in self._entries:  # no early exit: every digest, every time
            if hmac.compare_digest(known, digest):
                found = value
        return found


def read_token_file(
    path: Path,
    *,
    names: tuple[str, ...],
    line_hint: str,
    holder: str,
    nobody: str,
    make: Callable[..., T],
) -> list[tuple[bytes, T]]:
    """Every ``TOKEN NAME...`` line of the file (``names`` says what each name is),
    as ``(digest, make(*names))``; :class:`ConfigError` naming the line if one is bad.

    ``line_hint`` explains a line with the wrong number of fields, ``holder`` is
    what one token names (``principal``, ``person``), ``nobody`` what an empty
    file would stop (``connect``, ``log in``).
    """
    usage = " ".join(("TOKEN", *(name.upper() for name in names)))
    text = _read_private(path)
    entries: list[tuple[bytes, T]] = []
    first_seen: dict[bytes, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        fields = line.split()
        if len(fields) != 1 + len(names):
            raise ConfigError(
                f"{where}: expected '{usage}', found {len(fields)} field"
                f"{'' if len(fields) == 1 else 's'}",
                hint=line_hint,
            )
        token, values = fields[0], fields[1:]
        _check_token(token, where)
        for role, name in zip(names, values, strict=True):
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
                hint=f"every token must be unique: one token names one {holder}",
            )
        first_seen[digest] = number
        entries.append((digest, make(*values)))
    if not entries:
        raise ConfigError(
            f"{path}: no tokens (every line is blank or a comment), so nobody could {nobody}",
            hint=f"add a line '{usage}'; make a token with: openssl rand -hex 32",
        )
    return entries


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


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
