"""The approval queue table: submit, read, answer (exactly one wins), expire, wait."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from shellgate.errors import StoreError
from shellgate.store.approvals import (
    ID_PATTERN,
    ApprovalQueue,
    NotPending,
    QueuedApproval,
)
from shellgate.store.db import Database


def submit(queue: ApprovalQueue, timeout_s: float = 60.0, **overrides: Any) -> QueuedApproval:
    fields: dict[str, Any] = {
        "subject": "agent",
        "tenant": "acme",
        "session": "s1",
        "host": "ci-7",
        "command": "git push origin main",
        "workdir": "/work",
        "reason": "pushing needs a person's OK",
        "rule": "policy.csv:12",
        "question": "Allow this command? `git push origin main`",
        "call_id": "c0ffee",
        "pid": 4242,
        "description": "publish",
        "escalation": None,
        "timeout_s": timeout_s,
    }
    fields.update(overrides)
    return queue.submit(**fields)


def test_submit_records_who_what_why_and_which_rule(store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        before = time.time()
        row = submit(queue, command="rm -rf 'a b'\n\x1b[2J")
        assert ID_PATTERN.fullmatch(row.id)
        assert len(row.id) >= 22
        assert row.status == "pending"
        assert before - 5 < row.created_at < time.time() + 5
        assert row.expires_at == pytest.approx(row.created_at + 60.0, abs=0.5)
        assert (row.answered_at, row.person, row.message) == (None, None, None)
        assert (row.subject, row.tenant, row.session, row.host, row.pid) == (
            "agent", "acme", "s1", "ci-7", 4242)
        assert row.command == "rm -rf 'a b'\n\x1b[2J"  # exact, stored as given
        assert (row.workdir, row.reason, row.rule, row.call_id) == (
            "/work", "pushing needs a person's OK", "policy.csv:12", "c0ffee")
        assert row.description == "publish"
        assert queue.get(row.id) == row
        assert queue.pending() == [row]
        assert queue.recent() == [row]
        other = submit(queue)
        assert other.id != row.id
        assert [r.id for r in queue.pending()] == [row.id, other.id]  # oldest first
        assert [r.id for r in queue.recent()] == [other.id, row.id]  # newest first
        assert [r.id for r in queue.recent(limit=1)] == [other.id]
        # A second handle on the same store (another process) sees the same rows.
    with Database(store_url) as db2:
        assert ApprovalQueue(db2).get(row.id) == row


def test_asks_made_in_one_clock_tick_keep_their_order(store_url: str) -> None:
    """SQLite's clock ticks in milliseconds, so quick asks share a ``created_at``;
    they still list in the order they were made (random ids must not decide)."""
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        made = [submit(queue, description=f"ask {n}").id for n in range(40)]
        assert [r.id for r in queue.pending()] == made  # oldest first
        assert [r.id for r in queue.recent(limit=40)] == made[::-1]  # newest first


def test_answer_approve_and_deny(store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        a, b = submit(queue), submit(queue)
        approved = queue.answer(a.id, "approve", person="alice")
        assert (approved.status, approved.person, approved.message) == ("approved", "alice", "")
        assert approved.answered_at is not None
        assert approved.answered_at >= a.created_at
        denied = queue.answer(b.id, "deny", person="bob", message="use a branch")
        assert (denied.status, denied.person, denied.message) == ("denied", "bob", "use a branch")
        assert queue.pending() == []
        assert queue.get(a.id) == approved


def test_answering_twice_or_unknown_or_expired_says_which(store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        row = submit(queue)
        queue.answer(row.id, "deny", person="bob")
        with pytest.raises(NotPending, match="already denied by bob") as caught:
            queue.answer(row.id, "approve", person="mallory")
        assert caught.value.status == "denied"
        assert isinstance(caught.value, StoreError)
        assert queue.get(row.id).person == "bob"  # type: ignore[union-attr]
        with pytest.raises(NotPending, match="no approval with id") as unknown:
            queue.answer("A" * 22, "approve", person="alice")
        assert unknown.value.status == "unknown"
        with pytest.raises(NotPending, match="no approval with id") as malformed:
            queue.answer("../../etc' OR 1=1 --", "approve", person="alice")
        assert malformed.value.status == "unknown"
        assert queue.get("x; DROP TABLE sg_approvals") is None
        short = submit(queue, timeout_s=0.2)
        assert ID_PATTERN.fullmatch(short.id)
        time.sleep(0.3)  # past the row's own expiry: that is what this checks
        with pytest.raises(NotPending, match="has expired") as late:
            queue.answer(short.id, "approve", person="alice")
        assert late.value.status == "expired"
        got = queue.get(short.id)
        assert got is not None
        assert (got.status, got.person) == ("expired", None)


def test_bad_answers_are_refused(store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        row = submit(queue)
        with pytest.raises(ValueError, match="person"):
            queue.answer(row.id, "approve", person="  ")
        with pytest.raises(ValueError, match="'approve' or 'deny'"):
            queue.answer(row.id, "allow", person="alice")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="longer than"):
            queue.answer(row.id, "deny", person="alice", message="x" * 5000)
        with pytest.raises(ValueError, match="timeout"):
            submit(queue, timeout_s=0)
        assert queue.get(row.id).status == "pending"  # type: ignore[union-attr]


def test_expire_marks_pending_and_keeps_an_answer_that_won(store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        a, b = submit(queue), submit(queue)
        expired = queue.expire(a.id)
        assert expired is not None
        assert expired.status == "expired"
        with pytest.raises(NotPending, match="expired"):
            queue.answer(a.id, "approve", person="alice")
        queue.answer(b.id, "approve", person="alice")
        kept = queue.expire(b.id)
        assert kept is not None
        assert kept.status == "approved"
        assert queue.expire("Z" * 22) is None


def test_two_racing_answers_exactly_one_wins(store_url: str) -> None:
    with Database(store_url) as db:
        rows = [submit(ApprovalQueue(db)) for _ in range(10)]
    for row in rows:
        results: dict[str, object] = {}
        barrier = threading.Barrier(2)

        def answer(
            person: str,
            word: Any,
            row: QueuedApproval = row,
            barrier: threading.Barrier = barrier,
            results: dict[str, object] = results,
        ) -> None:
            with Database(store_url) as own:  # one connection each, as two processes
                queue = ApprovalQueue(own)
                queue.get(row.id)
                barrier.wait()
                try:
                    results[person] = queue.answer(row.id, word, person=person)
                except NotPending as exc:
                    results[person] = exc

        threads = [
            threading.Thread(target=answer, args=("alice", "approve")),
            threading.Thread(target=answer, args=("bob", "deny")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        won = [r for r in results.values() if isinstance(r, QueuedApproval)]
        lost = [r for r in results.values() if isinstance(r, NotPending)]
        assert (len(won), len(lost)) == (1, 1)
        with Database(store_url) as db:
            final = ApprovalQueue(db).get(row.id)
        assert final == won[0]
        assert lost[0].status == final.status  # the loser is told what the winner did


def test_wait_returns_when_answered_from_elsewhere(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        row = submit(queue)
        read = threading.Event()  # the waiter has read the row as still pending
        real_get = queue.get

        def get(approval_id: str) -> QueuedApproval | None:
            found = real_get(approval_id)
            read.set()
            return found

        monkeypatch.setattr(queue, "get", get)

        def later() -> None:
            with Database(store_url) as other:
                # The answer must come while the waiter waits (PostgreSQL listens before
                # that first read; SQLite reads again), not before it looked.
                assert read.wait(20)
                ApprovalQueue(other).answer(row.id, "approve", person="alice")

        t = threading.Thread(target=later)
        started = time.monotonic()
        t.start()
        got = queue.wait(row.id, 20.0)
        took = time.monotonic() - started
        t.join()
        assert (got.status, got.person) == ("approved", "alice")
        assert took < 5.0
        still = submit(queue)
        assert queue.wait(still.id, 0.2).status == "pending"
        with pytest.raises(NotPending):
            queue.wait("Q" * 22, 0.1)


def test_unreachable_store_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with (
        Database(f"sqlite://{tmp_path / 'dir.db'}") as db,
        pytest.raises(StoreError, match=r"dir\.db"),
    ):
            ApprovalQueue(db).pending()
    with Database("postgresql://nobody:pw@127.0.0.1:1/none") as db:
        with pytest.raises(StoreError, match="cannot connect") as caught:
            submit(ApprovalQueue(db))
        assert "pw" not in str(caught.value)


def test_newer_schema_is_refused(store_url: str) -> None:
    with Database(store_url) as db:
        ApprovalQueue(db).pending()
        with db.transaction() as tx:
            tx.execute("UPDATE sg_schema SET version = 99 WHERE component = 'approvals'")
    with (
        Database(store_url) as db,
        pytest.raises(StoreError, match="newer than this shellgate"),
    ):
            ApprovalQueue(db).pending()


def test_ids_never_read_as_an_option() -> None:
    """A base64url id started with '-' one time in 64: `approvals deny -qW…` failed."""
    from shellgate.store.approvals import new_id, well_formed

    ids = [new_id() for _ in range(5000)]
    assert all(well_formed(i) and not i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)
