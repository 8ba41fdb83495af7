"""Issue 12 benchmark: a cold ``shellgate hook claude-code`` against a bare Python start.

A hook runs once per tool call of its host, so its start-up is the user's
latency. This runs, alternately and N times each from this process:

* ``python -c pass`` from the same interpreter (the baseline);
* ``shellgate hook claude-code`` answering an allowed command (``git status``)
  on ``policies/default``, with a real config and audit log in a temp dir;
* ``shellgate check -- 'git status'`` on the same set, for context.

and prints each one's median (min–max) and the hook's median ratio against the
baseline (target: <= 6). The CLI is the console script next to this interpreter
when there is one (what a host runs), else ``python -m shellgate.cli``. Bytecode
for ``src/`` is compiled first: an installed copy always has it, and
``PYTHONDONTWRITEBYTECODE`` would otherwise make every run compile.
``--importtime`` also prints the slowest imports of one hook run
(``python -X importtime``). Exit 0, or 1 with ``--strict`` when the target is missed.

    python benchmarks/hook.py [-n 21] [--importtime] [--strict]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TARGET = 6.0


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "shellgate"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "shellgate.cli"]


def _setup(tmp: Path) -> tuple[Path, bytes]:
    conf = tmp / "shellgate.toml"
    conf.write_text(
        f'[executor]\nworkspace = "{tmp}"\n'
        f'[policy]\npaths = ["{ROOT / "policies" / "default"}"]\n'
        f'[audit]\npath = "{tmp / "audit.jsonl"}"\n'
    )
    payload = {
        "session_id": "benchmark",
        "transcript_path": str(tmp / "transcript.jsonl"),
        "cwd": str(tmp),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status", "description": "Show working tree status"},
        "tool_use_id": "toolu_benchmark",
    }
    return conf, json.dumps(payload).encode()


def _time(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, proc.stdout.decode() if proc.returncode in (0, 10, 11) else (
        f"exit {proc.returncode}: {proc.stderr.decode().strip()}"
    )


def _importtime(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> None:
    python = [sys.executable, "-X", "importtime", "-m", "shellgate.cli", *argv]
    proc = subprocess.run(python, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    rows: list[tuple[int, int, int, str]] = []  # self us, cumulative us, depth, module
    for line in proc.stderr.decode().splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((int(m[1]), int(m[2]), len(m[3]) // 2, m[4]))
    total = sum(row[0] for row in rows)
    print(f"imports of one hook run (python -X importtime): {total / 1000:.0f} ms in all; "
          "cumulative, two levels, over 3 ms:")
    for _, cumulative, depth, module in rows:
        if depth <= 1 and cumulative > 3000:
            print(f"  {cumulative / 1000:7.1f} ms  {'  ' * depth}{module}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=21, help="runs of each, alternately")
    parser.add_argument("--importtime", action="store_true", help="show one run's imports")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()
    compileall.compile_dir(SRC, quiet=1)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("SHELLGATE_CONFIG", None)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        conf, payload = _setup(tmp)
        cli = _cli()
        runs = {
            "bare python -c pass": ([sys.executable, "-c", "pass"], b""),
            "shellgate hook claude-code": ([*cli, "hook", "claude-code", "--config", str(conf)],
                                           payload),
            "shellgate check (context)": (
                [*cli, "check", "--config", str(conf), "--", "git status"], b""
            ),
        }
        times: dict[str, list[float]] = {label: [] for label in runs}
        for label, (argv, stdin) in runs.items():  # warm the page cache, check the answers
            _, out = _time(argv, stdin, env, tmp)
            if label.startswith("shellgate hook") and '"permissionDecision": "allow"' not in out:
                sys.exit(f"the hook did not allow git status: {out}")
        for _ in range(args.n):
            for label, (argv, stdin) in runs.items():
                times[label].append(_time(argv, stdin, env, tmp)[0])
        medians = {label: statistics.median(ts) for label, ts in times.items()}
        for label, ts in times.items():
            print(f"{label:>28}: {medians[label] * 1000:7.1f} ms median over {len(ts)} "
                  f"({min(ts) * 1000:.1f}-{max(ts) * 1000:.1f})")
        bare = medians["bare python -c pass"]
        ratio = medians["shellgate hook claude-code"] / bare
        check = medians["shellgate check (context)"] / bare
        print(f"hook / bare python = {ratio:.2f} (target <= {TARGET:g}); "
              f"check / bare python = {check:.2f}")
        print(f"cli: {' '.join(cli)}; cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f}")
        if args.importtime:
            _importtime(["hook", "claude-code", "--config", str(conf)], payload, env, tmp)
    if args.strict and ratio > TARGET:
        sys.exit(1)


if __name__ == "__main__":
    main()
