"""Shared bits for the example tests: where the examples are, how to run them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
POLICIES = ROOT / "policies"


def env_with_src() -> dict[str, str]:
    env = {**os.environ}
    env["PYTHONPATH"] = str(ROOT / "src") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("SHELLGATE_CONFIG", None)
    return env


def bwrap_works() -> bool:
    """Whether the bwrap executor can run here (the same probe the gate uses)."""
    import asyncio

    from shellgate.config import load_config
    from shellgate.executors import make_executor

    if shutil.which("bwrap") is None:
        return False

    async def probe() -> str | None:
        executor = make_executor(load_config(None, executor={"kind": "bwrap"}), "bwrap")
        try:
            await executor.open()
            return executor.unavailable_reason
        finally:
            await executor.aclose()

    return asyncio.run(probe()) is None


def localised(example: Path, tmp_path: Path, replacements: dict[str, str]) -> Path:
    """A copy of an example config in ``tmp_path`` with test-local paths swapped in."""
    text = example.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, f"{example.name} no longer contains {old!r}"
        text = text.replace(old, new)
    copy = tmp_path / example.name
    copy.write_text(text, encoding="utf-8")
    return copy
