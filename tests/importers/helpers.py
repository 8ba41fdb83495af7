"""Running the real CLI for the importer tests, and reading what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).resolve().parent / "samples"


def shellgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m shellgate.cli ARGS`` with this checkout's src and no SHELLGATE_* env."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([sys.executable, "-m", "shellgate.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def rows(path: Path) -> list[str]:
    """The non-comment, non-blank lines of a CSV file."""
    return [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]
