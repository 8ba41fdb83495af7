"""``shellgate approvals`` answering a ``shellgate run`` waiting in another process."""

from __future__ import annotations

import getpass
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shellgate.store.approvals import ApprovalQueue
from shellgate.store.db import Database
from tests.approval_queue.queue_helpers import records, write_config
from tests.conftest import wait_until

CLI = [sys.executable, "-m", "shellgate.cli"]


def sg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def start_run(config: Path, command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "run", "--config", str(config), command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def stop(proc: subprocess.Popen[str]) -> None:
    """Never leave the waiting process (or its pipes) behind."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def listed(config: Path, *extra: str) -> list[dict[str, Any]]:
    done = sg("approvals", "list", "--json", "--config", str(config), *extra)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def wait_listed(config: Path, count: int = 1) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def enough() -> bool:
        rows[:] = listed(config)
        return len(rows) >= count

    assert wait_until(enough, 30)
    return rows


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_approve_from_another_process_runs_the_call(tmp_path: Path, store_url: str) -> None:
    config = write_config(tmp_path, store_url)
    proc = start_run(config, "touch approved.txt")
    try:
        (row,) = wait_listed(config)
        assert row["command"] == "touch approved.txt"
        assert row["status"] == "pending"
        assert row["subject"] == "agent"
        assert row["rule"].endswith("policy.csv:3")
        assert row["reason"].startswith("touching files needs a person")
        assert 0 < row["expires_in_s"] <= 60
        assert set(row) >= {
            "id", "status", "created_at", "expires_at", "answered_at", "person", "message",
            "subject", "tenant", "session", "host", "pid", "command", "workdir",
            "description", "escalation", "reason", "rule", "question", "call_id", "age_s",
            "expires_in_s",
        }
        assert row["pid"] == proc.pid or row["pid"] > 0
        done = sg("approvals", "approve", row["id"], "--message", "go ahead", "--config", str(config))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"approved {row['id']} as {getpass.getuser()}:")
        status, out, err = finish(proc)
    finally:
        stop(proc)
    assert status == 0, (out, err)
    assert (tmp_path / "ws" / "approved.txt").exists()
    (approval,) = records(tmp_path, "approval")
    assert approval["approver"] == f"queue:{getpass.getuser()}"
    assert approval["message"] == "go ahead"
    assert approval["call_id"] == row["call_id"]
    assert listed(config) == []
    (answered,) = listed(config, "--all")
    assert (answered["status"], answered["person"]) == ("approved", getpass.getuser())
    again = sg("approvals", "deny", row["id"], "--config", str(config))
    assert again.returncode == 1
    assert again.stderr.startswith(f"error: approval {row['id']} was already approved by ")


def test_deny_does_not_run_and_the_model_reads_the_message(tmp_path: Path, store_url: str) -> None:
    config = write_config(tmp_path, store_url)
    proc = start_run(config, "touch denied.txt")
    try:
        (row,) = wait_listed(config)
        done = sg("approvals", "deny", row["id"], "-m", "write it under build/ instead",
                  "--as", "Alice Example", "--store", store_url)
        assert done.returncode == 0, done.stderr
        status, _, err = finish(proc)
    finally:
        stop(proc)
    assert status == 126
    person = f"{getpass.getuser()} as Alice Example"
    assert f"not approved (queue:{person}: write it under build/ instead)" in err
    assert not (tmp_path / "ws" / "denied.txt").exists()
    (approval,) = records(tmp_path, "approval")
    assert (approval["answer"], approval["approver"]) == ("deny", f"queue:{person}")


def test_timed_out_call_is_denied_and_a_later_approve_exits_1(
    tmp_path: Path, store_url: str
) -> None:
    config = write_config(tmp_path, store_url, timeout_ms=1500)
    status, _, err = finish(start_run(config, "touch late.txt"))
    assert status == 126
    assert "nobody answered queued approval" in err
    (row,) = listed(config, "--all")
    assert row["status"] == "expired"
    assert row["expires_in_s"] is None
    late = sg("approvals", "approve", row["id"], "--config", str(config))
    assert late.returncode == 1
    assert late.stderr == f"error: approval {row['id']} has expired\n"
    assert not (tmp_path / "ws" / "late.txt").exists()


def test_sigterm_to_the_waiting_run_expires_its_row(tmp_path: Path, store_url: str) -> None:
    config = write_config(tmp_path, store_url)
    proc = start_run(config, "touch never.txt")
    try:
        (row,) = wait_listed(config)
        proc.send_signal(signal.SIGTERM)
        status, _, _ = finish(proc)
    finally:
        stop(proc)
    assert status == 143
    (gone,) = listed(config, "--all")
    assert (gone["id"], gone["status"]) == (row["id"], "expired")
    late = sg("approvals", "approve", row["id"], "--store", store_url)
    assert late.returncode == 1
    assert not (tmp_path / "ws" / "never.txt").exists()


def test_two_racing_answers_one_wins(tmp_path: Path, store_url: str) -> None:
    config = write_config(tmp_path, store_url)
    proc = start_run(config, "touch raced.txt")
    try:
        (row,) = wait_listed(config)
        racers = [
            subprocess.Popen([*CLI, "approvals", word, row["id"], "--store", store_url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for word in ("approve", "deny")
        ]
        codes = sorted(p.wait(timeout=60) for p in racers)
        for p in racers:
            p.communicate()
        status, _, _ = finish(proc)
    finally:
        stop(proc)
    assert codes == [0, 1]
    (final,) = listed(config, "--all")
    assert (status == 0) == (final["status"] == "approved")
    assert (tmp_path / "ws" / "raced.txt").exists() == (final["status"] == "approved")


HOSTILE = "touch x\x1b[2J\x1b[1;1Happroved\n\u202egnp.exe\rfake  row"


def test_list_escapes_hostile_text_one_line_per_row(tmp_path: Path, store_url: str) -> None:
    with Database(store_url) as db:
        queue = ApprovalQueue(db)
        for n in range(3):
            queue.submit(
                subject=f"agent\x1b]0;title\x07{n}", tenant="t\n2", session="s\u2066",
                host="h\x1b[A", command=HOSTILE, workdir="/w", reason="why\nnot\x1b[K",
                rule="r\u202e", question="q", call_id="c", timeout_s=60, description="d",
            )
    done = sg("approvals", "list", "--store", store_url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3
    for line in lines:
        assert line.isprintable()
        assert "\\x1b[2J" in line
        assert "\\u202e" in line
        assert "\\n" in line
        assert "\\r" in line or "\\x0d" in line
        assert "why: why\\nnot\\x1b[K" in line
    as_json = sg("approvals", "list", "--json", "--store", store_url)
    assert as_json.stdout.isascii()
    assert all(r["command"] == HOSTILE for r in json.loads(as_json.stdout))


def test_a_real_hostile_command_is_listed_escaped(tmp_path: Path) -> None:
    # Control characters never reach the queue (the input guard denies them);
    # a bidi override and newlines do, in the command and in the reason.
    config = write_config(tmp_path, f"sqlite://{tmp_path / 'q.db'}")
    proc = start_run(config, "touch 'a\u202eb'\ntouch 'c\nd'")
    try:
        wait_listed(config)
        done = sg("approvals", "list", "--config", str(config))
    finally:
        stop(proc)
    (line,) = done.stdout.splitlines()
    assert line.isprintable()
    assert "`touch 'a\\u202eb'\\ntouch 'c\\nd'`" in line
    assert "why: touching files needs a person" in line


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["approvals", "list"], 2, "error: no approval store: give --store URL"),
        (["approvals", "approve", "not an id!", "--store", "sqlite:q.db"], 2,
         "error: malformed approval id 'not an id!'"),
        (["approvals", "approve", "A" * 22, "--store", "sqlite:q.db"], 1,
         f"error: no approval with id '{'A' * 22}'"),
        (["approvals", "deny", "A" * 22, "--as", " ", "--store", "sqlite:q.db"], 2,
         "error: invalid --as"),
        (["approvals", "deny", "A" * 22, "--as", "x\x1b[2J", "--store", "sqlite:q.db"], 2,
         "error: invalid --as"),
        (["approvals", "list", "--store", "mysql://db/x"], 2, "error: store URL: unknown scheme"),
        (["approvals", "list", "--store", "postgresql://u:hunter2@127.0.0.1:1/x"], 2,
         "error: postgresql://u:***@127.0.0.1:1/x: cannot connect"),
        (["approvals", "list", "--limit", "0", "--all", "--store", "sqlite:q.db"], 2, "error: "),
        (["approvals", "frob"], 2, "error: no such command"),
    ],
)
def test_usage_errors_and_exit_codes(
    tmp_path: Path, args: list[str], status: int, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHELLGATE_CONFIG", raising=False)
    done = sg(*args, cwd=tmp_path)
    assert done.returncode == status, done.stderr
    assert done.stderr.startswith(message), done.stderr
    assert "Traceback" not in done.stderr
    assert "hunter2" not in done.stderr


def test_store_from_shellgate_config_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path, f"sqlite://{tmp_path / 'q.db'}")
    monkeypatch.setenv("SHELLGATE_CONFIG", str(config))
    done = sg("approvals", "list")
    assert (done.returncode, done.stdout) == (0, "no pending approvals\n")
    assert (tmp_path / "q.db").exists()
