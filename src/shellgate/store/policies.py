"""Policy sets in a database: every change a new store-wide version, with who and why.

The schema is shellgate's own (``docs/fleet.md``); casbin's adapters lose order,
truncate and re-split rows. Tables (all text in ``TEXT`` columns):

* ``sg_policy_versions`` — one row per version: ``version`` (1, 2, …), ``created_at``
  (ISO UTC), ``author``, ``reason``, ``action`` (``push`` | ``rollback``),
  ``set_name`` (the pushed set; NULL for a rollback) and ``rollback_to``.
* ``sg_policy_sets`` — which sets a version holds: ``(version, name)`` with the
  digests of its ``model.conf``, ``policy.csv`` and ``tests.csv``. A version lists
  *every* set in force, so loading version N reads only N's rows.
* ``sg_policy_rows`` — a ``policy.csv`` by digest, one row per line, in the order
  column ``line`` (1, 2, …), each line with its own line ending: the text is
  rebuilt byte for byte, so rule references keep their line numbers.
* ``sg_policy_texts`` — ``model.conf`` and ``tests.csv`` bodies by digest.
* ``sg_hosts`` — one row per gate on this store: the version it runs (see
  :mod:`shellgate.policy.live`).

Contents are deduplicated by SHA-256 digest: pushing one set of ten copies the
other nine by reference. Writes are one transaction that also notifies
``shellgate_policy`` with the new version (PostgreSQL; SQLite readers poll).
Loading and the push checks are in :mod:`shellgate.store.policy_push`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from shellgate.errors import PolicyError, StoreError
from shellgate.store.db import Database, Dialect, Tx, ensure_schema
from shellgate.store.policy_push import StoredSet, checked_set, installed_tester, write_set

if TYPE_CHECKING:
    from shellgate.config import Config
    from shellgate.store.policy_push import SetTester


CHANNEL = "shellgate_policy"
COMPONENT = "policy"
SCHEMA_VERSION = 1
SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
MAX_META = 2000  # characters of an author or a reason

_COMMON = [
    "CREATE TABLE IF NOT EXISTS sg_policy_versions ("
    " version INTEGER PRIMARY KEY, created_at TEXT NOT NULL, author TEXT NOT NULL,"
    " reason TEXT NOT NULL,"
    " action TEXT NOT NULL CHECK (action IN ('push', 'rollback')),"
    " set_name TEXT, rollback_to INTEGER)",
    "CREATE TABLE IF NOT EXISTS sg_policy_sets ("
    " version INTEGER NOT NULL REFERENCES sg_policy_versions (version),"
    " name TEXT NOT NULL, model_digest TEXT NOT NULL, policy_digest TEXT NOT NULL,"
    " tests_digest TEXT NOT NULL, PRIMARY KEY (version, name))",
    "CREATE TABLE IF NOT EXISTS sg_policy_rows ("
    " digest TEXT NOT NULL, line INTEGER NOT NULL, text TEXT NOT NULL,"
    " PRIMARY KEY (digest, line))",
    "CREATE TABLE IF NOT EXISTS sg_policy_texts (digest TEXT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sg_hosts ("
    " gate TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,"
    " policy_version INTEGER, loaded_at TEXT, last_seen TEXT NOT NULL, status TEXT NOT NULL)",
]
DDL: dict[Dialect, list[str]] = {"sqlite": _COMMON, "postgresql": _COMMON}


@dataclass(frozen=True)
class PolicyVersion:
    """One row of the history: a push of one set, or a whole-store rollback."""

    version: int
    time: str  # ISO 8601, UTC
    author: str
    reason: str
    action: Literal["push", "rollback"]
    set_name: str | None  # None for a rollback
    rollback_to: int | None = None


@dataclass(frozen=True)
class HostState:
    """One gate on this store (``sg_hosts``): the version it runs, and how it is."""

    host: str
    pid: int
    gate: str
    policy_version: int | None
    loaded_at: str | None  # ISO UTC: when it loaded policy_version
    last_seen: str  # ISO UTC heartbeat
    status: str  # "ok", or what is wrong ("store unreachable: …")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not SET_NAME.fullmatch(name):
        raise PolicyError(f"set name {name!r}: use letters, digits, '.', '_' and '-' "
                          "(1-100 characters, not starting with '.', '_' or '-')")
    return name


def check_meta(what: str, value: str) -> str:
    if not value.strip():
        raise PolicyError(f"{what} is empty: every change says who and why")
    if len(value) > MAX_META or "\x00" in value:
        raise PolicyError(f"{what}: at most {MAX_META} characters, no NUL")
    return value


class PolicyStore:
    """The policy sets of one store (``docs/fleet.md``); every method is one transaction."""

    def __init__(self, db: Database, *, tester: SetTester | None = None) -> None:
        """``tester`` runs a pushed set's tests.csv (default: the installed one,
        :func:`~shellgate.store.policy_push.installed_tester`, found on first push)."""
        self.db = db
        self.tester = tester
        ensure_schema(db, COMPONENT, SCHEMA_VERSION, DDL)

    @property
    def display(self) -> str:
        return self.db.display

    # -- reading ---------------------------------------------------------------------

    def head(self) -> int:
        """The newest version (0: nothing pushed yet)."""
        with self.db.transaction() as tx:
            return _head(tx)

    def history(self, name: str | None = None, *, limit: int = 50) -> list[PolicyVersion]:
        """The newest ``limit`` versions, newest first; with ``name``, the versions
        about that set: its pushes, and the rollbacks that changed or removed it."""
        if limit < 1:
            raise PolicyError(f"limit {limit}: must be at least 1")
        with self.db.transaction() as tx:
            if name is None:
                rows = tx.execute(f"{_VERSION_SELECT} ORDER BY version DESC LIMIT ?", (limit,))
                return [_version(r) for r in rows]
            check_name(name)
            held = tx.execute(
                "SELECT v.version, v.set_name, s.model_digest, s.policy_digest, s.tests_digest"
                " FROM sg_policy_versions v LEFT JOIN sg_policy_sets s"
                " ON s.version = v.version AND s.name = ? ORDER BY v.version", (name,))
            changed: list[int] = []
            before: tuple[object, ...] = (None, None, None)
            for version, pushed, *digests in held:
                if pushed == name or tuple(digests) != before:
                    changed.append(version)
                before = tuple(digests)
            if not changed:
                raise PolicyError(f"{self.display}: no set {name!r} in any version")
            wanted = changed[-limit:]
            marks = ", ".join("?" for _ in wanted)
            rows = tx.execute(
                f"{_VERSION_SELECT} WHERE version IN ({marks}) ORDER BY version DESC", wanted)
            return [_version(r) for r in rows]

    def sets(self, version: int | None = None) -> dict[str, StoredSet]:
        """Every set of ``version`` (default: the head), by name, sorted by name."""
        with self.db.transaction() as tx:
            version = self._existing(tx, version)
            return _sets(tx, version)

    def versioned_sets(self) -> tuple[int, dict[str, StoredSet]]:
        """The head and its sets, read in one transaction."""
        with self.db.transaction() as tx:
            version = _head(tx)
            return version, (_sets(tx, version) if version else {})

    def _existing(self, tx: Tx, version: int | None) -> int:
        head = _head(tx)
        if version is None:
            if head == 0:
                raise PolicyError(f"{self.display}: no policy pushed yet (shellgate policy push)")
            return head
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= head:
            raise PolicyError(f"{self.display}: unknown version {version!r} "
                              f"(versions are 1..{head})" if head else
                              f"{self.display}: unknown version {version!r} (nothing pushed yet)")
        return version

    # -- writing ---------------------------------------------------------------------

    def push(
        self,
        name: str,
        directory: Path | str,
        *,
        author: str,
        reason: str,
        config: Config | None = None,
    ) -> int:
        """Store the set in ``directory`` as ``name``: a new version, or :class:`PolicyError`
        (nothing written) when it does not load or its ``tests.csv`` fails.

        The tests run as ``shellgate policy test`` runs them, under ``config``'s
        closing default and protected paths (default: a default config).
        """
        check_name(name)
        check_meta("author", author)
        check_meta("reason", reason)
        if self.tester is None:
            self.tester = installed_tester()
        stored = checked_set(name, Path(directory), config, self.tester)
        with self.db.transaction() as tx:
            tx.lock("shellgate-policy")
            head = _head(tx)
            current = _set_digests(tx, head)
            current[name] = _save_set(tx, stored)
            version = _new_version(tx, head + 1, author, reason, "push", name, None, current)
            tx.notify(CHANNEL, str(version))
            return version

    def rollback(self, version: int, *, author: str, reason: str) -> int:
        """A new version whose sets are exactly those of ``version``."""
        check_meta("author", author)
        check_meta("reason", reason)
        with self.db.transaction() as tx:
            tx.lock("shellgate-policy")
            target = self._existing(tx, version)
            head = _head(tx)
            sets = _set_digests(tx, target)
            new = _new_version(tx, head + 1, author, reason, "rollback", None, target, sets)
            tx.notify(CHANNEL, str(new))
            return new

    def pull(
        self, name: str, directory: Path | str, *, version: int | None = None, force: bool = False
    ) -> int:
        """Write set ``name`` of ``version`` (default: head) as model.conf, policy.csv
        and tests.csv into ``directory``; returns the version written. A directory
        that is not empty is refused unless ``force`` (then those three are replaced)."""
        check_name(name)
        with self.db.transaction() as tx:
            version = self._existing(tx, version)
            found = _sets(tx, version, name)
        if name not in found:
            raise PolicyError(f"{self.display}: version {version} has no set {name!r}")
        write_set(found[name], Path(directory), force=force)
        return version

    # -- gates -----------------------------------------------------------------------

    def report(self, state: HostState) -> None:
        """Upsert one gate's row in ``sg_hosts``."""
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO sg_hosts (gate, host, pid, policy_version, loaded_at, last_seen,"
                " status) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gate) DO UPDATE SET"
                " host = excluded.host, pid = excluded.pid,"
                " policy_version = excluded.policy_version, loaded_at = excluded.loaded_at,"
                " last_seen = excluded.last_seen, status = excluded.status",
                (state.gate, state.host, state.pid, state.policy_version, state.loaded_at,
                 state.last_seen, state.status[:1000]))

    def forget(self, gate: str) -> None:
        """Remove a gate's row (a gate closing)."""
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM sg_hosts WHERE gate = ?", (gate,))

    def hosts(self) -> list[HostState]:
        """Every gate's row, by host then gate."""
        with self.db.transaction() as tx:
            rows = tx.execute(
                "SELECT host, pid, gate, policy_version, loaded_at, last_seen, status"
                " FROM sg_hosts ORDER BY host, gate")
        return [HostState(*row) for row in rows]


