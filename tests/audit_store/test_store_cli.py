"""``shellgate audit verify|tail|export`` over a store, over rotated files, and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shellgate.audit import AuditLog
from shellgate.store.audit import StoreAuditLog
from tests.audit_store.helpers import cli, tamper


def fill(url: str, n: int, log: str = "default") -> None:
    with StoreAuditLog(url, log) as audit:
        for i in range(n):
            call = f"c{i}"
            audit.append({"type": "decision", "call_id": call, "subject": "agent",
                          "decision": "allow", "command": f"echo {i}"})
            audit.append({"type": "result", "call_id": call, "exit_code": 0})


def test_verify_tail_and_export_a_store(store_url: str, tmp_path: Path) -> None:
    fill(store_url, 5)
    done = cli("audit", "verify", "--store", store_url)
    assert done.returncode == 0, done.stderr
    assert "(log 'default'): ok, 10 records, chain intact" in done.stdout
    table = cli("audit", "tail", "--store", store_url, "-n", "2")
    assert table.returncode == 0, table.stderr
    assert "echo 4" in table.stdout
    assert "exit 0" in table.stdout
    assert "echo 2" not in table.stdout
    raw = cli("audit", "tail", "--store", store_url, "-n", "2", "--json")
    assert [json.loads(line)["seq"] for line in raw.stdout.splitlines()] == [9, 10]
    exported = cli("audit", "export", "--store", store_url)
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, 11))
    assert exported.stderr == (
        f"note: {store_url} (log 'default'): exported 10 records (seq 1..10), chain intact\n")
    # The SIEM can re-verify: the export is the chain itself.
    out = tmp_path / "export.jsonl"
    to_file = cli("audit", "export", "--store", store_url, "--output", str(out))
    assert (to_file.returncode, to_file.stdout) == (0, "")
    assert out.read_text() == exported.stdout
    assert out.stat().st_mode & 0o077 == 0
    again = cli("audit", "verify", str(out))
    assert again.returncode == 0, again.stdout
    assert "ok, 10 records, chain intact" in again.stdout
    # Incremental: only what the SIEM does not have; the rest still verified.
    newer = cli("audit", "export", "--store", store_url, "--after-seq", "7")
    assert [json.loads(line)["seq"] for line in newer.stdout.splitlines()] == [8, 9, 10]


def test_a_tampered_store_fails_verify_and_stops_export(store_url: str) -> None:
    fill(store_url, 4)
    tamper(store_url, "UPDATE sg_audit SET line = replace(line, 'echo 2', 'echo X') WHERE seq = 5")
    done = cli("audit", "verify", "--store", store_url)
    assert done.returncode == 1
    assert done.stdout == (f"{store_url} (log 'default'): seq 5: bad record: hash mismatch: the "
                           "record's content was edited (4 valid records before it)\n")
    exported = cli("audit", "export", "--store", store_url)
    assert exported.returncode == 1
    assert [json.loads(line)["seq"] for line in exported.stdout.splitlines()] == [1, 2, 3, 4]
    assert exported.stderr.startswith(f"error: {store_url} (log 'default'): seq 5: bad record")
    assert exported.stderr.endswith("exported 4 records (seq 1..4), none past it\n")


def rotated(tmp_path: Path) -> list[Path]:
    """Three files of one chain, as logrotate (rename + SIGHUP -> reopen) leaves them."""
    live = tmp_path / "audit.jsonl"
    with AuditLog(live) as log:
        for generation in (2, 1):
            for i in range(3):
                log.append({"type": "decision", "call_id": f"g{generation}-{i}",
                            "command": f"echo {generation}.{i}"})
            live.rename(tmp_path / f"audit.jsonl.{generation}")
            log.reopen()
        log.append({"type": "decision", "call_id": "now", "command": "echo now"})
    return [tmp_path / "audit.jsonl.2", tmp_path / "audit.jsonl.1", live]


def test_tail_and_export_read_a_rotated_series(tmp_path: Path) -> None:
    files = [str(f) for f in rotated(tmp_path)]
    tail = cli("audit", "tail", *files, "-n", "3", "--json")
    assert tail.returncode == 0, tail.stderr
    assert [json.loads(line)["type"] for line in tail.stdout.splitlines()] == [
        "decision", "link", "decision"]  # the newest file holds two; the rest from before
    exported = cli("audit", "export", *files)
    assert exported.returncode == 0, exported.stderr
    seqs = [json.loads(line)["seq"] for line in exported.stdout.splitlines()]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) == 3 + 1 + 3 + 1 + 1  # two links
    # Only the newest file: exported, but it continues a log that was not given.
    alone = cli("audit", "export", files[-1])
    assert alone.returncode == 3
    assert "not from genesis" in alone.stderr
    assert len(alone.stdout.splitlines()) == 2
    # Out of order: the link does not continue; nothing past the break.
    wrong = cli("audit", "export", files[1], files[0], files[2])
    assert wrong.returncode == 1
    assert "bad record" in wrong.stderr


def test_the_config_names_the_log(store_url: str, tmp_path: Path) -> None:
    fill(store_url, 1, log="ci")
    conf = tmp_path / "shellgate.toml"
    conf.write_text(f'[audit]\nstore = "{store_url}"\nlog = "ci"\n')
    done = cli("audit", "verify", "--config", str(conf))
    assert done.returncode == 0, done.stderr
    assert "(log 'ci'): ok, 2 records" in done.stdout
    from_env = cli("audit", "export", env={"SHELLGATE_CONFIG": str(conf)})
    assert len(from_env.stdout.splitlines()) == 2
    file_conf = tmp_path / "file.toml"
    file_conf.write_text('[audit]\npath = "a.jsonl"\n')
    with AuditLog(tmp_path / "a.jsonl") as log:
        log.append({"type": "decision"})
    by_file = cli("audit", "verify", "--config", str(file_conf))
    assert by_file.returncode == 0, by_file.stderr
    assert "a.jsonl: ok, 1 records" in by_file.stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("verify", "a.jsonl", "--store", "{url}"), "give FILE... or --store URL, not both"),
        (("export", "a.jsonl", "--log", "x"), "--log names a log in a store: it needs --store "
                                              "URL, not FILE"),
        (("tail", "--store", "{url}", "--config", "c.toml"),
         "--config names the log only when no FILE or --store is given"),
        (("verify", "--store", "{url}", "--log", "nope"),
         "{url}: no audit log named 'nope' (its logs: default)"),
        (("tail", "--store", "mysql://db/x"), "store URL: unknown scheme 'mysql' "
                                              "(sqlite: or postgresql:)"),
        (("verify", "--store", "sqlite:///{tmp}/typo.db"),
         "sqlite:///{tmp}/typo.db: no such SQLite file"),
        (("export",), "missing argument 'FILE...'"),
        (("export", "--after-seq", "-1", "a.jsonl"), "invalid value for '--after-seq'"),
    ],
    ids=["file-and-store", "log-without-store", "config-with-store", "unknown-log", "bad-url",
         "missing-sqlite", "nothing", "negative-after-seq"],
)
def test_bad_input_is_one_clear_error(
    store_url: str, tmp_path: Path, args: tuple[str, ...], error: str
) -> None:
    fill(store_url, 1)
    fmt: dict[str, Any] = {"url": store_url, "tmp": str(tmp_path).lstrip("/")}
    done = cli("audit", *(a.format(**fmt) for a in args), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines()[0].startswith(f"error: {error.format(**fmt)}")


def test_an_unreachable_postgresql_is_exit_2_without_the_password() -> None:
    done = cli("audit", "verify", "--store", "postgresql://sg:hunter2@127.0.0.1:1/sg")
    assert done.returncode == 2
    assert done.stderr.startswith("error: postgresql://sg:***@127.0.0.1:1/sg: cannot connect")
    assert "hunter2" not in done.stderr
