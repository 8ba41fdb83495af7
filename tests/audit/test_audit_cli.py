"""``audit verify`` and ``audit tail`` through typer's runner."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from shellgate.audit import AuditLog
from shellgate.cli import audit as audit_cli


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The host CLI (here a local stand-in)."""

    audit_cli.register(app)
    return app


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200"})


def one_call(
    log: AuditLog,
    call_id: str,
    command: str,
    *,
    answer: str | None = None,
    exit_code: int | None = 0,
    decision: str = "allow",
) -> None:
    log.append(
        {
            "type": "decision",
            "call_id": call_id,
            "subject": "agent",
            "tenant": "default",
            "session": "s1",
            "tool": "bash",
            "command": command,
            "decision": decision,
            "reason": "r",
            "layer": "casbin",
            "rule": None,
            "segments": [],
            "executor": "local",
            "sandbox_mode": "workspace-write",
        }
    )
    if answer is not None:
        log.append(
            {
                "type": "approval",
                "call_id": call_id,
                "question": "q",
                "answer": answer,
                "message": None,
                "approver": "prompt",
            }
        )
    if exit_code is not None:
        log.append(
            {
                "type": "result",
                "call_id": call_id,
                "exit_code": exit_code,
                "signal": None,
                "timed_out": False,
                "duration_ms": 3.5,
                "stdout_bytes": 10,
                "stderr_bytes": 0,
                "truncated": False,
                "is_error": exit_code != 0,
            }
        )


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        one_call(log, "c1", "git status")
        one_call(
            log, "c2", "git push origin main", decision="ask", answer="allow_once", exit_code=1
        )
        one_call(log, "c3", "rm -rf /", decision="deny", exit_code=None)
    return path


def test_verify_clean_log_exits_0_with_a_summary(
    app: typer.Typer, runner: CliRunner, log_file: Path
) -> None:
    result = runner.invoke(app, ["audit", "verify", str(log_file)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{log_file}: ok, 6 records, chain intact (head ")
    assert result.output.count("\n") == 1


def test_verify_tampered_log_exits_1_naming_the_line(
    app: typer.Typer, runner: CliRunner, log_file: Path
) -> None:
    lines = log_file.read_bytes().splitlines(keepends=True)
    assert b"git push origin main" in lines[2]
    lines[2] = lines[2].replace(b"git push origin main", b"git push origin mine")
    log_file.write_bytes(b"".join(lines))
    result = runner.invoke(app, ["audit", "verify", str(log_file)])
    assert result.exit_code == 1
    assert f"{log_file}:3: bad record: hash mismatch" in result.output
    assert "(2 valid records before it)" in result.output


def test_verify_truncated_log_exits_1(app: typer.Typer, runner: CliRunner, log_file: Path) -> None:
    log_file.write_bytes(log_file.read_bytes()[:-5])
    result = runner.invoke(app, ["audit", "verify", str(log_file)])
    assert result.exit_code == 1
    assert ":6: bad record: truncated mid-record" in result.output


def test_verify_unreadable_file_exits_2_on_stderr(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.jsonl"
    result = runner.invoke(app, ["audit", "verify", str(missing)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: {missing}: cannot read audit log: No such file or directory\n"


def test_tail_shows_one_row_per_call(app: typer.Typer, runner: CliRunner, log_file: Path) -> None:
    result = runner.invoke(app, ["audit", "tail", str(log_file)])
    assert result.exit_code == 0, result.output
    out = result.output
    for header in ("time", "subject", "decision", "command", "result"):
        assert header in out
    assert "git status" in out
    assert "ask → allow_once (prompt)" in out
    assert "exit 1" in out
    rm_row = next(line for line in out.splitlines() if "rm -rf /" in line)
    assert "deny" in rm_row
    assert "agent" in rm_row


def test_tail_n_limits_the_rows(app: typer.Typer, runner: CliRunner, log_file: Path) -> None:
    result = runner.invoke(app, ["audit", "tail", str(log_file), "-n", "1"])
    assert result.exit_code == 0
    assert "rm -rf /" in result.output
    assert "git status" not in result.output
    bad = runner.invoke(app, ["audit", "tail", str(log_file), "-n", "0"])
    assert bad.exit_code == 2


def test_tail_json_prints_raw_records(app: typer.Typer, runner: CliRunner, log_file: Path) -> None:
    import json

    result = runner.invoke(app, ["audit", "tail", str(log_file), "-n", "2", "--json"])
    assert result.exit_code == 0
    records = [json.loads(line) for line in result.output.splitlines()]
    assert [r["seq"] for r in records] == [5, 6]


def test_tail_escapes_control_characters_and_markup(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        one_call(log, "c1", "echo \x1b[31mred [bold]x[/bold]")
    result = runner.invoke(app, ["audit", "tail", str(path)])
    assert "\x1b[31m" not in result.output
    assert "\\x1b[31mred [bold]x[/bold]" in result.output


def test_tail_of_a_damaged_log_still_shows_it(
    app: typer.Typer, runner: CliRunner, log_file: Path
) -> None:
    log_file.write_bytes(log_file.read_bytes() + b"garbage\n")
    result = runner.invoke(app, ["audit", "tail", str(log_file)])
    assert result.exit_code == 0
    assert "UNREADABLE" in result.output
    assert "garbage" in result.output


def test_tail_unreadable_file_exits_2(app: typer.Typer, runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "tail", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert "cannot read audit log" in result.stderr


def test_empty_log_tail_says_so(app: typer.Typer, runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    result = runner.invoke(app, ["audit", "tail", str(path)])
    assert (result.exit_code, result.output) == (0, f"{path}: no records\n")


def test_tail_clips_a_huge_command_and_names_calls_without_a_decision(
    app: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        one_call(log, "c1", "x" * 200_000, exit_code=None, decision="deny")
        log.append({"type": "invalid", "tool": "bash", "subject": "agent", "tenant": "t",
                    "session": "s1", "error": "invalid arguments: missing description"})
        log.append({"type": "task", "tool": "bash_output", "subject": "agent", "tenant": "t",
                    "session": "s1", "task_id": "bash-9", "error": "unknown task bash-9"})
    result = runner.invoke(app, ["audit", "tail", str(path)])
    assert result.exit_code == 0
    assert len(result.output.splitlines()) < 40  # was 1,000+ lines of x for one call
    words = " ".join(w for w in result.output.split() if w != "│")  # cells wrap
    assert "… (200000 characters; --json for all)" in words
    assert "invalid arguments: missing description" in words
    assert "bash_output bash-9" in words
    assert "unknown task bash-9" in words
