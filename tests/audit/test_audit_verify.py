"""verify(): a clean chain passes; every kind of tampering names its first bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellgate.audit import GENESIS, AuditLog, record_hash, tail, verify
from shellgate.errors import AuditError


def write_log(path: Path, n: int = 5) -> list[bytes]:
    with AuditLog(path) as log:
        for i in range(n):
            log.append(
                {
                    "type": "decision",
                    "call_id": f"c{i}",
                    "command": f"echo {i}",
                    "decision": "allow",
                    "subject": "agent",
                }
            )
    return path.read_bytes().splitlines(keepends=True)


def test_clean_log_verifies(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    result = verify(path)
    assert (result.ok, result.records, result.first_bad, result.reason) == (True, 5, None, None)
    assert result.last_hash == json.loads(raw[-1])["hash"]


def test_empty_log_verifies(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"")
    result = verify(path)
    assert (result.ok, result.records, result.last_hash) == (True, 0, GENESIS)


def test_one_edited_field_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    raw[2] = raw[2].replace(b'"allow"', b'"deny"')
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert (result.ok, result.first_bad, result.records) == (False, 3, 2)
    assert result.reason == "hash mismatch: the record's content was edited"


def test_an_edit_with_a_recomputed_hash_is_found_at_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    record = json.loads(raw[1])
    record["command"] = "rm -rf /"
    record["hash"] = record_hash(record)
    raw[1] = json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert result.first_bad == 3
    assert "prev does not match the previous record's hash" in (result.reason or "")


def test_reserialised_line_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    raw[0] = json.dumps(json.loads(raw[0]), indent=None).encode() + b"\n"  # ", " and ": "
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert result.first_bad == 1
    assert "not in canonical form" in (result.reason or "")


def test_a_deleted_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    del raw[2]
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert (result.first_bad, result.records) == (3, 2)
    assert result.reason == (
        "seq 4 where 3 was expected: 1 record(s) before it were deleted or moved"
    )


def test_deleting_the_first_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    path.write_bytes(b"".join(raw[1:]))
    result = verify(path)
    assert result.first_bad == 1
    assert "first record has seq 2, not 1" in (result.reason or "")


def test_reordered_records_are_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    raw[1], raw[3] = raw[3], raw[1]
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert result.first_bad == 2
    assert "seq 4 where 2 was expected" in (result.reason or "")


def test_a_duplicated_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    raw.insert(3, raw[2])
    path.write_bytes(b"".join(raw))
    result = verify(path)
    assert result.first_bad == 4
    assert "reordered or duplicated" in (result.reason or "")


def test_truncated_mid_line_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    path.write_bytes(b"".join(raw)[:-40])
    result = verify(path)
    assert (result.first_bad, result.records) == (5, 4)
    assert result.reason == "truncated mid-record: the last line is incomplete"


def test_missing_final_newline_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path)
    path.write_bytes(b"".join(raw)[:-1])
    result = verify(path)
    assert (result.first_bad, result.reason) == (5, "truncated: the last record has no line end")


@pytest.mark.parametrize(
    ("garbage", "reason"),
    [
        pytest.param(b"hello world\n", "not JSON", id="text"),
        pytest.param(b"[1, 2]\n", "not a JSON object (a list)", id="list"),
        pytest.param(b"\n", "blank line", id="blank"),
        pytest.param(b"\xff\xfe\n", "not UTF-8", id="binary"),
        pytest.param(b'{"seq": NaN}\n', "not JSON", id="nan"),
        pytest.param(b'{"type": "x"}\n', "field 'seq' is missing", id="no-chain-fields"),
    ],
)
def test_appended_garbage_is_found(tmp_path: Path, garbage: bytes, reason: str) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path, 3)
    path.write_bytes(b"".join(raw) + garbage)
    result = verify(path)
    assert (result.ok, result.first_bad, result.records) == (False, 4, 3)
    assert reason in (result.reason or "")


def test_a_forged_record_with_bad_fields_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path, 1)
    record = json.loads(raw[0])
    record["time"] = "yesterday"
    record["hash"] = record_hash(record)
    path.write_bytes(json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    assert verify(path).reason == "field 'time' is not an ISO 8601 time"


def test_unreadable_file_raises(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="cannot read audit log"):
        verify(tmp_path / "missing.jsonl")
    with pytest.raises(AuditError, match="cannot read audit log"):
        verify(tmp_path)


def test_tail_returns_the_last_records_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_log(path, 30)
    got = tail(path, 3)
    assert [r["call_id"] for r in got] == ["c27", "c28", "c29"]
    assert len(tail(path, 100)) == 30
    assert tail(path, 0) == []
    with pytest.raises(ValueError, match="n >= 0"):
        tail(path, -1)


def test_tail_reads_across_chunk_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with AuditLog(path) as log:
        for i in range(10):
            log.append({"type": "decision", "call_id": f"c{i}", "command": "x" * 30_000})
    got = tail(path, 4)
    assert [r["call_id"] for r in got] == ["c6", "c7", "c8", "c9"]


def test_tail_shows_damaged_lines_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = write_log(path, 3)
    path.write_bytes(b"".join(raw) + b"not json\n" + raw[0][:20])
    got = tail(path, 3)
    assert got[0]["call_id"] == "c2"
    assert got[1]["type"] == "unreadable"
    assert got[1]["raw"] == "not json"
    assert got[2] == {
        "type": "unreadable",
        "reason": "truncated mid-record",
        "raw": raw[0][:20].decode(),
    }


def test_tail_of_a_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="cannot read"):
        tail(tmp_path / "missing.jsonl", 5)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_single_byte_change_or_deletion_is_found(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "prop.jsonl"
    path.unlink(missing_ok=True)
    commands = data.draw(st.lists(st.text(max_size=20), min_size=1, max_size=4))
    with AuditLog(path) as log:
        for command in commands:
            log.append({"type": "decision", "command": command})
    original = path.read_bytes()
    assert verify(path).ok
    index = data.draw(st.integers(0, len(original) - 1))
    if data.draw(st.booleans()):
        replacement = data.draw(st.integers(0, 255).filter(lambda b: b != original[index]))
        tampered = original[:index] + bytes([replacement]) + original[index + 1 :]
    else:
        tampered = original[:index] + original[index + 1 :]
    path.write_bytes(tampered)
    result = verify(path)
    assert not result.ok
    assert result.first_bad is not None
