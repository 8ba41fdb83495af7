"""Tail-keep and spill: exact byte counts, modes, caps, UTF-8 cuts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellgate.executors._output import SpillStore, StreamBuffer, complete_prefix, decode_tail


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SpillStore]:
    s = SpillStore(budget_bytes=10**9, parent=str(tmp_path))
    yield s
    s.close()


def test_small_output_never_spills(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 100, 1000, store)
    buf.feed(b"x" * 100)
    view = buf.view()
    assert (view.text, view.truncated, view.spill_path) == ("x" * 100, False, None)
    assert os.listdir(store.path) == []


def test_overflow_spills_the_whole_stream_and_keeps_the_tail(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 100, 10_000, store)
    data = bytes(range(48, 58)) * 50  # 500 bytes
    for i in range(0, 500, 7):
        buf.feed(data[i : i + 7])
    buf.close()
    view = buf.view()
    assert view.truncated
    assert view.total_bytes == 500
    assert view.text == data[-100:].decode()
    assert view.spill_path is not None
    spill = Path(view.spill_path)
    assert spill.read_bytes() == data
    assert spill.stat().st_mode & 0o777 == 0o600
    assert store.path.stat().st_mode & 0o777 == 0o700
    assert len(spill.name) > 32  # unguessable: 128 random bits in the name


def test_single_chunk_larger_than_the_cap(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 10, 10_000, store)
    buf.feed(b"a" * 5 + b"b" * 30)
    assert buf.view().text == "b" * 10
    assert Path(buf.view().spill_path or "").read_bytes() == b"a" * 5 + b"b" * 30


def test_spill_past_its_cap_is_deleted_and_unavailable(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 10, 50, store)
    buf.feed(b"x" * 40)
    first = buf.view().spill_path
    assert first is not None
    assert Path(first).exists()
    buf.feed(b"y" * 20)
    view = buf.view()
    assert view.spill_path is None
    assert view.truncated
    assert not Path(first).exists()
    buf.feed(b"z" * 100)  # later data never resurrects the file
    assert buf.view().spill_path is None
    assert os.listdir(store.path) == []


def test_gate_wide_spill_budget(tmp_path: Path) -> None:
    store = SpillStore(budget_bytes=100, parent=str(tmp_path))
    a = StreamBuffer("stdout", 10, 1000, store)
    a.feed(b"a" * 80)
    b = StreamBuffer("stderr", 10, 1000, store)
    b.feed(b"b" * 80)  # would pass the budget: discarded, not written
    assert a.view().spill_path is not None
    assert b.view().spill_path is None
    assert b.view().truncated
    store.close()
    assert not store.path.exists()


def test_utf8_cut_drops_leading_continuation_bytes(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 5, 1000, store)
    buf.feed("ééé".encode())  # 6 bytes: the cut lands inside the first é
    assert buf.view().text == "éé"
    assert "\ufffd" not in buf.view().text


def test_undecodable_bytes_become_replacement_characters(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 100, 1000, store)
    buf.feed(b"ok\xff\xfeok")
    assert buf.view().text == "ok\ufffd\ufffdok"


def test_reads_are_offset_based_and_non_consuming(store: SpillStore) -> None:
    buf = StreamBuffer("stdout", 10, 1000, store)
    buf.feed(b"0123456789")
    first = buf.read_from(0)
    assert (first.data, first.lost) == (b"0123456789", False)
    buf.feed(b"abcde")
    second = buf.read_from(first.end)
    assert (second.data, second.start, second.lost) == (b"abcde", 10, False)
    late = buf.read_from(2)  # bytes 2..4 were dropped from memory
    assert (late.data, late.start, late.lost) == (b"56789abcde", 5, True)
    assert buf.read_from(0).data == buf.read_from(0).data  # nothing consumed


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"abc", 3, id="ascii"),
        pytest.param("é".encode()[:1], 0, id="partial-2-byte"),
        pytest.param("a€".encode()[:3], 1, id="partial-3-byte"),
        pytest.param("😀".encode()[:3], 0, id="partial-4-byte"),
        pytest.param("😀".encode(), 4, id="complete-4-byte"),
        pytest.param(b"", 0, id="empty"),
    ],
)
def test_complete_prefix(data: bytes, expected: int) -> None:
    assert complete_prefix(data) == expected


def test_decode_tail_holds_back_partial_characters_while_open() -> None:
    assert decode_tail("a€".encode()[:3], cut=False, final=False) == "a"
    assert decode_tail("a€".encode()[:3], cut=False, final=True) == "a\ufffd"
