"""Shared bits for the example tests: where the examples are, how to run them."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
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


@functools.cache
def bwrap_works() -> bool:
    """Whether the bwrap executor can run here (the same probe the gate uses).

    Asked while the tests are collected, once per process, and on a workspace of its
    own: it once probed the current directory, the checkout, where three xdist
    workers collecting at once left the shell start-up files bwrap makes as mount
    points behind in the checkout's root.
    """
    import asyncio

    from shellgate.config import load_config
    from shellgate.executors import make_executor

    if shutil.which("bwrap") is None:
        return False

    async def probe(workspace: str) -> str | None:
        config = load_config(None, executor={"kind": "bwrap", "workspace": workspace})
        executor = make_executor(config, "bwrap")
        try:
            await executor.open()
            return executor.unavailable_reason
        finally:
            await executor.aclose()

    with tempfile.TemporaryDirectory(prefix="sg-bwrap-probe-") as workspace:
        return asyncio.run(probe(workspace)) is None


def localised(example: Path, tmp_path: Path, replacements: dict[str, str]) -> Path:
    """A copy of an example config in ``tmp_path`` with test-local paths swapped in."""
    text = example.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, f"{example.name} no longer contains {old!r}"
        text = text.replace(old, new)
    copy = tmp_path / example.name
    copy.write_text(text, encoding="utf-8")
    return copy
