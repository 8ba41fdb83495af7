"""Records that could not be written as they are: escaped text and cut fields."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shellgate.audit import MAX_RECORD_BYTES, AuditLog, verify
from shellgate.audit._fit import escape_text
from shellgate.errors import AuditError


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]


def unescape(text: str) -> str:
    """The inverse of the documented escaping (docs/audit.md)."""
    return re.sub(
        r"\\(\\|u([0-9a-f]{4}))",
        lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(2), 16)),
        text,
    )


@given(st.text(alphabet=st.sampled_from(["a", "\\", "u", "d", "c", "f", "\udcff", "\ud800"])))
def test_escaping_is_reversible(text: str) -> None:
    assert unescape(escape_text(text)) == text


def test_nested_surrogates_are_escaped_and_listed_by_json_pointer(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append({"type": "x", "a/b": ["ok", {"c~": "\udc80\\"}], "plain": "\\"})
    (record,) = lines(path)
    assert record["a/b"] == ["ok", {"c~": "\\udc80\\\\"}]
    assert record["plain"] == "\\"  # strings without surrogates are untouched
    assert record["escaped"] == ["/a~1b/1/c~0"]
    assert verify(path).ok


def test_an_escaped_record_is_canonical_utf8(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append({"type": "x", "command": "é \udcff"})
    raw = path.read_bytes()
    raw.decode("utf-8")  # strict: valid UTF-8
    assert "é".encode() in raw  # other text stays UTF-8, not \u-escaped JSON
    assert verify(path).ok


def test_a_key_that_is_not_unicode_is_refused() -> None:
    with pytest.raises(AuditError, match="not valid Unicode"):
        AuditLog(None).append({"type": "x", "k\udcff": 1})


@pytest.mark.parametrize("key", ["escaped", "cut"])
def test_the_logs_own_fit_keys_are_refused_from_callers(key: str) -> None:
    with pytest.raises(AuditError, match="the log adds them"):
        AuditLog(None).append({"type": "x", key: []})


def test_every_oversized_string_is_cut_with_its_length_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    big = "é" * MAX_RECORD_BYTES  # 2 MiB of UTF-8, two bytes a character
    with AuditLog(path) as log:
        log.append({"type": "x", "a": big, "b": [big + "!"], "small": "kept"})
    raw = path.read_bytes()
    assert len(raw) <= MAX_RECORD_BYTES
    (record,) = lines(path)
    assert record["small"] == "kept"
    assert record["cut"] == {
        "/a": {"bytes": 2 * MAX_RECORD_BYTES, "sha256": hashlib.sha256(big.encode()).hexdigest()},
        "/b/0": {
            "bytes": 2 * MAX_RECORD_BYTES + 1,
            "sha256": hashlib.sha256((big + "!").encode()).hexdigest(),
        },
    }
    assert record["a"] == "é" * (32 * 1024)  # 64 KiB, whole characters only
    assert verify(path).ok


def test_many_large_fields_are_cut_shorter_until_the_record_fits(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append({"type": "x", "parts": ["z" * 100_000] * 40})
    (record,) = lines(path)
    parts = record["parts"]
    assert isinstance(parts, list)
    assert {len(p) for p in parts} == {16 * 1024}
    assert len(path.read_bytes()) <= MAX_RECORD_BYTES
    assert verify(path).ok


def test_a_record_too_big_even_cut_is_refused_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log, pytest.raises(AuditError, match="even with every string cut"):
        log.append({"type": "x", "many": ["w" * 300] * 20_000})
    assert path.read_bytes() == b""


def test_records_that_fit_are_never_cut_or_escaped(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    command = "x" * 500_000
    with AuditLog(path) as log:
        log.append({"type": "x", "command": command})
    (record,) = lines(path)
    assert record["command"] == command
    assert "cut" not in record
    assert "escaped" not in record
