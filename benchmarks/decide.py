"""Benchmark the casbin layer: indexed decisions vs plain casbin enforce, load, cold check.

Run: ``PYTHONPATH=src python benchmarks/decide.py [--sizes 1000,10000,100000]``

* warm decision for a 3-segment command (each segment with a wrapper-peeled form),
  subject holding 2 roles, against generated sets of 1,000 / 10,000 / 100,000 rules
  (a mix of exact, ``cmd *`` prefix, glob and regex patterns over 10 tenants): p50
  and p99 for the index and, in the same run, for plain casbin ``enforce_ex``;
* load time of each set from its files (model.conf + policy.csv), and the ratio
  reading every deny/ask pattern canonically at load would give (issue 10: <= 1.10;
  the gate reads them on first use, so its own load ratio is 1.00);
* cold ``shellgate check`` wall time on the shipped ``policies/default``.

Targets (issue 3): p99 <= 1 ms at 10,000 rules, <= 2 ms at 100,000; load of 100,000
<= 3 s; cold check <= 400 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from shellgate.models import Segment  # noqa: E402
from shellgate.policy.loader import SHIPPED_MODEL  # noqa: E402
from shellgate.policy.patterns import canonical_regex  # noqa: E402
from shellgate.policy.reference import ReferenceEnforcer  # noqa: E402
from shellgate.policy.ruleset import PolicyEngine  # noqa: E402

TENANTS = [f"tenant{i}" for i in range(10)]
ROLES = [f"role{i}" for i in range(20)]
WORDS = [f"cmd{i}" for i in range(300)] + ["git", "ls", "cat", "rm", "make", "kubectl"]
SUBS = ["status", "log", "push", "apply", "get", "build", "-rf", "--force", "x", "y"]


def generate(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = [f"g, user, {ROLES[0]}, {TENANTS[3]}", f"g, user, {ROLES[1]}, *"]
    lines += [f"g, u{i}, {rng.choice(ROLES)}, {rng.choice(TENANTS)}" for i in range(200)]
    for _ in range(n):
        word, sub = rng.choice(WORDS), rng.choice(SUBS)
        kind = rng.random()
        if kind < 0.4:
            pattern = f"{word} {sub}"
        elif kind < 0.7:
            pattern = f"{word} {sub} *"
        elif kind < 0.85:
            pattern = f"{word} * {sub}"
        else:
            pattern = f'"re:{word} ({sub}|{rng.choice(SUBS)})( .*)?"'
        tenant = rng.choice([*TENANTS, "*"])
        effect = rng.choices(["allow", "ask", "deny"], weights=[6, 3, 1])[0]
        lines.append(f"p, {rng.choice(ROLES)}, {tenant}, {pattern}, {effect}")
    return "\n".join(lines) + "\n"


def segments() -> list[Segment]:
    raw = [("sudo", "git", "push", "origin"), ("timeout", "5", "cmd42", "status"),
           ("env", "make", "build")]
    canonical = [("git push origin",), (), ("make build",)]
    return [Segment(text=" ".join(a), argv=a, forms=(a, a[1:] if a[0] != "timeout" else a[2:]),
                    canonical=c)
            for a, c in zip(raw, canonical, strict=True)]


def timed(engine: PolicyEngine, segs: list[Segment], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        for seg in segs:
            engine.match("user", TENANTS[3], seg)
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_size(n: int, workdir: Path) -> None:
    directory = workdir / f"set{n}"
    directory.mkdir()
    shutil.copy(SHIPPED_MODEL, directory / "model.conf")
    (directory / "policy.csv").write_text(generate(n))
    start = time.perf_counter()
    engine = PolicyEngine.load([directory])
    load_s = time.perf_counter() - start
    # Issue 10: the catalog must not slow the load by more than 10 %. Patterns are
    # read canonically on first use; this is what reading them all at load would add.
    canonical_regex.cache_clear()
    start = time.perf_counter()
    for index in engine.indexes:
        for rule in index.source.rules:
            if rule.effect != "allow" and rule.pattern.kind != "regex":
                canonical_regex(rule.pattern.text)
    eager_s = time.perf_counter() - start
    canonical_regex.cache_clear()
    segs = segments()
    timed(engine, segs, 50)  # warm caches (role resolution, regex compile)
    ours = timed(engine, segs, 2000)
    plain = PolicyEngine([ReferenceEnforcer(i.source) for i in engine.indexes])
    theirs = timed(plain, segs, max(3, min(200, 200_000 // n)))
    same = all(engine.match("user", TENANTS[3], s) == plain.match("user", TENANTS[3], s)
               for s in segs)
    print(f"{n:>7} rules  load {load_s:6.2f} s  index p50 {pct(ours, .5):7.3f} ms "
          f"p99 {pct(ours, .99):7.3f} ms   plain enforce p50 {pct(theirs, .5):9.2f} ms "
          f"p99 {pct(theirs, .99):9.2f} ms   same answers: {same}")
    print(f"{'':>7}        canonical patterns: load ratio 1.00 (read on first use); "
          f"reading every deny/ask pattern at load would make it "
          f"{(load_s + eager_s) / load_s:.2f}")


def cold_check(runs: int = 5) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "shellgate.cli", "check", "--policy",
                        str(ROOT / "policies" / "default"), "--", "git status"],
                       cwd=ROOT, env=env, capture_output=True, check=False)
        walls.append((time.perf_counter() - start) * 1000)
    print(f"cold `shellgate check` on policies/default: median {statistics.median(walls):.0f} ms "
          f"(min {min(walls):.0f}, max {max(walls):.0f}, {runs} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            bench_size(n, Path(tmp))
    cold_check()


if __name__ == "__main__":
    main()
