"""Rotation: reopen after a rename, copytruncate, and verifying a series of files."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from shellgate.audit import GENESIS, AuditLog, verify
from shellgate.cli import audit as audit_cli
from shellgate.errors import AuditError


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(log: AuditLog, n: int, tag: str = "r") -> list[str]:
    return [log.append({"type": "result", "call_id": f"{tag}{i}"}) for i in range(n)]


def cli(*args: str) -> tuple[int, str]:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The host CLI (here a local stand-in)."""

    audit_cli.register(app)
    result = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["audit", *args])
    return result.exit_code, result.output


def test_rename_then_reopen_writes_a_linked_new_file(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        old = write(log, 3, "old")
        os.rename(path, rotated)
        log.append({"type": "result", "call_id": "between"})  # still the renamed file
        log.reopen()
        assert path.exists()  # created at once, mode 0600
        assert path.stat().st_mode & 0o777 == 0o600
        write(log, 2, "new")
    assert [r["call_id"] for r in lines(rotated)] == ["old0", "old1", "old2", "between"]
    link, *rest = lines(path)
    assert (link["type"], link["reason"], link["seq"]) == ("link", "reopened", 5)
    assert link["prev"] == lines(rotated)[-1]["hash"] != old[-1]
    assert [r["seq"] for r in rest] == [6, 7]
    series = verify(rotated, path)
    assert (series.ok, series.from_genesis, series.records) == (True, True, 7)


def test_the_new_file_alone_says_it_continues_an_earlier_log(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        last = write(log, 2)[-1]
        os.rename(path, rotated)
        log.reopen()
        write(log, 1)
    alone = verify(path)
    assert alone.ok
    assert not alone.from_genesis
    assert (alone.continues, alone.records) == ((2, last), 2)
    code, out = cli("verify", str(path))
    assert code == audit_cli.EXIT_CONTINUES
    assert "not from genesis" in out
    assert "continues an earlier log" in out
    assert "chain intact (head" not in out


def test_reopen_of_the_same_file_continues_without_a_link(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        write(log, 2)
        log.reopen()
        write(log, 2)
    assert [r["type"] for r in lines(path)] == ["result"] * 4
    assert verify(path).from_genesis


def test_reopen_onto_a_file_another_writer_started_continues_its_chain(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as mine, AuditLog(path) as other:
        write(mine, 2, "a")
        os.rename(path, rotated)
        mine.reopen()
        other.reopen()
        write(other, 1, "b")  # the first to write links the new file
        write(mine, 1, "c")
    assert [r.get("call_id", r["type"]) for r in lines(path)] == ["link", "b0", "c0"]
    assert verify(rotated, path).from_genesis


def test_a_failed_reopen_keeps_writing_to_the_old_file(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        write(log, 1)
        os.rename(path, rotated)
        path.mkdir()  # the path cannot be opened as a log
        with pytest.raises(AuditError, match="audit log"):
            log.reopen()
        write(log, 1, "after")
    assert [r["call_id"] for r in lines(rotated)] == ["r0", "after0"]
    assert verify(rotated).from_genesis


def test_reopen_refuses_a_new_file_that_ends_mid_record(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        write(log, 1)
        os.rename(path, rotated)
        path.write_bytes(b'{"seq":1')
        with pytest.raises(AuditError, match="ends mid-record"):
            log.reopen()
        write(log, 1, "after")
    assert len(lines(rotated)) == 2


def test_reopen_is_a_no_op_when_disabled_and_refused_when_closed(tmp_path: Path) -> None:
    memory = AuditLog(None)
    memory.append({"type": "x"})
    memory.reopen()
    memory.append({"type": "y"})
    log = AuditLog(tmp_path / "audit.jsonl")
    log.close()
    with pytest.raises(AuditError, match="closed"):
        log.reopen()


def test_copytruncate_links_the_truncated_file_to_the_copy(tmp_path: Path) -> None:
    path, copy = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        write(log, 3)
        shutil.copyfile(path, copy)
        os.truncate(path, 0)
        write(log, 2, "after")
    link = lines(path)[0]
    assert (link["type"], link["reason"], link["seq"]) == ("link", "truncated", 4)
    assert link["prev"] == lines(copy)[-1]["hash"]
    series = verify(copy, path)
    assert (series.from_genesis, series.records) == (True, 6)
    code, out = cli("verify", str(copy), str(path))
    assert code == 0
    assert "ok, 6 records, chain intact across the files" in out


def test_records_lost_to_a_copytruncate_race_are_found(tmp_path: Path) -> None:
    path, copy = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        write(log, 2)
        shutil.copyfile(path, copy)
        write(log, 1, "lost")  # written after the copy, before the truncation
        os.truncate(path, 0)
        write(log, 1, "after")
    result = verify(copy, path)
    assert not result.ok
    assert (result.file, result.first_bad, result.records) == (path, 1, 2)
    assert result.reason is not None
    assert "the link does not continue" in result.reason


def test_a_later_file_restarting_at_genesis_is_found(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with AuditLog(first) as log:
        write(log, 2)
    with AuditLog(second) as log:  # a writer that knew no chain: a silent new start
        write(log, 2)
    result = verify(first, second)
    assert not result.ok
    assert (result.file, result.first_bad, result.records) == (second, 1, 2)
    assert result.reason is not None
    assert "starts a new chain at genesis without a link" in result.reason
    code, out = cli("verify", str(first), str(second))
    assert code == audit_cli.EXIT_BAD_RECORD
    assert out.startswith(f"{second}:1: bad record: starts a new chain at genesis")


def test_a_restart_at_genesis_inside_one_file_is_found(tmp_path: Path) -> None:
    path, other = tmp_path / "audit.jsonl", tmp_path / "other.jsonl"
    with AuditLog(path) as log:
        write(log, 2)
    with AuditLog(other) as log:
        write(log, 2)
    with path.open("ab") as out:
        out.write(other.read_bytes())
    result = verify(path)
    assert (result.ok, result.first_bad) == (False, 3)
    assert result.reason is not None
    assert "restarts at genesis" in result.reason
    assert "without a link" in result.reason


def test_files_out_of_order_are_found(tmp_path: Path) -> None:
    path, rotated = tmp_path / "audit.jsonl", tmp_path / "audit.jsonl.1"
    with AuditLog(path) as log:
        write(log, 2)
        os.rename(path, rotated)
        log.reopen()
        write(log, 2)
    result = verify(path, rotated)
    assert (result.ok, result.file, result.first_bad) == (False, rotated, 1)


def test_a_first_file_starting_mid_chain_without_a_link_is_still_a_deletion(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        write(log, 3)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    result = verify(path)
    assert (result.ok, result.first_bad) == (False, 1)
    assert result.reason is not None
    assert "records before it were deleted" in result.reason


def test_empty_files_in_a_series_are_skipped(tmp_path: Path) -> None:
    empty, path = tmp_path / "empty.jsonl", tmp_path / "audit.jsonl"
    empty.touch()
    with AuditLog(path) as log:
        last = write(log, 2)[-1]
    result = verify(empty, path, empty)
    assert (result.from_genesis, result.records, result.last_hash) == (True, 2, last)
    assert verify(empty).last_hash == GENESIS


def test_rotation_under_concurrent_appends_keeps_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    threads_n, per_thread, rotations = 4, 150, 6
    with AuditLog(path) as log:
        done = threading.Event()

        def writer(k: int) -> None:
            for i in range(per_thread):
                log.append({"type": "result", "call_id": f"{k}-{i}"})

        def rotator() -> None:
            for n in range(1, rotations + 1):
                os.rename(path, tmp_path / f"audit.jsonl.{n}")
                log.reopen()
                if done.is_set():
                    return

        workers = [threading.Thread(target=writer, args=(k,)) for k in range(threads_n)]
        for t in workers:
            t.start()
        spinner = threading.Thread(target=rotator)
        spinner.start()
        for t in workers:
            t.join()
        done.set()
        spinner.join()
    files = [*sorted(tmp_path.glob("audit.jsonl.*"), key=lambda p: int(p.suffix[1:])), path]
    result = verify(*files)
    assert result.from_genesis, result
    calls = [r for f in files for r in lines(f) if r["type"] == "result"]
    assert len(calls) == threads_n * per_thread
