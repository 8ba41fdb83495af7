"""docs/cli.md names every command and option the CLI actually has."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from shellgate.cli import build_app

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command under ``command`` (typer vendors its own click: duck-typed)."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def test_every_command_and_option_is_in_docs_cli() -> None:
    text = DOC.read_text(encoding="utf-8")
    root = typer.main.get_command(build_app())
    missing: list[str] = []
    walked = list(_walk(root, ()))
    assert {p[0] for p, _ in walked if p} >= {
        "run",
        "check",
        "policy",
        "audit",
        "schema",
        "mcp",
        "demo",
    }
    for path, command in walked:
        if not path:
            continue
        if f"shellgate {path[0]}" not in text or path[-1] not in text:
            missing.append(" ".join(path))
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("-") and flag != "--help" and flag not in text:
                    missing.append(f"{' '.join(path)} {flag}")
    assert not missing, f"docs/cli.md does not mention: {missing}"


@pytest.mark.bwrap  # the packaged closing default, sandbox, is reported where bwrap works
def test_the_check_note_example_is_what_check_prints(tmp_path: Path) -> None:
    """docs/cli.md's `shellgate check --subject ci-bot …` example, run over the packaged set."""
    import os
    import shlex
    import subprocess
    import sys

    text = DOC.read_text(encoding="utf-8")
    block = text.split("$ shellgate check --subject ci-bot", 1)[1].split("```", 1)[0]
    command, *shown = ("shellgate check --subject ci-bot" + block).strip().splitlines()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(DOC.parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *shlex.split(command)[1:]],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=False,
    )
    assert done.returncode == 0  # sandbox: it runs without a person
    note, first = shown[0], shown[1]
    assert note in done.stderr.splitlines()
    assert done.stdout.splitlines()[0] == first
