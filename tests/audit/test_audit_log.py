"""The writer: chain fields, durability contract, refusals, concurrency, reopening."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shellgate.audit import GENESIS, AuditLog, canonical, record_hash, verify
from shellgate.audit._chain import sealed
from shellgate.errors import AuditError


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def decision(call_id: str, command: str = "ls -la") -> dict[str, object]:
    return {
        "type": "decision",
        "call_id": call_id,
        "subject": "agent",
        "tenant": "default",
        "session": "s1",
        "tool": "bash",
        "command": command,
        "decision": "allow",
        "segments": [
            {
                "command": command,
                "argv": command.split(),
                "decision": "allow",
                "layer": "casbin",
                "rule": "policy.csv:2",
            }
        ],
    }


def test_records_carry_seq_time_prev_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        h1 = log.append(decision("c1"))
        h2 = log.append(
            {
                "type": "result",
                "call_id": "c1",
                "exit_code": 0,
                "duration_ms": 12.5,
                "stdout_bytes": 3,
            }
        )
    first, second = lines(path)
    assert (first["seq"], first["prev"], first["hash"]) == (1, GENESIS, h1)
    assert (second["seq"], second["prev"], second["hash"]) == (2, h1, h2)
    assert record_hash(first) == h1
    assert isinstance(first["time"], str)
    assert first["time"].endswith("Z")
    assert first["segments"] == decision("c1")["segments"]
    assert second["duration_ms"] == 12.5
    assert verify(path).ok


def test_the_line_is_on_disk_when_append_returns(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    digest = log.append(decision("c1"))
    # Read through a separate descriptor while the writer is still open.
    assert path.read_bytes().endswith(b"\n")
    assert lines(path)[0]["hash"] == digest
    log.close()


def test_fsync_mode_writes_the_same_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=True) as log:
        log.append(decision("c1"))
        log.append(decision("c2"))
    assert verify(path).records == 2


def test_log_file_is_private_to_the_owner(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    AuditLog(path).close()
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"type": "decision", "env": {"HOME": "/root"}}, id="env"),
        pytest.param({"type": "decision", "environment": {}}, id="environment"),
        pytest.param({"type": "decision", "Env": "x"}, id="case-insensitive"),
        pytest.param({"type": "decision", "call": {"env": {"TOKEN": "s3cret"}}}, id="nested"),
        pytest.param({"type": "d", "segments": [{"environment": "x"}]}, id="in-list"),
    ],
)
def test_environment_values_are_refused_and_nothing_is_written(
    tmp_path: Path, record: dict[str, object]
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log, pytest.raises(AuditError, match="environment values"):
        log.append(record)
    assert path.read_bytes() == b""


def test_env_refused_even_when_the_log_is_disabled() -> None:
    log = AuditLog(None)
    assert not log.enabled
    with pytest.raises(AuditError, match="environment values"):
        log.append({"type": "x", "env": {}})
    first = log.append({"type": "x"})
    assert len(first) == 64
    assert log.last_hash == first


@pytest.mark.parametrize(
    ("record", "message"),
    [
        pytest.param({"seq": 5}, "must not set seq", id="forged-seq"),
        pytest.param({"hash": "0" * 64, "prev": "x"}, "must not set hash, prev", id="forged-hash"),
        pytest.param({"x": float("nan")}, "not a JSON number", id="nan"),
        pytest.param({"x": object()}, "has type object", id="object"),
        pytest.param({"x": b"bytes"}, "has type bytes", id="bytes"),
        pytest.param({1: "int key"}, "is not a string", id="int-key"),
        pytest.param({"x": ["y" * 300] * 20_000}, "byte limit even with", id="too-big-even-cut"),
    ],
)
def test_bad_records_are_refused_with_a_clear_error(
    tmp_path: Path, record: dict[object, object], message: str
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        with pytest.raises(AuditError, match=message):
            log.append(record)  # type: ignore[arg-type]
        log.append({"type": "ok"})  # a refused record does not break the chain
    assert verify(path).records == 1


def test_paths_and_models_become_plain_json(tmp_path: Path) -> None:
    from shellgate.models import Decision

    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append(
            {"workdir": tmp_path, "decision": Decision(effect="ask", reason="r", layer="casbin")}
        )
    record = lines(path)[0]
    assert record["workdir"] == str(tmp_path)
    assert record["decision"] == {
        "effect": "ask",
        "reason": "r",
        "layer": "casbin",
        "rule": None,
        "require_sandbox": False,
        "scope": "segment",
    }


def test_reopening_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        last = log.append(decision("c1"))
    with AuditLog(path) as log:
        assert log.last_hash == last
        log.append(decision("c2"))
    records = lines(path)
    assert [r["seq"] for r in records] == [1, 2]
    assert records[1]["prev"] == last
    assert verify(path).ok


def test_reopening_a_log_that_ends_mid_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append(decision("c1"))
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    with pytest.raises(AuditError, match="ends mid-record"):
        AuditLog(path)


def test_reopening_a_log_whose_last_record_was_edited_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        log.append(decision("c1", "ls"))
    path.write_text(path.read_text().replace('"ls"', '"rm"'))
    with pytest.raises(AuditError, match="hash does not match"):
        AuditLog(path)


def test_two_writers_on_one_file_keep_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    a, b = AuditLog(path), AuditLog(path)
    for i in range(5):
        a.append(decision(f"a{i}"))
        b.append(decision(f"b{i}"))
    a.close()
    b.close()
    result = verify(path)
    assert (result.ok, result.records) == (True, 10)


def test_closed_log_refuses_appends(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.close()
    log.close()  # idempotent
    with pytest.raises(AuditError, match="closed"):
        log.append({"type": "x"})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda p: p / "missing" / "audit.jsonl", "cannot open", id="no-dir"),
        pytest.param(lambda p: p, "cannot open", id="a-directory"),
    ],
)
def test_unusable_paths_fail_at_open(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(AuditError, match=message):
        AuditLog(make(tmp_path))  # type: ignore[operator]


def test_a_symlinked_log_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    with pytest.raises(AuditError, match="cannot open"):
        AuditLog(link)


def test_a_failed_write_poisons_the_log(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    log = AuditLog(tmp_path / "audit.jsonl")
    # Point the writer's descriptor at a device that refuses every write (ENOSPC).
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, log._fd)  # type: ignore[arg-type]
    os.close(full)
    with pytest.raises(AuditError, match="cannot write audit log: No space left"):
        log.append({"type": "x"})
    with pytest.raises(AuditError, match="unusable after a failed write"):
        log.append({"type": "y"})
    log.close()


def test_concurrent_threads_never_interleave_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    start = threading.Barrier(8)
    big = "x" * 20_000  # lines far over PIPE_BUF, so a torn write would show

    def writer(n: int) -> None:
        start.wait()
        for i in range(40):
            log.append({"type": "decision", "call_id": f"t{n}-{i}", "command": big})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    result = verify(path)
    assert (result.ok, result.records) == (True, 320)
    assert {r["call_id"] for r in lines(path)} == {f"t{n}-{i}" for n in range(8) for i in range(40)}


async def test_concurrent_asyncio_tasks_never_interleave_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)

    async def writer(n: int) -> None:
        for i in range(25):
            log.append(decision(f"a{n}-{i}"))
            await asyncio.sleep(0)  # yield so the tasks really alternate

    await asyncio.gather(*(writer(n) for n in range(10)))
    log.close()
    records = lines(path)
    assert verify(path).records == 250
    assert len({r["call_id"] for r in records}) == 250
    assert all(
        canonical(r) + b"\n" == line + b"\n"
        for r, line in zip(records, path.read_bytes().splitlines(), strict=True)
    )


def test_public_names_match_all() -> None:
    import shellgate.audit as audit

    public = {name for name in vars(audit) if not name.startswith("_")}
    modules = {"log", "reader"}  # submodules, not API
    assert set(audit.__all__) == public - modules - {"annotations"}


_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    record=st.dictionaries(st.text(max_size=10).filter(lambda k: k != "hash"), _json, max_size=12)
)
@settings(max_examples=300)
def test_sealed_line_is_the_canonical_line_with_its_hash(record: dict[str, object]) -> None:
    """The writer's one-pass splice equals the verifier's definition on any record."""
    line, digest = sealed(record)
    assert digest == record_hash(record)
    assert line == canonical({**record, "hash": digest})
