"""Benchmark of shellgate.shell.analyse: typical agent commands and 100 KB worst cases.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/analyse.py``. Prints p50/p99 in
µs for parse + normalise of typical agent commands (50-300 characters; target
p99 <= 300 µs), with the ratio to a baseline measured in the same run (the
tree-sitter parse alone of the same commands, interleaved), and the time of
several 100 KB shapes (target <= 100 ms).
"""

from __future__ import annotations

import os
import random
import statistics
import time

from shellgate.shell.analyse import FIXED_VARIABLES, _analyse
from shellgate.shell.reader import _parser


def analyse(command: str, workdir: str = "/") -> object:
    """The analysis without its cache of recent commands: what a new command costs."""
    env = tuple(os.environ.get(name) for name in FIXED_VARIABLES)
    return _analyse(command, workdir, workdir, env, 64, 16, 10_000)[0]

TYPICAL = [
    "cd /work/project && git status --short && git diff --stat HEAD~1 | tail -n 20",
    "grep -rn --include='*.py' 'def analyse' src/ tests/ 2>/dev/null | head -50",
    "find . -name '*.pyc' -not -path './.venv/*' -exec rm -f {} + && echo cleaned",
    "python3 -m pytest tests/shell -q -x --tb=short 2>&1 | tail -30",
    "ls -la src/shellgate/shell && wc -l src/shellgate/shell/*.py | sort -n",
    "git log --oneline --graph --decorate -n 30 -- src/shellgate/policy/engine.py",
    "cat pyproject.toml | sed -n '1,40p'; echo '---'; cat README.md | head -n 40",
    "sudo -u deploy env LANG=C timeout 30 rsync -az --delete build/ /srv/www/site/",
    'for f in $(git ls-files "*.md"); do echo "== $f"; head -3 "$f"; done',
    "docker compose -f docker-compose.yml logs --tail=100 web 2>&1 | grep -i error || true",
    "bash -c 'set -euo pipefail; make clean && make -j4 all' > build.log 2>&1",
    "curl -fsSL https://example.com/install.sh -o /tmp/install.sh && sha256sum /tmp/install.sh",
    "npm run build --silent && npx eslint src --ext .ts,.tsx --max-warnings=0",
    "jq -r '.items[] | select(.status==\"open\") | .id' data/issues.json | xargs -n1 echo",
    "cat <<'EOF' > notes.txt\nfirst line\nsecond line with $dollar\nEOF\nwc -l notes.txt",
]

random.seed(4)
_WORDS = ["ls", "cat", "grep", "echo", "git", "sed", "awk", "find", "head", "tail", "wc"]


def _distinct(size: int) -> str:
    parts: list[str] = []
    length = i = 0
    while length < size:
        part = f"{random.choice(_WORDS)} file{i}.txt -n{i}"
        parts.append(part)
        length += len(part) + 2
        i += 1
    return "; ".join(parts)[:size].rsplit(";", 1)[0]


BIG = {
    "padding (echo ok; x11k) + rm": "; ".join(["echo ok"] * 11_000) + "; rm -rf /",
    "distinct simple commands": _distinct(100_000),
    "one command, 25k args": "echo " + " ".join(["arg"] * 24_000),
    "&& chain": " && ".join(["ls -la"] * 10_000),
    "heredoc body (quoted)": "cat > f <<'EOF'\n" + "line of text $x\n" * 6_000 + "EOF\n",
    "one 100 KB word": "echo " + "a" * 99_990,
    "nested $( x30k": "$(" * 24_000 + "ls" + ")" * 24_000,
    # Each escaped blank hides the rest of the line from the parser: re-read.
    "escaped blank before # (x14k)": "ls;\\ #;" * 14_000,
    "continuation before # (x9k)": "echo a\\\n#; " * 9_000,
}


def _time_once(command: str) -> float:
    start = time.perf_counter()
    analyse(command, "/work/project")
    return time.perf_counter() - start


def _parse_once(command: str) -> float:
    """The baseline: tree-sitter-bash parsing the same command, nothing else."""
    start = time.perf_counter()
    _parser.parse(command.encode("utf-8", "surrogatepass"))
    return time.perf_counter() - start


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * q) - 1)]


def typical(rounds: int = 400) -> None:
    for command in TYPICAL:  # warm up the parser and the per-argv cache honestly:
        analyse(command)  # every command is also measured cold once below
    samples: list[float] = []
    baseline: list[float] = []
    for _ in range(rounds):
        for command in TYPICAL:  # interleaved, so drift hits both alike
            baseline.append(_parse_once(command) * 1e6)
            samples.append(_time_once(command) * 1e6)
    p50, p99 = statistics.median(samples), _pct(samples, 0.99)
    b50, b99 = statistics.median(baseline), _pct(baseline, 0.99)
    lengths = [len(c) for c in TYPICAL]
    print(f"typical agent commands ({min(lengths)}-{max(lengths)} chars, {len(samples)} runs)")
    print(f"  p50 {p50:8.1f} µs   p99 {p99:8.1f} µs   (target p99 <= 300 µs)")
    print(f"  baseline, the parse alone: p50 {b50:6.1f} µs  p99 {b99:6.1f} µs;"
          f"  ratio p50 {p50 / b50:5.2f}  p99 {p99 / b99:5.2f}")


def big() -> None:
    print("100 KB commands (best of 3; target <= 100 ms)")
    for name, command in BIG.items():
        best = min(_time_once(command) for _ in range(3))
        refused = getattr(analyse(command), "refused", None)
        outcome = "refused (node budget)" if refused else "analysed"
        print(f"  {name:32s} {len(command):7d} B  {best * 1000:8.1f} ms  {outcome}")


if __name__ == "__main__":
    typical()
    big()
