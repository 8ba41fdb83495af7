"""Issue 12 benchmark: a cold ``shellgate hook claude-code`` against a bare Python start.

A hook runs once per tool call of its host, so its start-up is the user's
latency. This runs, alternately and N times each from this process:

* ``python -c pass`` from the same interpreter (the baseline);
* ``shellgate hook claude-code`` answering an allowed command (``git status``)
  on ``policies/default``, with a real config and audit log in a temp dir;
* ``shellgate check -- 'git status'`` on the same set, for context.

and prints each one's median wall time (min-max) and CPU time, and their ratios
to the baseline (the target: the hook's median <= 6x). CPU time is the child's
own (user + system), steadier than wall time on a shared machine. The CLI is the
console script next to this interpreter when there is one (what a host runs),
else ``python -m shellgate.cli``. Bytecode for ``src/`` is compiled first: an
installed copy always has it, and ``PYTHONDONTWRITEBYTECODE`` would otherwise
make every run compile. Options:

* ``--floor``: also ``python -c "from pydantic import BaseModel"`` and
  shellgate's models and config loaded, what every decision pays before any of
  shellgate's own work;
* ``--base-src DIR``: also another tree's ``shellgate check`` (the commit before);
* ``--breakdown``: the hook's steps timed inside N cold processes (the calls
  ``hooks_host/run.py`` makes, one after the other), each step's median;
* ``--importtime``: the slowest imports of one hook run (``python -X importtime``).

Exit 0, or 1 with ``--strict`` when the target is missed.

    python benchmarks/hook.py [-n 21] [--importtime] [--breakdown] [--floor]
                              [--base-src DIR] [--strict]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import resource
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


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(
    argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its stdout or why it failed)."""
    cpu = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - start
    out = proc.stdout.decode() if proc.returncode in (0, 10, 11) else (
        f"exit {proc.returncode}: {proc.stderr.decode().strip()}"
    )
    return elapsed, _cpu() - cpu, out


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


# The hook's steps, timed one after the other in a cold process (argv: config, payload).
_STEPS = """
import time
marks = [("start", time.perf_counter())]
def mark(name):
    marks.append((name, time.perf_counter()))
import json, os, sys
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
from shellgate.hooks_host.hosts import CLAUDE_CODE, read_call
from shellgate.hooks_host.run import _segments
mark("hooks_host (json, typing, dataclasses)")
from shellgate.audit.log import AuditLog
mark("audit log module")
from pydantic import BaseModel
mark("pydantic (BaseModel)")
from shellgate.models import CallInfo
mark("shellgate.models (class creation)")
from shellgate.config import load_config
cfg = load_config(sys.argv[1])
mark("shellgate.config (Config built) + load")
from shellgate.decider import Decider
mark("decider modules (analysis, layers, pluggy)")
decider = Decider(cfg)
mark("Decider(): policy set loaded, layers registered")
call = read_call(CLAUDE_CODE, json.loads(sys.argv[2]))
info = CallInfo(tool="bash", command=call.command, description=call.description,
                subject=cfg.policy.subject, tenant=cfg.policy.tenant, session=call.session,
                workdir=os.path.realpath(call.workdir),
                workspace=os.path.realpath(cfg.executor.workspace))
verdict = decider.decide(info)
mark("first decision (catalog, parser, model builds)")
with AuditLog(cfg.audit.path) as log:
    log.append({"type": "decision", "segments": _segments(verdict)})
mark("audit record")
print(json.dumps([(n, t - marks[0][1]) for n, t in marks[1:]]))
"""


def _breakdown(runs: int, conf: Path, payload: bytes, env: dict[str, str], cwd: Path) -> None:
    steps: dict[str, list[float]] = {}
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", _STEPS, str(conf), payload.decode()],
            capture_output=True, env=env, cwd=cwd, check=True,
        )
        previous = 0.0
        for name, at in json.loads(proc.stdout):
            steps.setdefault(name, []).append(at - previous)
            previous = at
    print(f"the hook's steps inside a cold process (medians over {runs}):")
    for name, values in steps.items():
        print(f"  {statistics.median(values) * 1000:7.1f} ms  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=21, help="runs of each, alternately")
    parser.add_argument("--importtime", action="store_true", help="show one run's imports")
    parser.add_argument("--breakdown", action="store_true", help="time the hook's steps")
    parser.add_argument("--floor", action="store_true",
                        help="also time importing pydantic, and shellgate's models and config")
    parser.add_argument("--base-src", type=Path, metavar="DIR",
                        help="another tree's src/ (e.g. the commit before): its `check` runs too")
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
        if args.floor:  # what every decision pays before any of shellgate's own work
            runs["floor: pydantic BaseModel"] = (
                [sys.executable, "-c", "from pydantic import BaseModel"], b"")
            runs["floor: models + config"] = ([sys.executable, "-c", (
                "import os; os.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
                "import shellgate.models, shellgate.config as c; c.load_config(None)")], b"")
        base_env = env
        if args.base_src is not None:
            compileall.compile_dir(args.base_src, quiet=1)
            base_env = {**env, "PYTHONPATH": str(args.base_src.resolve())}
            runs["base: shellgate check"] = (
                [sys.executable, "-m", "shellgate.cli", "check", "--config", str(conf), "--",
                 "git status"], b"")
        times: dict[str, list[float]] = {label: [] for label in runs}
        cpus: dict[str, list[float]] = {label: [] for label in runs}
        for label, (argv, stdin) in runs.items():  # warm the page cache, check the answers
            *_, out = _time(argv, stdin, base_env if label.startswith("base:") else env, tmp)
            if label.startswith("shellgate hook") and '"permissionDecision": "allow"' not in out:
                sys.exit(f"the hook did not allow git status: {out}")
        for _ in range(args.n):
            for label, (argv, stdin) in runs.items():
                environ = base_env if label.startswith("base:") else env
                wall, cpu, _ = _time(argv, stdin, environ, tmp)
                times[label].append(wall)
                cpus[label].append(cpu)
        medians = {label: statistics.median(ts) for label, ts in times.items()}
        cpu_medians = {label: statistics.median(cs) for label, cs in cpus.items()}
        for label, ts in times.items():
            print(f"{label:>28}: {medians[label] * 1000:7.1f} ms median over {len(ts)} "
                  f"({min(ts) * 1000:.1f}-{max(ts) * 1000:.1f}); "
                  f"cpu {cpu_medians[label] * 1000:.1f} ms")
        bare, bare_cpu = medians["bare python -c pass"], cpu_medians["bare python -c pass"]
        for label in runs:
            if label != "bare python -c pass":
                target = f" (target <= {TARGET:g})" if label.startswith("shellgate hook") else ""
                print(f"{label} / bare python: median wall {medians[label] / bare:.2f}{target}, "
                      f"cpu {cpu_medians[label] / bare_cpu:.2f}")
        ratio = medians["shellgate hook claude-code"] / bare
        print(f"cli: {' '.join(cli)}; cpus: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f}")
        if args.importtime:
            _importtime(["hook", "claude-code", "--config", str(conf)], payload, env, tmp)
        if args.breakdown:
            _breakdown(args.n, conf, payload, env, tmp)
    if args.strict and ratio > TARGET:
        sys.exit(1)


if __name__ == "__main__":
    main()