_VERSION_SELECT = ("SELECT version, created_at, author, reason, action, set_name, rollback_to"
                   " FROM sg_policy_versions")


def _version(row: tuple[object, ...]) -> PolicyVersion:
    version, time, author, reason, action, set_name, rollback_to = row
    if action not in ("push", "rollback"):
        raise StoreError(f"policy version {version}: unknown action {action!r}")
    return PolicyVersion(int(str(version)), str(time), str(author), str(reason),
                         "push" if action == "push" else "rollback",
                         None if set_name is None else str(set_name),
                         None if rollback_to is None else int(str(rollback_to)))


def _head(tx: Tx) -> int:
    row = tx.one("SELECT MAX(version) FROM sg_policy_versions")
    return int(row[0]) if row is not None and row[0] is not None else 0


Digests = tuple[str, str, str]  # model.conf, policy.csv, tests.csv


def _set_digests(tx: Tx, version: int) -> dict[str, Digests]:
    rows = tx.execute("SELECT name, model_digest, policy_digest, tests_digest"
                      " FROM sg_policy_sets WHERE version = ?", (version,))
    return {name: (m, p, t) for name, m, p, t in rows}


def _save_text(tx: Tx, text: str) -> str:
    key = digest(text)
    if tx.one("SELECT 1 FROM sg_policy_texts WHERE digest = ?", (key,)) is None:
        tx.execute("INSERT INTO sg_policy_texts (digest, body) VALUES (?, ?)", (key, text))
    return key


