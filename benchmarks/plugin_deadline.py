"""Benchmark what the plugin deadline costs a decision (docs/hooks.md, "The time budget").

Run: ``PYTHONPATH=src python benchmarks/plugin_deadline.py [--cpu] [--command CMD]``

For one command against ``policies/default`` (default: 3 segments), the decision
time per call, median and minimum of interleaved rounds, for:

* the built-in layers only (no plugin: the waterfall never leaves the thread);
* the built-ins plus one abstaining plugin asked *inline* (how every plugin ran
  before the deadline was enforced) and *guarded* (on a worker thread under its
  deadline: one hop per call), blocking (``shellgate check``) and awaited (the gate);
* the hop alone: a runner asking a trivial function.

``--cpu`` measures process CPU time instead of wall time (steadier on a loaded
machine: scheduling delays then do not count).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from shellgate.config import load_config  # noqa: E402
from shellgate.decider import Decider  # noqa: E402
from shellgate.hookspecs import hookimpl  # noqa: E402
from shellgate.models import CallInfo, Segment  # noqa: E402
from shellgate.policy.deadline import LayerRunner  # noqa: E402
from shellgate.policy.engine import Layer, decide, decide_async  # noqa: E402


class Abstain:
    @hookimpl
    def shellgate_check(self, segment: Segment) -> None:
        return None


def _trivial() -> Generator[tuple[str, Callable[[], None]], object, int]:
    yield "trivial", lambda: None
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", default="git status && ls -la src | wc -l")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--per-round", type=int, default=200)
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    cfg = load_config(None, policy={"paths": [str(ROOT / "policies" / "default")]},
                      executor={"workspace": str(ROOT)})
    decider = Decider(cfg)
    decider.register(Abstain(), name="abstain")
    call = CallInfo(tool="bash", command=args.command, subject="agent", tenant="default",
                    session="bench", workdir=str(ROOT), workspace=str(ROOT))
    analysis = decider.analyse(call)
    guarded = list(decider.layers)  # the layers exactly as the gate runs them
    inline = [dataclasses.replace(layer, guarded=False) for layer in guarded]
    builtin = [layer for layer in inline if layer.name != "abstain"]
    runner = LayerRunner()

    def sync(layers: list[Layer]) -> Callable[[], object]:
        return lambda: decide(call, analysis, layers, default="ask", runner=runner)

    def hop() -> object:
        steps = _trivial()
        return runner.run(steps, next(steps), 1.0)

    async def hop_async() -> object:
        steps = _trivial()
        return await runner.run_async(steps, next(steps), 1.0)

    cases: dict[str, Callable[[], object]] = {
        "built-ins only": sync(builtin),
        "+ plugin, inline (before)": sync(inline),
        "+ plugin, guarded, blocking": sync(guarded),
        "the hop alone, blocking": hop,
    }
    acases: dict[str, Callable[[], Awaitable[object]]] = {
        "+ plugin, guarded, awaited": lambda: decide_async(
            call, analysis, guarded, default="ask", layer_budget_ms=1000, runner=runner),
        "the hop alone, awaited": hop_async,
    }
    results: dict[str, list[float]] = {name: [] for name in [*cases, *acases]}

    async def rounds() -> None:
        n = args.per_round
        for _ in range(args.rounds):
            for name, fn in cases.items():
                start = clock()
                for _ in range(n):
                    fn()
                results[name].append((clock() - start) / n * 1e6)
            for name, afn in acases.items():
                start = clock()
                for _ in range(n):
                    await afn()
                results[name].append((clock() - start) / n * 1e6)

    asyncio.run(rounds())
    print(f"{len(analysis.segments)} segments, {'CPU' if args.cpu else 'wall'} time per call")
    for name, values in results.items():
        print(f"  {name:32s} median {statistics.median(values):7.1f} us   "
              f"min {min(values):7.1f} us")


if __name__ == "__main__":
    main()
