"""Metrics from the database stores (SQLite and PostgreSQL): the audit table, the
approval queue, the policy store; and a store that cannot be read."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from shellgate.config import Config
from shellgate.gate import Gate
from shellgate.ops._approvals import LATENCY_BUCKETS_S
from shellgate.ops.metrics import Metrics
from shellgate.store.approvals import ApprovalQueue
from shellgate.store.db import Database
from tests.conftest import wait_until, wait_until_async
from tests.ops.ops_helpers import (
    Approver,
    assert_monotonic,
    gate_config,
    parse,
    policy_dir,
    scrape,
    total,
    value,
)


async def _calls(config: Config, commands: list[str]) -> None:
    async with Gate(config, approver=Approver()) as gate:
        for command in commands:
            await gate.call("bash", {"command": command, "description": "t"})


async def test_decisions_and_results_from_the_audit_store(
    store_url: str, tmp_path: Path, metrics: Metrics
) -> None:
    config = gate_config(tmp_path, audit={"store": store_url})
    await _calls(config, ["echo one", "false", "rm gone", "touch no-thanks"])
    first = scrape(metrics, config)
    assert value(first, "shellgate_store_up", store="audit") == 1
    assert total(first, "shellgate_decisions_total", effect="allow") == 2
    assert total(first, "shellgate_decisions_total", effect="deny") == 1
    assert total(first, "shellgate_decisions_total", effect="ask") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="exit_0") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="exit_nonzero") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="denied") == 1
    assert value(first, "shellgate_results_total", executor="local", outcome="not_approved") == 1
    # another host appends to the same trail: the next scrape reads only what is new
    await _calls(config, ["echo two", "echo three"])
    second = scrape(metrics, config)
    assert_monotonic(first, second)
    assert value(second, "shellgate_results_total", executor="local", outcome="exit_0") == 3
    assert value(second, "shellgate_audit_last_seq", log="default") == total(second, "shellgate_audit_records_total")
    assert scrape(metrics, config) == second  # nothing new: nothing changes


def _submit(queue: ApprovalQueue, n: int, timeout_s: float = 600.0) -> Any:
    return queue.submit(
        subject="agent", tenant="default", session="s", host="h", command=f"touch {n}",
        workdir="/", reason="writes files", rule="policy.csv:5", question="Allow?",
        call_id=f"c{n}", timeout_s=timeout_s,
    )


def test_approval_latency_and_pending(store_url: str, tmp_path: Path, metrics: Metrics) -> None:
    with Database(store_url) as db:
        _approval_latency_and_pending(store_url, tmp_path, metrics, db)


def _approval_latency_and_pending(
    store_url: str, tmp_path: Path, metrics: Metrics, db: Database
) -> None:
    queue = ApprovalQueue(db)
    approved = _submit(queue, 1)
    denied = _submit(queue, 2)
    expiring = _submit(queue, 3, timeout_s=0.05)
    waiting = _submit(queue, 4)
    queue.answer(approved.id, "approve", person="alice")
    queue.answer(denied.id, "deny", person="bob", message="no")
    assert wait_until(lambda: queue.get(expiring.id).status == "expired", timeout_s=10)  # type: ignore[union-attr]
    config = gate_config(tmp_path, audit={"path": ""},
                         approval={"mode": "queue", "store": store_url})
    first = scrape(metrics, config)
    assert value(first, "shellgate_store_up", store="approval") == 1
    for outcome in ("approved", "denied", "expired"):
        assert value(first, "shellgate_approval_latency_seconds_count", outcome=outcome) == 1
        assert value(first, "shellgate_approval_latency_seconds_bucket", outcome=outcome,
                     le="+Inf") == 1
    answered = queue.get(approved.id)
    assert answered is not None
    assert answered.answered_at is not None
    assert value(first, "shellgate_approval_latency_seconds_sum", outcome="approved") == (
        pytest.approx(answered.answered_at - answered.created_at)
    )
    assert value(first, "shellgate_approval_latency_seconds_bucket", outcome="approved",
                 le=repr(LATENCY_BUCKETS_S[0])) == 1  # answered within a second
    assert value(first, "shellgate_approvals_pending") == 1
    assert value(first, "shellgate_approvals_oldest_pending_seconds") >= 0
    again = scrape(metrics, config)  # the same rows: not counted twice
    assert {k: v for k, v in again.items() if "latency" in k[0]} == {
        k: v for k, v in first.items() if "latency" in k[0]
    }
    queue.answer(waiting.id, "approve", person="carol")
    third = scrape(metrics, config)
    assert_monotonic(again, third)
    assert value(third, "shellgate_approval_latency_seconds_count", outcome="approved") == 2
    assert value(third, "shellgate_approvals_pending") == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unreachable_stores_answer_up_0_without_the_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, metrics: Metrics
) -> None:
    url = f"postgresql://sg:s3cr3t-pw@127.0.0.1:{_closed_port()}/fleet"
    config = gate_config(
        tmp_path,
        audit={"store": url},
        approval={"mode": "queue", "store": url},
        policy={"store": url},
    )
    with caplog.at_level(logging.WARNING, logger="shellgate.ops.metrics"):
        body, _ = metrics.render(config)
        metrics.render(config)  # logged once, not on every scrape
    samples = parse(body)
    for store in ("audit", "approval", "policy"):
        assert value(samples, "shellgate_store_up", store=store) == 0
    assert "s3cr3t" not in body.decode()
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 3, logged
    assert all("sg:***@127.0.0.1" in m and "s3cr3t" not in m for m in logged)


def test_a_store_that_goes_away_keeps_its_counts(
    pg_cluster: Any, tmp_path: Path, metrics: Metrics
) -> None:
    import asyncio

    import psycopg

    url = pg_cluster.create_database()
    config = gate_config(tmp_path, audit={"store": url})
    asyncio.run(_calls(config, ["echo one", "echo two"]))
    up = scrape(metrics, config)
    assert value(up, "shellgate_results_total", executor="local", outcome="exit_0") == 2
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    down = scrape(metrics, config)
    assert value(down, "shellgate_store_up", store="audit") == 0
    assert_monotonic(up, down)
    assert value(down, "shellgate_results_total", executor="local", outcome="exit_0") == 2


async def test_policy_version_per_gate(store_url: str, tmp_path: Path, metrics: Metrics) -> None:
    from shellgate.store.policies import PolicyStore

    with Database(store_url) as db:
        await _policy_version_per_gate(store_url, tmp_path, metrics, PolicyStore(db))


async def _policy_version_per_gate(
    store_url: str, tmp_path: Path, metrics: Metrics, store: Any
) -> None:
    first = store.push("main", policy_dir(tmp_path), author="admin", reason="start")
    config = gate_config(tmp_path, policy={"paths": [], "store": store_url,
                                           "reload_poll_ms": 50})
    async with Gate(config, approver=Approver()) as gate:
        labels = {"host": socket.gethostname(), "gate": gate.gate_id}
        samples = scrape(metrics, config)
        assert value(samples, "shellgate_store_up", store="policy") == 1
        assert value(samples, "shellgate_policy_store_version") == first
        assert value(samples, "shellgate_policy_version", **labels) == first
        assert value(samples, "shellgate_policy_host_ok", **labels) == 1
        seen = value(samples, "shellgate_policy_host_last_seen_timestamp_seconds", **labels)
        assert abs(seen - time.time()) < 600
        (tmp_path / "policy" / "policy.csv").write_text("p, agent, *, rm *, deny\n")
        second: int = store.push("main", tmp_path / "policy", author="admin", reason="narrower")

        def follows() -> bool:
            now = scrape(metrics, config)
            return value(now, "shellgate_policy_version", **labels) == second

        assert await wait_until_async(follows, timeout_s=10)
        assert value(scrape(metrics, config), "shellgate_policy_store_version") == second
    closed = scrape(metrics, config)  # a closed gate runs nothing: it leaves the metrics
    assert not [k for k in closed if k[0] == "shellgate_policy_version"]


async def test_every_log_in_the_audit_store_is_counted(
    store_url: str, tmp_path: Path, metrics: Metrics
) -> None:
    ci = gate_config(tmp_path, audit={"store": store_url, "log": "ci-runners"})
    await _calls(ci, ["echo one"])  # a log the console's config does not name
    console = gate_config(tmp_path, audit={"store": store_url})  # log "default"
    await _calls(console, ["echo two", "echo three"])
    samples = scrape(metrics, console)
    assert value(samples, "shellgate_results_total", executor="local", outcome="exit_0") == 3
    assert value(samples, "shellgate_audit_last_seq", log="ci-runners") == 2
    assert value(samples, "shellgate_audit_last_seq", log="default") == 4