def _save_rows(tx: Tx, text: str) -> str:
    key = digest(text)
    if tx.one("SELECT 1 FROM sg_policy_rows WHERE digest = ? LIMIT 1", (key,)) is None:
        lines = text.splitlines(keepends=True) or [""]
        for number, line in enumerate(lines, start=1):
            tx.execute("INSERT INTO sg_policy_rows (digest, line, text) VALUES (?, ?, ?)",
                       (key, number, line))
    return key


def _save_set(tx: Tx, stored: StoredSet) -> Digests:
    return (_save_text(tx, stored.model_conf), _save_rows(tx, stored.policy_csv),
            _save_text(tx, stored.tests_csv))


def _new_version(
    tx: Tx,
    version: int,
    author: str,
    reason: str,
    action: str,
    set_name: str | None,
    rollback_to: int | None,
    sets: dict[str, Digests],
) -> int:
    tx.execute("INSERT INTO sg_policy_versions (version, created_at, author, reason, action,"
               " set_name, rollback_to) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (version, now_iso(), author, reason, action, set_name, rollback_to))
    for name, (model, policy, tests) in sorted(sets.items()):
        tx.execute("INSERT INTO sg_policy_sets (version, name, model_digest, policy_digest,"
                   " tests_digest) VALUES (?, ?, ?, ?, ?)", (version, name, model, policy, tests))
    return version


def _sets(tx: Tx, version: int, only: str | None = None) -> dict[str, StoredSet]:
    out: dict[str, StoredSet] = {}
    for name, (model, policy, tests) in sorted(_set_digests(tx, version).items()):
        if only is not None and name != only:
            continue
        texts = dict(_rows(tx.execute(
            "SELECT digest, body FROM sg_policy_texts WHERE digest IN (?, ?)", (model, tests))))
        lines = tx.execute("SELECT line, text FROM sg_policy_rows WHERE digest = ? ORDER BY line",
                           (policy,))
        if model not in texts or tests not in texts or not lines:
            raise StoreError(f"policy version {version}, set {name!r}: rows missing from the "
                             "store (damaged?)")
        if [n for n, _ in lines] != list(range(1, len(lines) + 1)):
            raise StoreError(f"policy version {version}, set {name!r}: policy.csv lines "
                             "are not 1..n (damaged store?)")
        policy_csv = "".join(str(text) for _, text in lines)
        if digest(policy_csv) != policy:
            raise StoreError(f"policy version {version}, set {name!r}: policy.csv does not "
                             "match its digest (damaged store?)")
        out[name] = StoredSet(name, policy_csv, texts[tests], texts[model])
    return out


def _rows(rows: Iterable[tuple[object, ...]]) -> Iterable[tuple[str, str]]:
    return ((str(a), str(b)) for a, b in rows)
