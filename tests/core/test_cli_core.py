"""``shellgate run`` and ``shellgate schema`` through the real CLI process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **extra_env}
    env.pop("SHELLGATE_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    policy = tmp_path / "pol"
    policy.mkdir()
    (policy / "model.conf").write_text((ROOT / "src/shellgate/policy/model.conf").read_text())
    (policy / "policy.csv").write_text(
        "p, agent, *, echo *, allow\np, agent, *, exit *, allow\np, agent, *, seq *, allow\n"
        "p, agent, *, rm *, deny, no deleting here\n"
    )
    path = tmp_path / "shellgate.toml"
    path.write_text(
        '[executor]\nworkspace = "ws"\nmax_output_bytes = 100\n'
        '[policy]\npaths = ["pol"]\ndefault = "deny"\n[audit]\npath = "audit.jsonl"\n'
    )
    return path


def test_run_prints_the_model_text_and_exits_with_the_status(conf: Path) -> None:
    ok = cli("run", "--config", str(conf), "--", "echo hi", cwd=conf.parent)
    assert (ok.returncode, ok.stdout) == (0, "hi\n")
    failed = cli("run", "--config", str(conf), "--", "exit 7", cwd=conf.parent)
    assert (failed.returncode, failed.stdout) == (7, "(no output)\n[exit code: 7]\n")


def test_run_denied_exits_126_naming_the_rule(conf: Path) -> None:
    denied = cli("run", "--config", str(conf), "--", "rm -rf /", cwd=conf.parent)
    assert denied.returncode == 126
    assert "denied by casbin rule" in denied.stderr
    assert "no deleting here" in denied.stderr


def test_run_keeps_spill_files_for_the_user(conf: Path) -> None:
    tmp = conf.parent / "tmp"
    tmp.mkdir()
    result = cli("run", "--config", str(conf), "--", "seq 1 1000", cwd=conf.parent, TMPDIR=str(tmp))
    path = Path(result.stdout.rsplit("full output: ", 1)[1].split("]")[0])
    assert path.read_text() == "".join(f"{i}\n" for i in range(1, 1001))
    assert path.parent.parent == tmp


def test_run_leaves_no_spill_directory_when_nothing_spilled(conf: Path) -> None:
    tmp = conf.parent / "tmp"
    tmp.mkdir()
    result = cli("run", "--config", str(conf), "--", "echo hi", cwd=conf.parent, TMPDIR=str(tmp))
    assert result.stdout == "hi\n"
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--executor", "docker"], "invalid --executor", id="bad-executor"),
        pytest.param(["--sandbox", "yolo"], "invalid --sandbox", id="bad-sandbox"),
        pytest.param(
            ["--workdir", "/no/such"], "working directory does not exist", id="bad-workdir"
        ),
    ],
)
def test_run_usage_errors_are_one_line_exit_2(conf: Path, args: list[str], message: str) -> None:
    result = cli("run", "--config", str(conf), *args, "--", "echo hi", cwd=conf.parent)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_run_bad_config_is_an_error_line_and_a_hint(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[executor]\nbogus = 1\n")
    result = cli("run", "--config", str(bad), "--", "true", cwd=tmp_path)
    assert result.returncode == 2
    error, hint = result.stderr.strip().splitlines()
    assert error == f"error: {bad}: unknown key 'executor.bogus'"
    assert hint.startswith("hint: [executor] takes: kind, workspace, timeout_ms, ")


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_schema_command(tmp_path: Path, fmt: str) -> None:
    result = cli("schema", "--format", fmt, cwd=tmp_path)
    assert result.returncode == 0
    tools = json.loads(result.stdout)
    assert len(tools) == 3


def test_schema_bad_format(tmp_path: Path) -> None:
    result = cli("schema", "--format", "gemini", cwd=tmp_path)
    assert result.returncode == 2
    assert "invalid --format" in result.stderr


def test_run_background_follows_the_task(conf: Path) -> None:
    result = cli("run", "--config", str(conf), "--background", "--", "echo one; exit 3", cwd=conf.parent)
    assert result.returncode == 3
    assert result.stdout == "one\n"
    assert result.stderr.splitlines() == [
        "started background task bash-1",
        "[status: completed, exit code: 3]",
    ]


def test_run_sigterm_aborts_the_call_and_records_it(conf: Path) -> None:
    # SIGTERM used to kill `shellgate run` outright: the decision was on record,
    # the result never was. Now it ends like Ctrl-C: killed, recorded, exit 143.
    import signal

    from shellgate.audit import verify
    from tests.conftest import pids_with_arg, wait_until

    rules = conf.parent / "pol" / "policy.csv"
    rules.write_text(rules.read_text() + "p, agent, *, sleep *, allow\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(conf), "--",
         "sleep 31.4901"],
        cwd=conf.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    log = conf.parent / "audit.jsonl"
    try:
        # The CLI's own argv holds the command too: wait for the decision record
        # and the command's process (the decision is written before it starts).
        assert wait_until(lambda: log.exists() and b'"decision"' in log.read_bytes(), 20)
        assert wait_until(lambda: len(pids_with_arg("31.4901")) >= 2, 20)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM
    assert wait_until(lambda: not pids_with_arg("31.4901"), 10)
    assert verify(log).ok
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["type"], r.get("outcome")) for r in records] == [
        ("decision", None), ("result", "aborted"),
    ]


def _ask_for_touch(conf: Path) -> None:
    rules = conf.with_name("pol") / "policy.csv"
    rules.write_text(rules.read_text() + "p, agent, *, touch *, ask, writes files\n"
                     "p, agent, *, write:**, allow\n")


def test_run_refused_for_want_of_an_approver_hints_at_the_prompt(conf: Path) -> None:
    _ask_for_touch(conf)
    asked = cli("run", "--config", str(conf), "--", "touch made", cwd=conf.parent)
    assert asked.returncode == 126
    assert "no approver is configured to ask a person" in asked.stderr
    assert asked.stderr.splitlines()[-1] == (
        'hint: add --approval prompt to be asked on this terminal '
        '(or set [approval] mode = "prompt")')
    denied = cli("run", "--config", str(conf), "--", "rm -rf /", cwd=conf.parent)
    assert "hint:" not in denied.stderr  # a policy's no: nobody to ask about it


def test_run_with_approval_prompt_asks_on_the_terminal(conf: Path) -> None:
    """What the hint says, followed: the question on the terminal, 'y', and it runs."""
    import select
    import time

    _ask_for_touch(conf)
    master, slave = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "shellgate.cli", "run", "--config", str(conf),
         "--approval", "prompt", "--", "touch made"],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=conf.parent, env=env,
    )
    os.close(slave)
    seen = b""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while b"Allow this command?" not in seen and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 0.1)[0]:
                seen += os.read(proc.stderr.fileno(), 4096)
        time.sleep(0.2)  # the prompt flushes what was typed before it asked
        os.write(master, b"y\n")
        _out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"Allow this command?" in seen, seen
    assert proc.returncode == 0, seen + err
    assert (conf.parent / "ws" / "made").exists()
