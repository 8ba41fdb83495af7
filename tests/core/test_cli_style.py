"""One error style across the CLI: ``error: …`` then ``hint: …``, exit 2, no usage dumps.

Every command's ``--help`` shows placeholders, never Python type names; the root
has ``--version``. Real CLI processes throughout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from shellgate import __version__
from shellgate.cli import build_app

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([sys.executable, "-m", "shellgate.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=60, check=False)


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


COMMANDS = list(_walk(typer.main.get_command(build_app()), ()))


def assert_error_style(done: subprocess.CompletedProcess[str], error: str, hint: str) -> None:
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {error}", f"hint: {hint}"]


def test_version(tmp_path: Path) -> None:
    done = cli("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"shellgate {__version__}\n", "")


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "shellgate")
def test_help_shows_placeholders_not_python_types(tmp_path: Path, path: tuple[str, ...]) -> None:
    done = cli(*path, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: shellgate {' '.join(path)}".rstrip() + " ")
    for typename in ("<list[", "<str>", "<int>", "<path>", "<bool>", "{"):
        assert typename not in done.stdout, f"{typename} in {' '.join(path)} --help"


def test_the_documented_placeholders(tmp_path: Path) -> None:
    run = cli("run", "--help", cwd=tmp_path).stdout
    assert "Usage: shellgate run [OPTIONS] COMMAND..." in run
    assert "--config FILE" in run
    assert "--sandbox MODE" in run
    assert "--timeout-ms N" in run
    check = cli("check", "--help", cwd=tmp_path).stdout
    assert "--policy DIR" in check


@pytest.mark.parametrize(
    ("args", "error", "hint"),
    [
        pytest.param(("run", "--bogus", "--", "ls"), "no such option: --bogus",
                     "see 'shellgate run --help'", id="unknown-option"),
        pytest.param(("run", "--backgrond", "--", "ls"), "no such option: --backgrond",
                     "did you mean --background?", id="near-miss-option"),
        pytest.param(("check",), "missing argument 'COMMAND'", "see 'shellgate check --help'",
                     id="missing-argument"),
        pytest.param(("run", "--timeout-ms", "soon", "--", "ls"),
                     "invalid value for '--timeout-ms': Input should be a valid integer, "
                     "unable to parse string as an integer", "see 'shellgate run --help'",
                     id="bad-value"),
        pytest.param(("audit", "tail"), "missing argument 'FILE'",
                     "see 'shellgate audit tail --help'", id="subgroup-command"),
        pytest.param(("rnu",), "no such command 'rnu'", "did you mean 'run'?",
                     id="near-miss-command"),
        pytest.param(("policy", "tset", "x"), "no such command 'tset'", "did you mean 'test'?",
                     id="near-miss-subcommand"),
        pytest.param(("--bogus",), "no such option: --bogus", "see 'shellgate --help'",
                     id="root-option"),
    ],
)
def test_command_line_mistakes_are_an_error_and_a_hint(
    tmp_path: Path, args: tuple[str, ...], error: str, hint: str
) -> None:
    done = cli(*args, cwd=tmp_path)
    assert_error_style(done, error, hint)
    assert "Usage:" not in done.stderr


def test_a_config_key_typo_suggests_the_key(tmp_path: Path) -> None:
    conf = tmp_path / "shellgate.toml"
    conf.write_text("[executor]\ntimout_ms = 5000\n")
    for args in (("run", "--", "ls"), ("check", "--", "ls"), ("mcp",)):
        done = cli(args[0], "--config", str(conf), *args[1:], cwd=tmp_path)
        assert_error_style(done, f"{conf}: unknown key 'executor.timout_ms'",
                           "did you mean 'executor.timeout_ms'?")


def test_an_environment_typo_suggests_the_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env |= {"PYTHONPATH": str(ROOT / "src"), "SHELLGATE_EXECUTOR__TIMEOUTMS": "5"}
    done = subprocess.run([sys.executable, "-m", "shellgate.cli", "check", "--", "ls"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
                          check=False)
    assert_error_style(done, "environment variable SHELLGATE_EXECUTOR__TIMEOUTMS: unknown key "
                             "'executor.timeoutms'", "did you mean SHELLGATE_EXECUTOR__TIMEOUT_MS?")
