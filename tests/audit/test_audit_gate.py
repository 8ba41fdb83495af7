"""Every call is on the record: text that is not UTF-8 and oversized commands.

Through a real gate (and the real CLI process): the model gets the input guard's
deny, the log holds the call's records, and the chain verifies.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellgate.audit import verify

ROOT = Path(__file__).resolve().parents[2]
EXIT_DENIED = 126  # docs/cli.md: the policy denied it


def audit_verify_cli(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "audit", "verify", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]


async def test_a_lone_surrogate_is_an_audited_input_guard_deny(
    open_gate: Callable[..., Any], tmp_path: Path
) -> None:
    gate = await open_gate()
    result = await gate.call("bash", {"command": "echo \udcff done", "description": "d"})
    assert (result.is_error, result.outcome) == (True, "denied")
    assert "denied by input-guard" in result.text
    assert "unpaired surrogate" in result.text
    audit = tmp_path / "audit.jsonl"
    decision, outcome = records(audit)
    assert (decision["type"], decision["decision"], decision["layer"]) == (
        "decision",
        "deny",
        "input-guard",
    )
    # Written escaped, and said so: '\' doubled, the surrogate as \uXXXX.
    assert decision["command"] == "echo \\udcff done"
    assert "/command" in decision["escaped"]
    assert (outcome["type"], outcome["outcome"]) == ("result", "denied")
    assert verify(audit).ok
    assert audit_verify_cli(audit).returncode == 0


async def test_escaping_tells_a_surrogate_from_its_spelling(
    open_gate: Callable[..., Any], tmp_path: Path
) -> None:
    gate = await open_gate()
    await gate.call("bash", {"command": "echo '\\udcff' \udcff", "description": "d"})
    decision = records(tmp_path / "audit.jsonl")[0]
    assert decision["command"] == "echo '\\\\udcff' \\udcff"
    assert verify(tmp_path / "audit.jsonl").ok


async def test_a_5_mb_command_is_denied_by_the_input_guard_and_recorded_cut(
    open_gate: Callable[..., Any], tmp_path: Path
) -> None:
    gate = await open_gate()
    command = "echo " + "x" * (5 * 1024 * 1024)
    result = await gate.call("bash", {"command": command, "description": "big"})
    assert result.outcome == "denied"
    assert "denied by input-guard" in result.text
    assert "over the 100000-byte limit" in result.text
    assert "audit" not in result.text
    audit = tmp_path / "audit.jsonl"
    decision, outcome = records(audit)
    assert decision["decision"] == "deny"
    full = command.encode()
    assert decision["cut"]["/command"] == {
        "bytes": len(full),
        "sha256": hashlib.sha256(full).hexdigest(),
    }
    assert command.startswith(decision["command"])
    assert len(decision["command"]) == 64 * 1024
    assert outcome["outcome"] == "denied"
    assert verify(audit).ok


def test_run_cli_with_a_non_utf8_byte_exits_denied_and_records_it(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    conf = tmp_path / "shellgate.toml"
    conf.write_text(
        '[executor]\nworkspace = "ws"\n[policy]\npaths = []\n[audit]\npath = "audit.jsonl"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(conf), "--", b"echo \xff"],
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == EXIT_DENIED, stderr
    assert "Traceback" not in stderr
    assert "denied by input-guard" in stderr
    audit = tmp_path / "audit.jsonl"
    decision, outcome = records(audit)
    assert decision["command"] == "echo \\udcff"
    assert outcome["outcome"] == "denied"
    verified = audit_verify_cli(audit)
    assert verified.returncode == 0, verified.stdout


@pytest.mark.parametrize(
    "command", ["echo \udcff", "echo " + "y" * 2_000_000], ids=["surrogate", "2MB"]
)
def test_sync_gate_answers_instead_of_raising(
    config_factory: Callable[..., Any], tmp_path: Path, command: str
) -> None:
    from shellgate.gate import SyncGate

    with SyncGate(config_factory()) as gate:
        result = gate.call("bash", {"command": command, "description": "d"})
    assert result.outcome == "denied"
    assert verify(tmp_path / "audit.jsonl").ok


def test_check_json_with_a_non_utf8_byte_is_valid_json_naming_the_command(
    tmp_path: Path,
) -> None:
    """check gives the same deny, and its JSON carries the command escaped, not ``""``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--json", "--", b"echo \xff"],
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 11, done.stderr
    assert b"Traceback" not in done.stderr
    verdict = json.loads(done.stdout)  # ASCII escapes: valid JSON although not Unicode text
    assert verdict["layer"] == "input-guard"
    assert [s["command"] for s in verdict["segments"]] == ["echo \udcff"]
