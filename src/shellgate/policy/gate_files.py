"""The gate's own fleet files: SQLite store files and login-token files.

The agent's commands run as the gate's OS user, so a store file it could write
is a queue row it could approve, a policy it could push, an audit trail it could
rewrite; a token file it could read is a console login. Every ``sqlite:`` store
named in ``[policy]``, ``[audit]`` or ``[approval]`` (with the ``-wal``, ``-shm``
and ``-journal`` files SQLite keeps beside it, each of which carries committed
rows) and every tokens file (``[console]``, ``[mcp]``) is therefore a protected
path (no write) and a protected read (asked, masked by the sandbox). A config
that names a PostgreSQL store may hold its password: the config file is then a
protected read too.
"""

from __future__ import annotations

import os

from shellgate.config import Config

#: Files SQLite keeps beside a database; each holds committed or in-flight rows.
SQLITE_SIDE_FILES: tuple[str, ...] = ("", "-wal", "-shm", "-journal")


def _store_urls(config: Config) -> list[str]:
    urls = (config.policy.store, config.audit.store, config.approval.store)
    return [u for u in urls if u]


def store_files(config: Config, *, side_files: bool = True) -> list[str]:
    """Every SQLite store file the config names (absolute), with its side files."""
    urls = _store_urls(config)
    if not urls:
        return []  # the hook's fast path imports no store module without a store
    from shellgate.errors import StoreError
    from shellgate.store.db import parse_url

    out: list[str] = []
    for url in urls:
        try:
            parsed = parse_url(url)
        except StoreError:
            continue  # the store itself refuses to open: nothing to protect
        if parsed.dialect == "sqlite" and parsed.path is not None:
            base = os.path.abspath(str(parsed.path))
            suffixes = SQLITE_SIDE_FILES if side_files else ("",)
            out.extend(base + suffix for suffix in suffixes)
    return out


def token_files(config: Config) -> list[str]:
    """The console's and the MCP server's tokens files (absolute), when set."""
    files = (config.console.tokens_file, config.mcp.tokens_file)
    return [os.path.abspath(str(f)) for f in files if f is not None]


def secret_config(config: Config, config_file: str | None = None) -> list[str]:
    """The config file when it names a PostgreSQL store (it may hold the password)."""
    chosen = config_file or (str(config.config_file) if config.config_file else None)
    chosen = chosen or os.environ.get("SHELLGATE_CONFIG")
    if not chosen:
        return []
    if any(not u.strip().lower().startswith("sqlite:") for u in _store_urls(config)):
        return [os.path.abspath(chosen)]
    return []
