"""Policy sets on disk for the store tests, and a gate process that reports its answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shellgate.policy.loader import SHIPPED_MODEL


def write_set(directory: Path, policy: str, tests: str = "agent, default, allow, ls\n",
              model: str | None = None) -> Path:
    """A policy set directory: shellgate's model, ``policy`` and ``tests``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.conf").write_text(
        SHIPPED_MODEL.read_text(encoding="utf-8") if model is None else model, encoding="utf-8")
    (directory / "policy.csv").write_text(policy, encoding="utf-8")
    (directory / "tests.csv").write_text(tests, encoding="utf-8")
    return directory


BASE = "p, agent, *, ls *, allow\n"


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """The real ``shellgate`` command line, in a child process."""
    full = {k: v for k, v in os.environ.items() if k != "SHELLGATE_CONFIG"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "shellgate.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120, check=False)
