"""The queue approver inside a gate: approve runs, deny/timeout/cancel/unreachable refuse."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shellgate.approval import make_approver
from shellgate.approval.queue import QueueApprover
from shellgate.errors import StoreError
from shellgate.gate import Gate
from shellgate.store.approvals import ApprovalQueue, NotPending
from shellgate.store.db import Database
from tests.approval_queue.queue_helpers import answer, args, queue_config, records, wait_pending


async def _answer_later(store: str, word: str, person: str, message: str = "") -> str:
    rows = await asyncio.to_thread(wait_pending, store)
    await asyncio.to_thread(answer, store, rows[0].id, word, person, message)
    return rows[0].id


async def test_approved_call_runs_and_the_record_names_the_person(
    tmp_path: Path, store_url: str
) -> None:
    cfg = queue_config(tmp_path, store_url)
    async with Gate(cfg) as gate:
        assert isinstance(gate.approver, QueueApprover)
        call = asyncio.ensure_future(gate.call("bash", args("touch made", description="d")))
        approval_id = await _answer_later(store_url, "approve", "alice@example.com", "ok, once")
        result = await call
    assert not result.is_error, result.text
    assert (tmp_path / "ws" / "made").exists()
    (approval,) = records(tmp_path, "approval")
    assert approval["approver"] == "queue:alice@example.com"
    assert approval["answer"] == "allow_once"
    assert approval["message"] == "ok, once"
    assert approval["question"].startswith("Allow this command? `touch made`")
    with Database(store_url) as db:
        row = ApprovalQueue(db).get(approval_id)
    assert row is not None
    assert row.call_id == approval["call_id"]  # the row and the records join
    assert (row.status, row.subject, row.command, row.description) == (
        "approved", "agent", "touch made", "d")
    assert row.reason.startswith("touching files needs a person")
    assert row.rule is not None
    assert row.rule.endswith("policy.csv:3")
    assert row.workdir == str(tmp_path / "ws")


async def test_denied_call_does_not_run_and_the_model_reads_the_message(
    tmp_path: Path, store_url: str
) -> None:
    async with Gate(queue_config(tmp_path, store_url)) as gate:
        call = asyncio.ensure_future(gate.call("bash", args("touch nope")))
        await _answer_later(store_url, "deny", "bob", "use the build dir instead")
        result = await call
    assert result.is_error
    assert result.outcome == "not approved"
    assert "queue:bob: use the build dir instead" in result.text
    assert not (tmp_path / "ws" / "nope").exists()
    (approval,) = records(tmp_path, "approval")
    assert (approval["answer"], approval["approver"], approval["message"]) == (
        "deny", "queue:bob", "use the build dir instead")


async def test_timeout_denies_and_a_later_answer_is_refused(
    tmp_path: Path, store_url: str
) -> None:
    async with Gate(queue_config(tmp_path, store_url, timeout_ms=1500)) as gate:
        started = time.monotonic()
        result = await gate.call("bash", args("touch late"))
        took = time.monotonic() - started
    assert result.is_error
    assert "nobody answered queued approval" in result.text
    assert took < 15
    assert not (tmp_path / "ws" / "late").exists()
    with Database(store_url) as db:
        (row,) = ApprovalQueue(db).recent()
        assert row.status == "expired"
        with pytest.raises(NotPending, match="expired"):
            ApprovalQueue(db).answer(row.id, "approve", person="alice")
    (approval,) = records(tmp_path, "approval")
    assert (approval["answer"], approval["approver"]) == ("deny", "queue")


async def test_waiting_does_not_block_the_gate(tmp_path: Path, store_url: str) -> None:
    async with Gate(queue_config(tmp_path, store_url)) as gate:
        waiting = asyncio.ensure_future(gate.call("bash", args("touch slow")))
        await asyncio.to_thread(wait_pending, store_url)
        # The loop keeps turning: other calls run to completion meanwhile.
        lags: list[float] = []
        for _ in range(5):
            before = time.monotonic()
            await asyncio.sleep(0.05)
            lags.append(time.monotonic() - before - 0.05)
        other = await gate.call("bash", args("echo meanwhile"))
        assert "meanwhile" in other.text
        bg = await gate.call("bash", args("sleep 0.1; echo bg", run_in_background=True))
        task_id = bg.text.split()[-1].strip(".")
        assert not waiting.done()
        assert max(lags) < 0.5
        out = await gate.call("bash_output", {"task_id": task_id})
        assert not out.is_error
        (row,) = await asyncio.to_thread(wait_pending, store_url)
        await asyncio.to_thread(answer, store_url, row.id, "approve", "alice")
        assert not (await waiting).is_error
    assert (tmp_path / "ws" / "slow").exists()


async def test_cancelled_call_expires_its_row(tmp_path: Path, store_url: str) -> None:
    async with Gate(queue_config(tmp_path, store_url)) as gate:
        call = asyncio.ensure_future(gate.call("bash", args("touch gone")))
        (row,) = await asyncio.to_thread(wait_pending, store_url)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    with Database(store_url) as db:
        got = ApprovalQueue(db).get(row.id)
        assert got is not None
        assert got.status == "expired"
        with pytest.raises(NotPending):
            ApprovalQueue(db).answer(row.id, "approve", person="alice")
    assert not (tmp_path / "ws" / "gone").exists()


async def test_aborted_call_withdraws_its_row(tmp_path: Path, store_url: str) -> None:
    abort = asyncio.Event()
    async with Gate(queue_config(tmp_path, store_url)) as gate:
        call = asyncio.ensure_future(gate.call("bash", args("touch gone"), abort=abort))
        (row,) = await asyncio.to_thread(wait_pending, store_url)
        abort.set()
        result = await call
    assert (result.is_error, result.outcome) == (True, "aborted")
    with Database(store_url) as db:
        assert ApprovalQueue(db).get(row.id).status == "expired"  # type: ignore[union-attr]
    approval = records(tmp_path, "approval")[0]
    assert approval["message"] == "tool call aborted while waiting for approval"
    assert records(tmp_path, "result")[0]["outcome"] == "aborted"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_unreachable_store_denies_naming_it(tmp_path: Path, kind: str) -> None:
    if kind == "sqlite":
        (tmp_path / "dir.db").mkdir()
        store = f"sqlite://{tmp_path / 'dir.db'}"
        named = str(tmp_path / "dir.db")
    else:
        store = "postgresql://sg:hunter2@127.0.0.1:1/approvals"
        named = "postgresql://sg:***@127.0.0.1:1/approvals"
    async with Gate(queue_config(tmp_path, store)) as gate:
        result = await gate.call("bash", args("touch x"))
    assert result.is_error
    assert "approval queue store is unreachable" in result.text
    assert named in result.text
    assert "hunter2" not in result.text
    assert not (tmp_path / "ws" / "x").exists()
    (approval,) = records(tmp_path, "approval")
    assert (approval["answer"], approval["approver"]) == ("deny", "queue")


async def test_store_lost_while_waiting_denies(tmp_path: Path, pg_cluster: object) -> None:
    store: str = pg_cluster.create_database()  # type: ignore[attr-defined]
    name = store.rsplit("/", 1)[1]
    admin = store.rsplit("/", 1)[0] + "/postgres"
    async with Gate(queue_config(tmp_path, store)) as gate:
        call = asyncio.ensure_future(gate.call("bash", args("touch x")))
        await asyncio.to_thread(wait_pending, store)
        import psycopg  # the test's own admin connection, beside the seam

        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        result = await asyncio.wait_for(call, 30)
    assert result.is_error
    assert "approval queue store is unreachable" in result.text
    assert not (tmp_path / "ws" / "x").exists()


async def test_session_grants_are_not_given_by_the_queue(tmp_path: Path, store_url: str) -> None:
    cfg = queue_config(tmp_path, store_url, allow_session=True)
    async with Gate(cfg) as gate:
        for name in ("one", "one"):
            call = asyncio.ensure_future(gate.call("bash", args(f"touch {name}")))
            await _answer_later(store_url, "approve", "alice")
            assert not (await call).is_error
    answers = [r["answer"] for r in records(tmp_path, "approval")]
    assert answers == ["allow_once", "allow_once"]  # asked twice: no grant was made


async def test_two_gates_one_queue_each_gets_its_own_answer(
    tmp_path: Path, store_url: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with Gate(queue_config(tmp_path / "a", store_url)) as ga, Gate(
        queue_config(tmp_path / "b", store_url)
    ) as gb:
        ca = asyncio.ensure_future(ga.call("bash", args("touch a")))
        cb = asyncio.ensure_future(gb.call("bash", args("touch b")))
        rows = await asyncio.to_thread(wait_pending, store_url, 2)
        by_command = {r.command: r for r in rows}
        await asyncio.to_thread(answer, store_url, by_command["touch b"].id, "deny", "bob")
        assert (await cb).is_error
        await asyncio.sleep(0.3)  # b's answer must not have reached a's call meanwhile
        assert not ca.done()
        await asyncio.to_thread(answer, store_url, by_command["touch a"].id, "approve", "al")
        assert not (await ca).is_error


def test_make_approver_builds_the_queue(tmp_path: Path) -> None:
    cfg = queue_config(tmp_path, f"sqlite://{tmp_path / 'q.db'}", timeout_ms=1234)
    approver = make_approver(cfg.approval)
    assert isinstance(approver, QueueApprover)
    assert approver.timeout_ms == 1234
    assert not (tmp_path / "q.db").exists()  # nothing is opened until a call asks
    with pytest.raises(StoreError):
        QueueApprover("mysql://x/y", timeout_ms=10)


def test_mcp_server_asks_the_queue_not_the_client(tmp_path: Path) -> None:
    from shellgate.mcp.server import MCPHandlers

    handlers = MCPHandlers(queue_config(tmp_path, f"sqlite://{tmp_path / 'q.db'}"))
    assert isinstance(handlers.approver, QueueApprover)
    assert handlers.asker.client_asks is False
    plain = MCPHandlers(queue_config(tmp_path, "", mode="deny"))
    assert not isinstance(plain.approver, QueueApprover)
    assert plain.asker.client_asks is True
