"""``shellgate policy push|pull|history|rollback``: policy sets in a store (docs/fleet.md).

Exit status: 0 done; 1 refused (the set does not load, its model is not
shellgate's, a ``tests.csv`` row fails, an unknown version or set, a ``DIR``
that is not empty without ``--force``); 2 usage, no store configured, or the
store unreachable. Errors are one ``error: …`` line (maybe a ``hint: …``) on
stderr. ``--store`` defaults to ``[policy] store`` of ``--config`` (or
``$SHELLGATE_CONFIG``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shellgate.cli._common import EXIT_USAGE, ShellgateCommand, fail, warn_rows

if TYPE_CHECKING:
    from shellgate.config import Config
    from shellgate.store.policies import PolicyStore

EXIT_REFUSED = 1

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", metavar="URL",
                 help="The policy store (default: [policy] store of the config)."),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", metavar="FILE", help="Config file.")
]
ReasonOpt = Annotated[
    str, typer.Option("--reason", metavar="TEXT", help="Why (recorded in the history).")
]
AuthorOpt = Annotated[
    str | None,
    typer.Option("--author", metavar="NAME", help="Who (default: the OS user)."),
]


def register(group: typer.Typer) -> None:
    """Add the store commands to the ``policy`` group."""
    group.command("push", cls=ShellgateCommand)(push_command)
    group.command("pull", cls=ShellgateCommand)(pull_command)
    group.command("history", cls=ShellgateCommand)(history_command)
    group.command("rollback", cls=ShellgateCommand)(rollback_command)


def _refused(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_REFUSED)


def _config(config: Path | None) -> Config:
    from shellgate.config import load_config
    from shellgate.errors import ShellgateError

    try:
        return load_config(config)
    except ShellgateError as exc:
        raise fail(str(exc), exc.hint) from None


def _open(store: str | None, cfg: Config | None, *, create: bool = False) -> PolicyStore:
    """The store; a SQLite file that does not exist is created only by ``push``
    (``create``): reading a misspelt path must not make an empty store."""
    from shellgate.errors import StoreError
    from shellgate.store.db import Database, parse_url
    from shellgate.store.policies import PolicyStore

    url = store if store is not None else (cfg.policy.store if cfg is not None else None)
    if not url:
        raise fail("no policy store: give --store URL or set [policy] store in the config",
                   "e.g. --store sqlite:///var/lib/shellgate/policy.db")
    try:
        parsed = parse_url(url)
        if parsed.path is not None and not create and not parsed.path.exists():
            raise StoreError(f"{parsed.display}: no such store file")
        return PolicyStore(Database(parsed))
    except StoreError as exc:
        raise fail(str(exc)) from None


def _usage(what: str, value: str) -> None:
    """A blank reason or author, a bad set name: usage errors (exit 2)."""
    from shellgate.errors import PolicyError
    from shellgate.store.policies import check_meta, check_name

    try:
        check_name(value) if what == "name" else check_meta(what, value)
    except PolicyError as exc:
        raise fail(str(exc)) from None


def _author(author: str | None) -> str:
    if author is not None:
        return author
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        raise fail("cannot tell who you are: give --author NAME") from None


def push_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="The policy set directory.")],
    reason: ReasonOpt,
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="NAME", help="The set's name in the store "
                     "(default: DIR's name)."),
    ] = None,
    author: AuthorOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Store a policy set as a new version, after its tests.csv passes."""
    from shellgate.errors import PolicyError, StoreError

    cfg = _config(config)
    set_name = name if name is not None else directory.resolve().name
    who = _author(author)
    _usage("name", set_name)
    _usage("author", who)
    _usage("reason", reason)
    policies = _open(store, cfg, create=True)
    skipped = sorted(p.name for p in directory.glob("*.test.csv")) if directory.is_dir() else []
    for file in skipped:
        typer.echo(f"warning: {directory / file}: not pushed; a stored set carries tests.csv "
                   "only", err=True)
    from shellgate.policy.loader import read_policy_set

    # Before the push, so a refusal its rows explain comes after what explains it.
    pushing, _ = read_policy_set(directory)  # problems: the push names the first one
    warn_rows([pushing] if pushing is not None else [])
    try:
        version = policies.push(set_name, directory, author=who, reason=reason, config=cfg)
    except PolicyError as exc:
        raise _refused(f"not pushed: {exc}") from None
    except StoreError as exc:
        raise fail(str(exc)) from None
    finally:
        policies.db.close()
    typer.echo(f"pushed {set_name} as version {version} to {policies.display}")


def pull_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The set's name in the store.")],
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Where to write it.")],
    version: Annotated[
        int | None,
        typer.Option("--version", metavar="N", help="The version (default: the newest)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a DIR that is not empty, "
                           "overwriting its model.conf, policy.csv and tests.csv.")
    ] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write a stored set's model.conf, policy.csv and tests.csv into DIR."""
    from shellgate.errors import PolicyError, StoreError

    policies = _open(store, _config(config) if store is None else None)
    try:
        pulled = policies.pull(name, directory, version=version, force=force)
    except PolicyError as exc:
        raise _refused(str(exc)) from None
    except StoreError as exc:
        raise fail(str(exc)) from None
    finally:
        policies.db.close()
    typer.echo(f"wrote {name} of version {pulled} to {directory}")


def history_command(
    name: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="Only versions that changed NAME.")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, help="At most N versions.")
    ] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """The store's versions, newest first: who, when, why, what."""
    from shellgate.errors import PolicyError, StoreError

    policies = _open(store, _config(config) if store is None else None)
    try:
        versions = policies.history(name, limit=limit)
    except PolicyError as exc:
        raise _refused(str(exc)) from None
    except StoreError as exc:
        raise fail(str(exc)) from None
    finally:
        policies.db.close()
    for v in versions:
        if as_json:
            typer.echo(json.dumps({
                "version": v.version, "time": v.time, "author": v.author, "reason": v.reason,
                "action": v.action, "set": v.set_name, "rollback_to": v.rollback_to,
            }, ensure_ascii=True))  # \u escapes: terminal-safe
        else:
            # Author and reason are anyone's text: one version one line, escaped
            # (an ANSI escape or a newline there could repaint or forge lines).
            from shellgate.approval.question import one_line

            what = (f"push {v.set_name}" if v.action == "push"
                    else f"rollback to {v.rollback_to}")
            author, reason = one_line(v.author), one_line(v.reason)
            typer.echo(f"{v.version}\t{v.time}\t{author}\t{what}\t{reason}")


def rollback_command(
    version: Annotated[int, typer.Argument(metavar="VERSION", help="The version to restore.")],
    reason: ReasonOpt,
    author: AuthorOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """A new version whose sets are exactly those of VERSION."""
    from shellgate.errors import PolicyError, StoreError

    who = _author(author)
    _usage("author", who)
    _usage("reason", reason)
    policies = _open(store, _config(config) if store is None else None)
    try:
        new = policies.rollback(version, author=who, reason=reason)
    except PolicyError as exc:
        raise _refused(str(exc)) from None
    except StoreError as exc:
        raise fail(str(exc)) from None
    finally:
        policies.db.close()
    typer.echo(f"rolled back to version {version} as version {new} on {policies.display}")


__all__ = ["EXIT_REFUSED", "EXIT_USAGE", "register"]
