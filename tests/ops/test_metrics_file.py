"""Metrics from a real audit file written by real gate calls: counts, cursors, rotation."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from shellgate.config import Config
from shellgate.gate import Gate
from shellgate.ops import _audit_source
from shellgate.ops.metrics import Metrics, render_metrics
from tests.ops.ops_helpers import (
    Approver,
    assert_monotonic,
    gate_config,
    parse,
    scrape,
    total,
    value,
)

EchoCall = dict[str, Any]

#: (arguments, outcome label) — one of each way a decided call can end.
CALLS: list[tuple[EchoCall, str]] = [
    ({"command": "echo one"}, "exit_0"),
    ({"command": "echo two"}, "exit_0"),
    ({"command": "false"}, "exit_nonzero"),
    ({"command": "rm gone"}, "denied"),
    ({"command": "touch made"}, "exit_0"),
    ({"command": "touch no-thanks"}, "not_approved"),
    ({"command": "sleep 5", "timeoutMs": 200}, "timed_out"),
    ({"command": "kill -KILL $BASHPID"}, "signal"),  # $BASHPID: value unknown
]


@pytest.fixture
async def gate_for(tmp_path: Path) -> AsyncIterator[Callable[[Config], Any]]:
    gates: list[Gate] = []

    async def factory(config: Config) -> Gate:
        gate = Gate(config, approver=Approver())
        await gate.open()
        gates.append(gate)
        return gate

    yield factory
    for gate in gates:
        await gate.aclose()


async def echo(gate: Gate, n: int = 1) -> None:
    for i in range(n):
        result = await gate.call("bash", {"command": f"echo {i}", "description": "t"})
        assert result.outcome == "ok"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_counts_match_the_calls_made(tmp_path: Path, gate_for: Any) -> None:
    config = gate_config(tmp_path)
    gate = await gate_for(config)
    for arguments, _ in CALLS:
        await gate.call("bash", {**arguments, "description": "t"})
    await gate.call("bash", {"command": 5})  # refused before any decision: no decision
    samples = scrape(Metrics(), config)

    assert value(samples, "shellgate_store_up", store="audit") == 1
    assert total(samples, "shellgate_decisions_total") == len(CALLS)
    assert total(samples, "shellgate_decisions_total", effect="allow") == 4
    assert total(samples, "shellgate_decisions_total", effect="deny") == 1
    assert total(samples, "shellgate_decisions_total", effect="ask") == 3
    assert total(samples, "shellgate_decisions_total", layer="casbin") == 7
    assert value(samples, "shellgate_decisions_total", effect="ask", layer="command-analysis", rule="") == 1
    rules = {dict(labels)["rule"] for (name, labels) in samples if name == "shellgate_decisions_total"}
    by_line = {rule.rsplit(":", 1)[1]: rule for rule in rules if rule}
    assert set(by_line) == {"1", "2", "3", "4", "5"}
    assert value(samples, "shellgate_decisions_total", effect="ask", layer="casbin",
                 rule=by_line["5"]) == 2
    for outcome in {o for _, o in CALLS}:
        want = sum(1 for _, o in CALLS if o == outcome)
        got = value(samples, "shellgate_results_total", executor="local", outcome=outcome)
        assert got == want, outcome
    assert total(samples, "shellgate_results_total") == len(CALLS)
    assert value(samples, "shellgate_approval_answers_total", answer="allow_once") == 2
    assert value(samples, "shellgate_approval_answers_total", answer="deny") == 1
    assert value(samples, "shellgate_audit_records_total", type="invalid") == 1
    assert value(samples, "shellgate_audit_last_seq", log="audit.jsonl") == len(records(config.audit.path))  # type: ignore[arg-type]
    # no free text in a label: commands, subjects' text, call ids stay in the audit trail
    body = Metrics().render(config)[0].decode()
    for record in records(config.audit.path):  # type: ignore[arg-type]
        assert record["call_id"] not in body if "call_id" in record else True
    for needle in ("echo one", "no-thanks", "kill -KILL", "removes files"):
        assert needle not in body


async def test_render_metrics_keeps_its_cursor_between_scrapes(
    tmp_path: Path, gate_for: Any
) -> None:
    config = gate_config(tmp_path, audit={"path": str(tmp_path / "own.jsonl")})
    gate = await gate_for(config)
    await echo(gate, 2)
    first = parse(render_metrics(config)[0])
    assert value(first, "shellgate_results_total", executor="local", outcome="exit_0") == 2
    await echo(gate, 3)
    second = parse(render_metrics(config)[0])
    assert value(second, "shellgate_results_total", executor="local", outcome="exit_0") == 5
    assert_monotonic(first, second)


async def test_rotation_is_followed_without_losing_or_double_counting(
    tmp_path: Path, gate_for: Any
) -> None:
    config = gate_config(tmp_path)
    path = config.audit.path
    assert path is not None
    gate = await gate_for(config)
    metrics = Metrics()
    await echo(gate, 2)
    history = [scrape(metrics, config)]
    os.rename(path, path.with_name("audit.jsonl.1"))  # logrotate's rename...
    await echo(gate)  # ...a record the writer still puts in the renamed file
    history.append(scrape(metrics, config))
    assert value(history[-1], "shellgate_results_total", executor="local", outcome="exit_0") == 3
    assert value(history[-1], "shellgate_store_up", store="audit") == 1
    gate.reload()  # ...then the signal: a new file at the path
    history.append(scrape(metrics, config))
    await echo(gate, 2)
    history.append(scrape(metrics, config))
    assert records(path)[0]["type"] == "link"
    last = history[-1]
    assert value(last, "shellgate_results_total", executor="local", outcome="exit_0") == 5
    assert value(last, "shellgate_decisions_total", effect="allow", layer="casbin",
                 rule=next(dict(ls)["rule"] for (n, ls) in last
                           if n == "shellgate_decisions_total")) == 5
    assert value(last, "shellgate_audit_records_total", type="link") == 1
    for before, after in itertools.pairwise(history):
        assert_monotonic(before, after)
    # a fresh reader of the current file counts only what is in it (a counter reset)
    fresh = scrape(Metrics(), config)
    assert value(fresh, "shellgate_results_total", executor="local", outcome="exit_0") == 2


@pytest.mark.parametrize("calls_after", [1, 12], ids=["shorter", "longer-than-before"])
async def test_copytruncate_counts_each_record_once(
    tmp_path: Path, gate_for: Any, calls_after: int
) -> None:
    config = gate_config(tmp_path)
    path = config.audit.path
    assert path is not None
    gate = await gate_for(config)
    metrics = Metrics()
    await echo(gate, 3)
    before = scrape(metrics, config)
    shutil.copy(path, path.with_name("audit.jsonl.1"))
    os.truncate(path, 0)
    await echo(gate, calls_after)  # the writer links the truncated file and goes on
    assert records(path)[0]["reason"] == "truncated"
    after = scrape(metrics, config)
    assert_monotonic(before, after)
    assert value(after, "shellgate_results_total", executor="local",
                 outcome="exit_0") == 3 + calls_after
    assert value(after, "shellgate_audit_unreadable_lines_total") == 0


async def test_a_replaced_copy_is_not_counted_again(tmp_path: Path, gate_for: Any) -> None:
    config = gate_config(tmp_path)
    path = config.audit.path
    assert path is not None
    gate = await gate_for(config)
    metrics = Metrics()
    await echo(gate, 3)
    before = scrape(metrics, config)
    copy = path.with_name("restored")
    shutil.copy(path, copy)
    os.replace(copy, path)  # same records, another inode
    gate.reload()  # the writer continues the chain in the file now at the path
    await echo(gate)
    after = scrape(metrics, config)
    assert_monotonic(before, after)
    assert value(after, "shellgate_results_total", executor="local", outcome="exit_0") == 4


async def test_a_new_chain_adds_to_the_counts(tmp_path: Path, gate_for: Any) -> None:
    config = gate_config(tmp_path)
    path = config.audit.path
    assert path is not None
    first = await gate_for(config)
    metrics = Metrics()
    await echo(first, 3)
    before = scrape(metrics, config)
    await first.aclose()
    path.unlink()
    second = await gate_for(config)  # starts over at genesis: seq 1 again
    await echo(second, 2)
    assert records(path)[0]["seq"] == 1
    after = scrape(metrics, config)
    assert_monotonic(before, after)
    assert value(after, "shellgate_results_total", executor="local", outcome="exit_0") == 5


async def test_a_partial_line_waits_and_a_bad_line_is_skipped(
    tmp_path: Path, gate_for: Any
) -> None:
    config = gate_config(tmp_path)
    path = config.audit.path
    assert path is not None
    gate = await gate_for(config)
    await echo(gate, 2)
    await gate.aclose()
    whole = path.read_bytes()
    last = whole[: -1].rsplit(b"\n", 1)[1] + b"\n"  # the last record (a result)
    path.write_bytes(whole[: -len(last)] + last[:40])  # as if caught mid-write
    metrics = Metrics()
    partial = scrape(metrics, config)
    assert value(partial, "shellgate_results_total", executor="local", outcome="exit_0") == 1
    with path.open("ab") as f:
        f.write(last[40:] + b"this is not a record\n")
    done = scrape(metrics, config)
    assert value(done, "shellgate_results_total", executor="local", outcome="exit_0") == 2
    assert value(done, "shellgate_audit_unreadable_lines_total") == 1


async def test_a_large_backlog_is_caught_up_over_scrapes(
    tmp_path: Path, gate_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = gate_config(tmp_path)
    gate = await gate_for(config)
    await echo(gate, 6)  # 12 records
    monkeypatch.setattr(_audit_source, "MAX_RECORDS_PER_SCRAPE", 5)
    metrics = Metrics()
    seen = [total(scrape(metrics, config), "shellgate_audit_last_seq") for _ in range(4)]
    assert seen == [5, 10, 12, 12]
    done = scrape(metrics, config)
    assert value(done, "shellgate_results_total", executor="local", outcome="exit_0") == 6
    assert total(done, "shellgate_audit_records_total") == 12


def test_a_missing_file_is_down_and_the_scrape_still_answers(tmp_path: Path) -> None:
    config = gate_config(tmp_path, audit={"path": str(tmp_path / "nowhere" / "audit.jsonl")})
    samples = scrape(Metrics(), config)
    assert value(samples, "shellgate_store_up", store="audit") == 0
    assert total(samples, "shellgate_decisions_total") == 0


def test_no_audit_no_audit_metrics(tmp_path: Path) -> None:
    config = gate_config(tmp_path, audit={"path": ""})
    samples = scrape(Metrics(), config)
    assert not [k for k in samples if k[0].startswith("shellgate_audit")]
    assert ("shellgate_store_up", frozenset({("store", "audit")})) not in samples


def test_a_missing_sqlite_store_is_down_and_not_created(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'typo.db'}"
    config = gate_config(tmp_path, audit={"path": ""}, policy={"store": url})
    metrics = Metrics()
    samples = scrape(metrics, config)
    metrics.close()
    assert value(samples, "shellgate_store_up", store="policy") == 0
    assert not (tmp_path / "typo.db").exists()


def test_a_sqlite_queue_nobody_has_used_yet_is_empty_not_down(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The README's tour: `shellgate serve` over a queue no gate has written yet. The
    first question creates the file, so until then there is nothing pending, and
    nothing to warn about; the file is still not created by reading."""
    import logging

    from shellgate.store.approvals import ApprovalQueue
    from shellgate.store.db import Database

    queue_db = tmp_path / "queue.db"
    config = gate_config(tmp_path, audit={"path": ""},
                         approval={"mode": "queue", "store": f"sqlite://{queue_db}"})
    metrics = Metrics()
    with caplog.at_level(logging.INFO, logger="shellgate.ops.metrics"):
        empty = scrape(metrics, config)
        scrape(metrics, config)
    assert value(empty, "shellgate_store_up", store="approval") == 1
    assert value(empty, "shellgate_approvals_pending") == 0
    assert not queue_db.exists()
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert said == [("INFO", f"metrics: the approval queue sqlite://{queue_db} has no file "
                              "yet (nothing has been queued): read as empty")]
    with Database(f"sqlite://{queue_db}") as db:  # a gate asks: the file is made
        ApprovalQueue(db).submit(
            subject="agent", tenant="default", session="s", host="h", command="touch x",
            workdir="/", reason="writes files", rule="policy.csv:5", question="Allow?",
            call_id="c1", timeout_s=600.0,
        )
    asked = scrape(metrics, config)
    metrics.close()
    assert value(asked, "shellgate_store_up", store="approval") == 1
    assert value(asked, "shellgate_approvals_pending") == 1
