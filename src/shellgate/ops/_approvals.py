"""Approval latency from the queue's answered rows, kept between scrapes (``ops/metrics.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from shellgate.store.db import Database

#: Approval latency buckets, seconds: a person answers in seconds to an hour.
LATENCY_BUCKETS_S = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
APPROVAL_OUTCOMES = ("approved", "denied", "expired")
APPROVAL_WINDOW = 1000  # the queue's most recent rows looked at per scrape


class Latency:
    """A histogram of approval latency by outcome, kept between scrapes."""

    def __init__(self) -> None:
        self.buckets = {o: [0] * (len(LATENCY_BUCKETS_S) + 1) for o in APPROVAL_OUTCOMES}
        self.sums = dict.fromkeys(APPROVAL_OUTCOMES, 0.0)
        self.seen: set[str] = set()  # answered ids in the last window (never counted twice)
        self._queue: tuple[Database, Any] | None = None  # made once: it checks the schema
        self.pending = 0
        self.oldest_pending_s = 0.0

    def observe(self, outcome: str, seconds: float) -> None:
        for i, bound in enumerate(LATENCY_BUCKETS_S):
            if seconds <= bound:
                self.buckets[outcome][i] += 1
                break
        else:
            self.buckets[outcome][-1] += 1
        self.sums[outcome] += seconds

    def poll(self, db: Database, now: float) -> None:
        from shellgate.store.approvals import ApprovalQueue

        if self._queue is None or self._queue[0] is not db:
            self._queue = (db, ApprovalQueue(db))
        queue = self._queue[1]
        window: set[str] = set()
        for row in queue.recent(limit=APPROVAL_WINDOW):
            if row.status not in APPROVAL_OUTCOMES:
                continue
            key = str(row.id)
            window.add(key)
            if key in self.seen:
                continue
            end = row.answered_at if row.answered_at is not None else row.expires_at
            if end is None:
                continue
            self.observe(row.status, max(0.0, float(end) - float(row.created_at)))
        # A row leaves the window only for newer rows and never comes back.
        self.seen = window
        pending = queue.pending()
        self.pending = len(pending)
        self.oldest_pending_s = max(
            (max(0.0, now - float(p.created_at)) for p in pending), default=0.0
        )

    def families(self) -> Iterable[Metric]:
        hist = HistogramMetricFamily(
            "shellgate_approval_latency_seconds",
            "Time from an approval's request to its answer (or expiry), by outcome.",
            labels=["outcome"],
        )
        for outcome in APPROVAL_OUTCOMES:
            cumulative, buckets = 0, []
            for bound, n in zip((*LATENCY_BUCKETS_S, float("inf")), self.buckets[outcome],
                                strict=True):
                cumulative += n
                buckets.append((_le(bound), cumulative))
            hist.add_metric([outcome], buckets, self.sums[outcome])
        yield hist
        yield GaugeMetricFamily(
            "shellgate_approvals_pending", "Approvals waiting for a person now.",
            value=self.pending,
        )
        yield GaugeMetricFamily(
            "shellgate_approvals_oldest_pending_seconds",
            "Age of the oldest pending approval (0 when none).",
            value=self.oldest_pending_s,
        )


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)
