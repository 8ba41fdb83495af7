"""``[audit] path = ""`` disables the file (docs/configuration.md: "empty to disable")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellgate.approval import AllowApprover
from shellgate.config import load_config
from shellgate.gate import Gate

ROOT = Path(__file__).resolve().parents[2]


def config_file(tmp_path: Path, audit: str) -> Path:
    (tmp_path / "ws").mkdir(exist_ok=True)
    path = tmp_path / "shellgate.toml"
    path.write_text(
        '[executor]\nworkspace = "ws"\n[policy]\npaths = []\n'
        f'[approval]\nmode = "allow"\n[audit]\n{audit}\n'
    )
    return path


def test_an_empty_path_in_the_file_disables_the_audit_file(tmp_path: Path) -> None:
    cfg = load_config(config_file(tmp_path, 'path = ""'))
    assert cfg.audit.path is None


def test_an_empty_path_from_the_environment_disables_it_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLGATE_AUDIT__PATH", "")
    assert load_config(config_file(tmp_path, 'path = "a.jsonl"')).audit.path is None


async def test_a_gate_without_an_audit_file_still_checks_and_chains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = load_config(config_file(tmp_path, 'path = ""'))
    async with Gate(cfg, approver=AllowApprover()) as gate:
        assert not gate.audit.enabled
        result = await gate.call("bash", {"command": "echo hi", "description": "d"})
        assert (result.outcome, result.text) == ("ok", "hi\n")
        assert gate.audit.last_hash != "0" * 64  # the in-memory chain moved on
        denied = await gate.call("bash", {"command": "echo \udcff", "description": "d"})
        assert denied.outcome == "denied"
    leftovers = {p.name for p in tmp_path.iterdir()}
    assert leftovers == {"shellgate.toml", "ws"}
    assert list((tmp_path / "ws").iterdir()) == []


def test_run_cli_with_an_empty_audit_path_runs_and_writes_no_log(tmp_path: Path) -> None:
    conf = config_file(tmp_path, 'path = ""')
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(conf), "--", "echo hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    assert "Is a directory" not in done.stderr
    assert {p.name for p in tmp_path.iterdir()} == {"shellgate.toml", "ws"}
