"""Real agent traffic through the decider: how often the gate stops work, and why.

Run: ``.venv/bin/python benchmarks/traffic.py [--traffic FILE.jsonl]... [--top N]``

Each traffic file holds one JSON object a line with at least ``command`` (and
``count``, how often it occurred); by default every ``*.jsonl`` of the shared
traffic folder (``../shared/traffic`` beside the checkout) when it is there, else
``benchmarks/traffic-sample.jsonl`` (commands written for this project). Nothing
runs: every command is only decided, from ``/testbed`` as workdir and workspace
(where the shared traffic's agent worked), under two policies:

* ``benchmarks/policies/developer``: a realistic developer allow-list
  (read-only tools, sed/awk/xargs/git, python and pytest, mkdir/touch/cp/mv,
  ``write:**``; ``rm`` asks; ``rm -rf``, curl, wget and sudo denied), closing
  default ``ask``;
* the packaged ``policies/default``, with the packaged closing default
  (``sandbox``: what no rule names runs confined) and the baseline set.

It prints, per policy, the share of distinct commands (and of all occurrences)
that get ``allow``, ``sandbox``, ``ask`` and ``deny`` — a prompt is ``ask`` or
``deny`` — the most frequent prompt reasons with counts, and the warm decision
time (p50, p99, max; each command decided for the first time after a warm-up on
the traffic from another directory, so no analysis is cached), with the p99's
ratio to a baseline measured in the same run: deciding ``ls -la`` over and over.

Targets (issue 21): under the developer allow-list at most 12 % of distinct
commands prompt, no analysis errors, p99 at most 1 ms and max at most 20 ms.
Issue 22: under the packaged default at most 15 % of distinct commands prompt
and at most 1 % are denied; sandboxed calls are no prompt, and their share is
the ``sandbox`` column.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from shellgate.config import load_config  # noqa: E402
from shellgate.decider import Decider  # noqa: E402
from shellgate.models import CallInfo, Verdict  # noqa: E402

SHARED = ROOT.parent / "shared" / "traffic"
SAMPLE = ROOT / "benchmarks" / "traffic-sample.jsonl"
#: Each policy with the closing default it is decided under (None: the packaged one).
POLICIES: dict[str, tuple[Path, str | None]] = {
    "developer allow-list": (ROOT / "benchmarks" / "policies" / "developer", "ask"),
    "policies/default": (ROOT / "policies" / "default", None),
}
WORKDIR = "/testbed"
EFFECTS = ("allow", "sandbox", "ask", "deny")
_QUOTED = re.compile(r"`[^`]*`|'[^']*'")


def load(paths: list[Path]) -> list[tuple[str, int]]:
    """Distinct commands with their counts, from every file."""
    counts: Counter[str] = Counter()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                counts[row["command"]] += int(row.get("count", 1))
    return list(counts.items())


def decider_for(policy: Path, default: str | None) -> Decider:
    chosen: dict[str, object] = {"paths": [str(policy)]}
    if default is not None:
        chosen["default"] = default
    config = load_config(
        None, policy=chosen, audit={"path": None}, executor={"workspace": WORKDIR},
    )  # fmt: skip
    print(f"   ({policy.name}: closing default {config.policy.closing_default}, baseline "
          f"{'on' if config.policy.baseline else 'off'})")
    return Decider(config)


def call(command: str, workdir: str = WORKDIR) -> CallInfo:
    return CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="traffic", workdir=workdir, workspace=WORKDIR)  # fmt: skip


def reason_class(verdict: Verdict) -> str:
    """A prompt's reason with its quoted specifics folded, for counting classes."""
    decision = verdict.decision
    text = _QUOTED.sub("…", decision.reason)
    if decision.layer == "default":
        head = next((sv.segment.argv[0] for sv in verdict.segments
                     if sv.decision is decision and sv.segment.argv), "?")
        return f"default: no rule for {head[:40]}"
    return f"{decision.layer}: {text[:110]}"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def baseline_ms(decider: Decider, runs: int = 2000) -> float:
    """p99 of deciding one short command over and over (analysis cached)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        decider.decide(call("ls -la"))
        times.append((time.perf_counter() - start) * 1000)
    return percentile(times, 0.99)


def measure(name: str, policy: Path, default: str | None, commands: list[tuple[str, int]],
            top: int) -> bool:
    decider = decider_for(policy, default)
    for command, _ in commands[:500]:  # warm-up: imports, parsers, argv caches
        decider.decide(call(command, workdir="/testbed-warm"))
    base = baseline_ms(decider)
    distinct: Counter[str] = Counter()
    weighted: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    examples: dict[str, str] = {}
    times: list[float] = []
    errors = 0
    for command, count in commands:
        start = time.perf_counter()
        verdict = decider.decide(call(command))
        times.append((time.perf_counter() - start) * 1000)
        effect = verdict.effect
        distinct[effect] += 1
        weighted[effect] += count
        if "analysis failed" in verdict.decision.reason:
            errors += 1
        if effect in ("ask", "deny"):
            key = f"{effect:5} {reason_class(verdict)}"
            reasons[key] += 1
            examples.setdefault(key, command.replace("\n", "⏎")[:90])
    n, total = len(commands), sum(c for _, c in commands)
    prompts = (distinct["ask"] + distinct["deny"]) / n
    print(f"\n== {name} ({n} distinct commands, {total} occurrences)")
    print("   " + "  ".join(f"{e} {distinct[e] / n:6.1%}" for e in EFFECTS)
          + f"   prompts {prompts:6.1%}   (of occurrences: "
          + ", ".join(f"{e} {weighted[e] / total:.1%}" for e in EFFECTS) + ")")
    p50, p99, worst = statistics.median(times), percentile(times, 0.99), max(times)
    print(f"   decision time: p50 {p50:.3f} ms  p99 {p99:.3f} ms  max {worst:.1f} ms   "
          f"(baseline p99 {base:.3f} ms, p99 ratio {p99 / base:.1f}x)   analysis errors {errors}")
    print(f"   top prompt reasons ({sum(reasons.values())} prompts):")
    for key, count in reasons.most_common(top):
        print(f"   {count:5}  {key}\n          e.g. {examples[key]}")
    decider.close()
    return errors == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traffic", type=Path, action="append", help="a traffic .jsonl file")
    parser.add_argument("--top", type=int, default=15, help="prompt reasons to list")
    args = parser.parse_args()
    files = args.traffic or sorted(SHARED.glob("*.jsonl")) or [SAMPLE]
    print("traffic:", ", ".join(str(f) for f in files))
    commands = load(files)
    ok = True
    for name, (policy, default) in POLICIES.items():
        ok &= measure(name, policy, default, commands, args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
