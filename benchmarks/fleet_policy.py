"""Benchmark the policy store (issue 13): decisions on a store, and reload visibility.

Run: ``PYTHONPATH=src python benchmarks/fleet_policy.py [--rules 1000] [--pushes 20]``

Starts its own PostgreSQL cluster (``tests.pgcluster.Cluster(fsync=True)``).

* warm decision p50/p99 through the whole :class:`~shellgate.decider.Decider`
  (live reload on) for a 3-segment command, the same rules from files (the
  baseline, measured in this process) and from the PostgreSQL store; the ratio
  store/files (target ≈ 1.0: the store loads into the same index);
* reload visibility: a gate in another process decides in a tight loop; this
  process pushes a change (alternating two versions) and notes when the commit
  returned; the child notes when it first answered with the new version.
  Median and max over ``--pushes`` (targets: median ≤ 50 ms, max ≤ 1 s), for
  PostgreSQL (LISTEN/NOTIFY) and, for comparison, SQLite (polling every
  ``reload_poll_ms`` = 1000 ms, so about half a second on average).
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from shellgate.config import Config, load_config  # noqa: E402
from shellgate.decider import Decider  # noqa: E402
from shellgate.models import CallInfo  # noqa: E402
from shellgate.policy.loader import SHIPPED_MODEL  # noqa: E402
from shellgate.store.db import Database  # noqa: E402
from shellgate.store.policies import PolicyStore  # noqa: E402

COMMAND = "sudo git push origin main; ls -la | grep x && cmd7 build"
WORDS = [f"cmd{i}" for i in range(300)] + ["git", "ls", "cat", "rm", "make", "grep"]
SUBS = ["status", "log", "push", "apply", "get", "build", "-rf", "--force", "x", "y"]


def generate(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = ["g, agent, dev, *", "g, agent, ops, default"]
    for _ in range(n):
        word, sub = rng.choice(WORDS), rng.choice(SUBS)
        effect = rng.choice(["allow", "allow", "ask", "deny"])
        kind = rng.random()
        pattern = f"{word} {sub}" if kind < 0.5 else f"{word} {sub} *"
        lines.append(f"p, {rng.choice(['dev', 'ops', 'agent'])}, *, {pattern}, {effect}")
    return "\n".join(lines) + "\n"


def write_set(directory: Path, policy: str, tests: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.conf").write_text(SHIPPED_MODEL.read_text(encoding="utf-8"))
    (directory / "policy.csv").write_text(policy)
    (directory / "tests.csv").write_text(tests)
    return directory


def config(root: Path, **policy: object) -> Config:
    ws = root / "ws"
    ws.mkdir(exist_ok=True)
    return load_config(None, executor={"workspace": str(ws)},
                       audit={"path": str(root / "audit.jsonl")}, policy=policy)


def call(cfg: Config, command: str = COMMAND) -> CallInfo:
    ws = str(cfg.executor.workspace)
    return CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="b", workdir=ws, workspace=ws)


def timings(decider: Decider, info: CallInfo, n: int) -> list[float]:
    for _ in range(50):
        decider.decide(info)
    out = []
    for _ in range(n):
        start = time.perf_counter()
        decider.decide(info)
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def warm(root: Path, url: str, rules: int, n: int) -> None:
    team = write_set(root / "team", generate(rules), "agent, default, ask, make\n")
    files = config(root, paths=[str(team)])
    with Database(url) as db:
        PolicyStore(db).push("team", team, author="bench", reason="warm", config=files)
    on_files, on_store = Decider(files), Decider(config(root, store=url))
    on_files.watch("bench-files")
    on_store.watch("bench-store")
    a = on_files.decide(call(files))
    b = on_store.decide(call(files))
    assert [s.decision.rule for s in a.segments] == [s.decision.rule for s in b.segments]
    base: list[float] = []
    store: list[float] = []
    for _ in range(5):  # interleaved rounds: drift hits both alike
        base += timings(on_files, call(files), n // 5)
        store += timings(on_store, call(files), n // 5)
    on_files.close()
    on_store.close()
    print(f"warm decision, {rules} rules, 3 segments, {n} calls each:")
    print(f"  files (baseline): p50 {pct(base, .5):.3f} ms  p99 {pct(base, .99):.3f} ms")
    print(f"  PostgreSQL store: p50 {pct(store, .5):.3f} ms  p99 {pct(store, .99):.3f} ms")
    print(f"  ratio store/files: p50 {pct(store, .5) / pct(base, .5):.2f}  "
          f"p99 {pct(store, .99) / pct(base, .99):.2f}  (target ≈ 1.0)")


def child(config_file: str) -> None:
    """The other process: decide in a tight loop, print when the version changes."""
    cfg = load_config(Path(config_file))
    decider = Decider(cfg)
    decider.watch("bench-child")
    info = call(cfg, "rm -rf build")
    done = threading.Event()

    def until_stdin_closes() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    last = None
    print("ready", flush=True)
    while not done.is_set():
        version = decider.decide(info).policy_version
        if version != last:
            print(f"{time.time():.6f} {version}", flush=True)
            last = version
    decider.close()


def visibility(root: Path, url: str, pushes: int, label: str, poll_ms: int) -> None:
    team = root / f"vis-{label}"
    states = [("p, agent, *, rm *, deny\n", "agent, default, deny, rm -rf build\n"),
              ("p, agent, *, rm *, ask\n", "agent, default, ask, rm -rf build\n")]
    write_set(team, *states[0])
    db = Database(url)
    store = PolicyStore(db)
    store.push("vis", team, author="bench", reason="start")
    cfg_file = root / f"{label}.toml"
    cfg_file.write_text(f'[policy]\nstore = "{url}"\nstore_sets = ["vis"]\n'
                        f"reload_poll_ms = {poll_ms}\n"
                        f'[executor]\nworkspace = "{root / "ws"}"\n'
                        f'[audit]\npath = "{root / "audit.jsonl"}"\n')
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(cfg_file)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    assert proc.stdin is not None
    out = proc.stdout
    reader = threading.Thread(target=lambda: [lines.put(x.strip()) for x in out], daemon=True)
    reader.start()
    assert lines.get(timeout=60) == "ready"
    latencies = []
    try:
        for n in range(pushes):
            write_set(team, *states[(n + 1) % 2])
            version = store.push("vis", team, author="bench", reason=f"push {n}")
            committed = time.time()
            while True:
                seen, got = lines.get(timeout=30).split()
                if got == str(version):
                    latencies.append((float(seen) - committed) * 1000)
                    break
            time.sleep(0.05)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        reader.join(timeout=30)
        out.close()
        db.close()
    print(f"reload visible in another process, {label}, {pushes} pushes: median "
          f"{statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms"
          + ("  (targets: median <= 50 ms, max <= 1000 ms)" if label == "PostgreSQL" else ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--pushes", type=int, default=20)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    from tests.pgcluster import Cluster

    with Cluster(fsync=True) as cluster, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.chdir(root)
        warm(root, cluster.create_database(), args.rules, args.calls)
        visibility(root, cluster.create_database(), args.pushes, "PostgreSQL", 1000)
        visibility(root, f"sqlite://{root / 'vis.db'}", args.pushes, "SQLite", 1000)


if __name__ == "__main__":
    main()
