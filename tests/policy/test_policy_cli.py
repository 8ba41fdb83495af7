"""`shellgate check` and `shellgate policy …` through the real CLI (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from shellgate.cli import check, policy
from tests.policy.policy_helpers import write_set

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "policies"
KEYS = {"decision", "reason", "layer", "rule", "segments"}
SEGMENT_KEYS = {"command", "argv", "decision", "layer", "rule"}


def shellgate(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([sys.executable, "-m", "shellgate.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(
    ("command", "decision", "status", "rules"),
    [
        pytest.param("git status", "allow", 0, "default", id="allow"),
        pytest.param("pytest -q", "sandbox", 0, "default", id="sandbox"),
        pytest.param("git push origin main", "ask", 10, "default", id="ask"),
        pytest.param("rm -rf /", "deny", 11, "baseline", id="deny"),
    ],
)
def test_check_json_contract_and_exit_status(
    command: str, decision: str, status: int, rules: str
) -> None:
    done = shellgate("check", "--policy", str(POLICIES / "default"), "--json", "--", command)
    assert done.returncode == status, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == KEYS
    assert out["decision"] == decision
    assert all(set(s) == SEGMENT_KEYS for s in out["segments"])
    assert out["segments"][0]["argv"] == command.split()
    if decision != "ask":
        assert out["layer"] == "casbin"
        assert out["rule"].startswith(f"{rules}/policy.csv:")


def test_check_several_words_are_one_argv_and_options_come_first() -> None:
    done = shellgate("check", "--policy", str(POLICIES / "default"), "--json", "rm", "-rf", "/")
    assert done.returncode == 11
    assert json.loads(done.stdout)["segments"][0]["argv"] == ["rm", "-rf", "/"]


def test_check_subject_tenant_and_several_policies(tmp_path: Path) -> None:
    extra = write_set(tmp_path, "p, bob, web, git status *, deny, frozen\n")
    args = ("check", "--policy", str(POLICIES / "enterprise"), "--policy", str(extra),
            "--subject", "bob", "--tenant", "web", "--json", "--", "git status")
    out = json.loads(shellgate(*args).stdout)
    assert (out["decision"], out["rule"]) == ("deny", "set/policy.csv:1")


def test_check_human_output_explains_segments_and_rule() -> None:
    done = shellgate("check", "--policy", str(POLICIES / "default"), "--", "/bin/rm -rf /usr")
    assert done.returncode == 11
    assert "segment 1: '/bin/rm -rf /usr' -> deny" in done.stdout
    assert "also read as: rm -rf /usr" in done.stdout
    assert "policy.csv:" in done.stdout
    assert "decided by casbin" in done.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(("check",), "missing argument 'COMMAND'", id="no-command"),
        pytest.param(("check", "--bogus", "x"), "no such option: --bogus", id="bad-option"),
        pytest.param(("check", "--policy", "/nonexistent", "ls"), "policy set directory not found",
                     id="missing-policy"),
        pytest.param(("check", "--config", "/nonexistent.toml", "ls"), "cannot read config",
                     id="missing-config"),
        pytest.param(("check", "--workdir", "/nonexistent", "ls"), "not a directory",
                     id="bad-workdir"),
    ],
)
def test_check_errors_are_an_error_line_and_a_hint_exit_2(args: tuple[str, ...], needle: str) -> None:
    done = shellgate(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("hint: "))
    assert "Traceback" not in done.stderr


def test_check_broken_policy_names_file_and_line(tmp_path: Path) -> None:
    bad = write_set(tmp_path, "p, agent, *, ls *, allow\np, agent, *, \"re:a(b,c\", deny\n")
    done = shellgate("check", "--policy", str(bad), "ls")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad / 'policy.csv'}:2: bad regular expression")


@pytest.mark.parametrize("name", ["baseline", "default", "ci", "enterprise"])
def test_shipped_policy_sets_pass_their_tests_and_lint(name: str) -> None:
    # Each set with the closing default its tests.csv names (as `make policies` runs it).
    text = (POLICIES / name / "tests.csv").read_text()
    named = [line.split(":", 1)[1].split()[0] for line in text.splitlines()
             if line.startswith("# default:")]
    tested = shellgate("policy", "test", str(POLICIES / name),
                       *(("--default", named[0]) if named else ()))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.strip().endswith("tests passed")
    linted = shellgate("policy", "lint", str(POLICIES / name))
    assert linted.returncode == 0, linted.stdout


def test_ci_set_passes_with_the_headless_default() -> None:
    done = shellgate("policy", "test", str(POLICIES / "ci"), "--default", "deny")
    assert done.returncode == 0, done.stdout


def app() -> typer.Typer:
    root = typer.Typer()
    check.register(root)
    policy.register(root)
    return root


def test_policy_init_writes_a_passing_set_and_never_overwrites(tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "new"
    first = runner.invoke(app(), ["policy", "init", str(target)])
    assert first.exit_code == 0, first.output
    assert {p.name for p in target.iterdir()} == {"model.conf", "policy.csv", "tests.csv"}
    (target / "policy.csv").write_text((target / "policy.csv").read_text() + "# mine\n")
    again = runner.invoke(app(), ["policy", "init", str(target)])
    assert again.exit_code == 2
    assert (target / "policy.csv").read_text().endswith("# mine\n")
    tested = runner.invoke(app(), ["policy", "test", str(target)])
    assert tested.exit_code == 0, tested.output
    assert "6 tests passed" in tested.output
    linted = runner.invoke(app(), ["policy", "lint", str(target)])
    assert linted.exit_code == 0, linted.output


def test_policy_test_reports_each_failure_with_its_rule(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, ls *, allow\np, agent, *, rm *, deny\n")
    (directory / "tests.csv").write_text("agent, default, allow, ls -l\n"
                                         "agent, default, allow, rm x\n")
    (directory / "extra.test.csv").write_text("# more\nagent, default, ask, echo a,b\n")
    done = shellgate("policy", "test", str(directory))
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith(f"{directory / 'tests.csv'}:2: FAIL agent in default: 'rm x': "
                               "expected allow, got deny")
    assert "rule set/policy.csv:2" in lines[0]
    assert lines[-1] == "1 of 3 tests failed"


@pytest.mark.parametrize(
    ("rows", "tests", "needle"),
    [
        pytest.param("p, agent, *, ls, allow\n", "agent, default, maybe, ls\n",
                     "unknown expected decision 'maybe'", id="bad-expectation"),
        pytest.param("p, agent, *, ls, allow\n", "agent, default\n", "a test row is",
                     id="short-row"),
        pytest.param("p, agent, *, ls, alow\n", "agent, default, allow, ls\n",
                     "unknown effect 'alow'", id="broken-policy"),
        pytest.param("p, agent, *, ls, allow\n", None, "no tests.csv", id="no-tests"),
    ],
)
def test_policy_test_broken_files_exit_2(tmp_path: Path, rows: str, tests: str | None,
                                         needle: str) -> None:
    directory = write_set(tmp_path, rows)
    if tests is not None:
        (directory / "tests.csv").write_text(tests)
    result = CliRunner().invoke(app(), ["policy", "test", str(directory)])
    assert result.exit_code == 2
    assert needle in result.output


def test_policy_lint_exit_1_with_findings_2_without_directory(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, git push *, allow\np, agent, *, git *, ask\n"
                                    "p, agent, *, ls, alow\n")
    runner = CliRunner()
    result = runner.invoke(app(), ["policy", "lint", str(directory)])
    assert result.exit_code == 1
    assert f"{directory / 'policy.csv'}:3: unknown effect 'alow'" in result.output
    assert "1 finding" in result.output
    missing = runner.invoke(app(), ["policy", "lint", str(tmp_path / "nope")])
    assert missing.exit_code == 2
