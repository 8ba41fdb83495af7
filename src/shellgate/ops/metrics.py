"""Prometheus metrics for the whole fleet, computed from the stores (the console's ``/metrics``).

:func:`render_metrics` answers one scrape: ``(body, content type)`` in the text
exposition format, from a registry of its own (never prometheus-client's global
one). Whatever host made a decision, one console shows it, because the numbers
come from the shared stores, not from this process:

* the audit trail (``[audit] store``, else the ``[audit] path`` file): decisions
  by effect, layer and rule; results by executor and outcome; approval answers;
  records by type. Read incrementally with a cursor kept between scrapes
  (``ops/_audit_source.py`` says how rotation and truncation are handled); the
  counts live in this process, so they start again when it does (a counter
  reset, which Prometheus' ``rate()`` handles);
* the approval queue (``[approval] store``): how long answers took (a histogram
  by outcome), what is pending now;
* the policy store (``[policy] store``): the store's head version and the version
  every gate reports running (``PolicyStore.hosts()``).

A store that cannot be read makes ``shellgate_store_up{store=…}`` 0 and keeps the
last counts (they never go down); the scrape itself still answers. A SQLite
approval queue with no file yet is empty, not unreadable: the first question
creates it. Errors name a
store by its role and its URL with the password hidden, and are logged once per
change, not on every scrape. docs/operations.md lists every metric.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
)

from shellgate.errors import ShellgateError, StoreError
from shellgate.ops._approvals import Latency
from shellgate.ops._audit_source import AuditFileCursor, AuditStoreCursor
from shellgate.ops._tally import MAX_LABEL_CHARS, AuditTally
from shellgate.store.db import Database, parse_url

if TYPE_CHECKING:
    from shellgate.config import Config

logger = logging.getLogger("shellgate.ops.metrics")

MAX_HOSTS = 1000  # (host, gate) series of the policy store
#: A gate silent this long (it died without saying so) leaves the metrics: every
#: restart is a new gate id, and the series must not grow without end.
HOST_FORGOTTEN_AFTER_S = 24 * 3600


class _Families:
    """A collector that yields the families built for one scrape."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def _epoch(value: Any) -> float | None:
    """A timestamp as epoch seconds (stores give floats, or ISO 8601 text)."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _label(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"


class Metrics:
    """The state kept between scrapes: cursors, counts, connections (one lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dbs: dict[str, Database] = {}
        self._audit_key: tuple[str, ...] | None = None
        self._audit_cursor: AuditFileCursor | AuditStoreCursor | None = None
        self._tally = AuditTally()
        self._latency: dict[str, Latency] = {}
        self._problems: dict[str, str] = {}
        self._stores: dict[int, Any] = {}  # PolicyStore by id() of its (kept) Database
        self._announced_empty: set[str] = set()  # approval queues said to have no file yet

    def render(self, config: Config) -> tuple[bytes, str]:
        """One scrape: the exposition text and its content type."""
        with self._lock:
            families = list(self._collect(config))
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Families(families))
        return generate_latest(registry), CONTENT_TYPE_LATEST

    def close(self) -> None:
        with self._lock:
            for db in self._dbs.values():
                db.close()
            self._dbs.clear()
            if isinstance(self._audit_cursor, AuditFileCursor):
                self._audit_cursor.close()

    # -- one scrape ---------------------------------------------------------------------

    def _db(self, url: str) -> Database:
        if url not in self._dbs:
            self._dbs[url] = Database(url)
        return self._dbs[url]

    def _policy_store(self, db: Database) -> Any:
        """One ``PolicyStore`` per connection (making one checks the schema)."""
        from shellgate.store.policies import PolicyStore

        if id(db) not in self._stores:
            self._stores[id(db)] = PolicyStore(db)
        return self._stores[id(db)]

    def _reachable(self, url: str, checked: dict[str, str | None]) -> str | None:
        """None when the store answers (once per URL per scrape), else why not."""
        if url not in checked:
            try:
                parsed = parse_url(url)
                if parsed.path is not None and not parsed.path.is_file():
                    # reading must not create an empty SQLite store at a mistyped path
                    raise StoreError(f"{parsed.display}: no such SQLite file")
                db = self._db(url)
                with db.transaction() as tx:
                    tx.one("SELECT 1")
                checked[url] = None
            except ShellgateError as exc:
                checked[url] = str(exc)
        return checked[url]

    def _queue_not_announced_empty(self, url: str) -> bool:
        """A SQLite approval queue whose file does not exist yet: nobody has asked.

        The first gate that queues a question creates it, so until then the queue
        is empty, not unreadable (up, nothing pending), and said once at INFO. It is
        still not created here: a mistyped path must not become an empty store.
        """
        try:
            parsed = parse_url(url)
        except StoreError:
            return False  # _guard names the problem
        if parsed.path is None or parsed.path.exists():
            self._announced_empty.discard(url)
            return False
        if url not in self._announced_empty:
            self._announced_empty.add(url)
            logger.info(
                "metrics: the approval queue %s has no file yet (nothing has been queued): "
                "read as empty", parsed.display,
            )
        return True

    def _note(self, role: str, problem: str | None) -> None:
        """Log a store's problem when it starts (and its recovery), not every scrape."""
        before = self._problems.get(role)
        if problem == before:
            return
        if problem is None:
            self._problems.pop(role, None)
            logger.warning("metrics: the %s store is readable again", role)
        else:
            self._problems[role] = problem
            logger.warning("metrics: cannot read the %s store: %s", role, problem)

    def _collect(self, config: Config) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "shellgate_store_up", "1 when the store was read in this scrape, else 0.",
            labels=["store"],
        )
        checked: dict[str, str | None] = {}
        roles: list[tuple[str, str | None]] = []
        audit = config.audit
        if audit.store is not None or audit.path is not None:
            roles.append(("audit", self._poll_audit(config, checked)))
        if config.approval.store is not None:
            latency = self._latency.setdefault(config.approval.store, Latency())
            if self._queue_not_announced_empty(config.approval.store):
                latency.pending, latency.oldest_pending_s = 0, 0.0
                roles.append(("approval", None))
            else:
                roles.append(("approval", self._guard(config.approval.store, checked,
                                                      lambda db: latency.poll(db, time.time()))))
            yield from latency.families()
        if config.policy.store is not None:
            policy: list[Metric] = []

            def read_policy(db: Database) -> None:
                policy.extend(_policy(self._policy_store(db)))

            roles.append(("policy", self._guard(config.policy.store, checked, read_policy)))
            yield from policy
        for role, problem in roles:
            self._note(role, problem)
            up.add_metric([role], 0.0 if problem else 1.0)
        yield up
        yield from self._audit_families()

    def _guard(self, url: str, checked: dict[str, str | None], read: Any) -> str | None:
        problem = self._reachable(url, checked)
        if problem is not None:
            return problem
        try:
            read(self._db(url))
        except ShellgateError as exc:
            return str(exc)
        return None

    def _poll_audit(self, config: Config, checked: dict[str, str | None]) -> str | None:
        audit = config.audit
        key = ("store", audit.store) if audit.store else ("file", str(audit.path))
        if key != self._audit_key:  # a new source: new counts (a counter reset)
            if isinstance(self._audit_cursor, AuditFileCursor):
                self._audit_cursor.close()
            self._audit_key, self._tally = key, AuditTally()
            self._audit_cursor = (
                AuditStoreCursor(audit.log) if audit.store else AuditFileCursor(audit.path)  # type: ignore[arg-type]
            )
        cursor = self._audit_cursor
        if isinstance(cursor, AuditStoreCursor):
            assert audit.store is not None
            return self._guard(audit.store, checked,
                               lambda db: self._tally_all(cursor.poll(db)))
        assert cursor is not None
        try:
            self._tally_all(cursor.poll())
        except ShellgateError as exc:
            return str(exc)
        return None

    def _tally_all(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self._tally.add(record)

    def _audit_families(self) -> Iterator[Metric]:
        tally, cursor = self._tally, self._audit_cursor
        if cursor is None:
            return
        decisions = CounterMetricFamily(
            "shellgate_decisions",
            "Decisions on the audit trail, by effect, deciding layer and rule.",
            labels=["effect", "layer", "rule"],
        )
        for (effect, layer, rule), n in sorted(tally.decisions.items()):
            decisions.add_metric([effect, layer, rule], n)
        yield decisions
        results = CounterMetricFamily(
            "shellgate_results",
            "Results of decided calls, by executor and outcome.",
            labels=["executor", "outcome"],
        )
        for (executor, outcome), n in sorted(tally.results.items()):
            results.add_metric([executor, outcome], n)
        yield results
        answers = CounterMetricFamily(
            "shellgate_approval_answers", "Approval answers on the audit trail, by answer.",
            labels=["answer"],
        )
        for (answer,), n in sorted(tally.approvals.items()):
            answers.add_metric([answer], n)
        yield answers
        records = CounterMetricFamily(
            "shellgate_audit_records", "Audit records read, by type.", labels=["type"]
        )
        for (kind,), n in sorted(tally.records.items()):
            records.add_metric([kind], n)
        yield records
        yield CounterMetricFamily(
            "shellgate_audit_unreadable_lines",
            "Audit lines or rows skipped as unreadable (audit verify says why).",
            value=cursor.unreadable,
        )
        heads = GaugeMetricFamily(
            "shellgate_audit_last_seq", "seq of the last audit record read, by log.",
            labels=["log"],
        )
        for log, seq in sorted(cursor.heads().items()):
            heads.add_metric([_label(log)], seq)
        yield heads


def _policy(store: Any) -> list[Metric]:
    """The policy store's families (``store``: a ``PolicyStore``)."""
    head = GaugeMetricFamily(
        "shellgate_policy_store_version", "The policy store's newest version.",
        value=store.head(),
    )
    version = GaugeMetricFamily(
        "shellgate_policy_version", "The policy version each gate reports running.",
        labels=["host", "gate"],
    )
    seen = GaugeMetricFamily(
        "shellgate_policy_host_last_seen_timestamp_seconds",
        "When each gate last reported to the policy store (Unix time).",
        labels=["host", "gate"],
    )
    healthy = GaugeMetricFamily(
        "shellgate_policy_host_ok",
        "1 when the gate reports its policy as good, 0 when it reports a problem "
        "(an unreachable store, no good policy).",
        labels=["host", "gate"],
    )
    now = time.time()
    shown = 0
    for host in store.hosts():
        last_seen = _epoch(host.last_seen)
        if host.status == "closed" or (
            last_seen is not None and now - last_seen > HOST_FORGOTTEN_AFTER_S
        ):
            continue  # a gate that closed (or long gone) runs nothing
        shown += 1
        if shown > MAX_HOSTS:
            break
        labels = [_label(host.host), _label(host.gate)]
        if host.policy_version is not None:  # None: the gate has no good policy
            version.add_metric(labels, float(host.policy_version))
        if last_seen is not None:
            seen.add_metric(labels, last_seen)
        healthy.add_metric(labels, 1.0 if host.status == "ok" else 0.0)
    return [head, version, seen, healthy]


_default = Metrics()


def render_metrics(config: Config) -> tuple[bytes, str]:
    """``/metrics``: one scrape of the fleet's stores as ``(body, content type)``.

    Safe to call from several threads (scrapes are serialised); the cursors and
    counts live in this process between calls.
    """
    return _default.render(config)
