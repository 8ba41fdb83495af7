"""What a sandbox decision costs: a sandboxed call against a local call, same gate.

Two gates of one local deployment (``[executor] kind = "local"``) in one process,
interleaved, so load on a shared machine hits every series alike; they differ
only in their one rule per command: ``allow`` (the call runs on the local
executor) or ``sandbox`` (it runs on the bwrap executor in workspace-write mode
with the network off). Each series is a whole ``gate.call("bash", …)`` —
decide, audit (no file), execute, render — for:

* ``true``: the fixed cost of the box;
* ``python3 -c pass``: a command with a start-up of its own, as a typical
  toolchain call has (the ratio such a call sees).

The first sandboxed call probes bwrap; the warm-up pays for it. It prints the
medians and the ratios ``sandboxed / local``. Nothing here is a
target of the issue; the figures are in docs/performance.md.

Usage: ``python benchmarks/sandbox_decision.py [ROUNDS]`` (default 40).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from shellgate.approval import DenyApprover  # noqa: E402
from shellgate.config import load_config  # noqa: E402
from shellgate.gate import Gate  # noqa: E402
from shellgate.policy.loader import SHIPPED_MODEL  # noqa: E402

COMMANDS = {"true": "true", "python3 -c pass": "python3 -c pass"}


def policy_set(root: Path, effect: str) -> Path:
    """A set deciding every benchmark command ``effect``."""
    directory = root / effect
    directory.mkdir()
    shutil.copy(SHIPPED_MODEL, directory / "model.conf")
    rows = "".join(f"p, agent, *, {command}, {effect}\n" for command in COMMANDS.values())
    (directory / "policy.csv").write_text(rows)
    return directory


async def main(rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="sg-bench-", dir="/var/tmp"))
    (root / "ws").mkdir()
    gates = {}
    for effect in ("allow", "sandbox"):
        config = load_config(
            None, executor={"workspace": str(root / "ws"), "kind": "local"},
            policy={"paths": [str(policy_set(root, effect))], "default": "ask"},
            audit={"path": None},
        )  # fmt: skip
        gates[effect] = Gate(config, approver=DenyApprover())
    series = {(effect, name): (gate, command) for effect, gate in gates.items()
              for name, command in COMMANDS.items()}
    times: dict[tuple[str, str], list[float]] = {key: [] for key in series}
    seen: dict[tuple[str, str], str] = {}
    try:
        for gate in gates.values():
            await gate.open()

        async def call(gate: Gate, command: str) -> str:
            result = await gate.call("bash", {"command": command, "description": "bench"})
            assert not result.is_error, result.text
            return result.run.executor if result.run is not None else "?"

        for _ in range(3):  # warm-up; the first sandboxed call probes bwrap
            for key, (gate, command) in series.items():
                seen[key] = await call(gate, command)
        for _ in range(rounds):
            for key, (gate, command) in series.items():
                start = time.perf_counter()
                await call(gate, command)
                times[key].append((time.perf_counter() - start) * 1000)
    finally:
        for gate in gates.values():
            await gate.aclose()
        shutil.rmtree(root, ignore_errors=True)
    med = {key: statistics.median(v) for key, v in times.items()}
    for (effect, name), value in med.items():
        print(f"{effect:>8} {name:<16}: {value:7.2f} ms median over {rounds} "
              f"(executor {seen[(effect, name)]})")
    for name in COMMANDS:
        ratio = med[("sandbox", name)] / med[("allow", name)]
        print(f"sandboxed / local ({name}) = {ratio:.2f}")
    print(f"cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
