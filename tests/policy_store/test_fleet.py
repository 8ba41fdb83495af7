"""Gates in separate processes on one PostgreSQL store: a push is in force in every one
within a second, and under a reload race no check ever sees a half-applied change."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shellgate.store.db import Database
from shellgate.store.policies import PolicyStore
from tests.policy_store.helpers import BASE, cli, write_set

ROOT = Path(__file__).resolve().parents[2]


class Worker:
    """``tests/policy_store/gate_worker.py`` in a child process, its lines collected."""

    def __init__(self, config: Path, command: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("SHELLGATE_CONFIG", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.policy_store.gate_worker", str(config), command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[tuple[float, int | None, str, int]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        assert self.lines.get(timeout=60) == "ready"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def drain(self) -> None:
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return
            t, version, answer, count = line.split("\t")
            self.seen.append((float(t), None if version == "None" else int(version), answer,
                              int(count)))

    def wait_for(self, version: int, timeout_s: float = 10.0) -> tuple[float, str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.drain()
            for t, v, answer, _ in self.seen:
                if v == version:
                    return t, answer
            time.sleep(0.005)
        raise AssertionError(f"version {version} not seen: {self.seen[-3:]}")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self._reader.join(timeout=30)  # it ends with stdout
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.drain()


def _config(tmp_path: Path, url: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    config = tmp_path / "gate.toml"
    # reload_poll_ms = 0: no polling, so only the notification can be this fast.
    config.write_text(f'[policy]\nstore = "{url}"\nreload_poll_ms = 0\ndefault = "ask"\n'
                      f'[executor]\nworkspace = "{ws}"\n'
                      f'[audit]\npath = "{tmp_path / "audit.jsonl"}"\n')
    return config


def test_a_pushed_rule_is_in_force_in_two_gate_processes_within_a_second(
    pg_url: str, tmp_path: Path
) -> None:
    team = write_set(tmp_path / "team", BASE)
    with Database(pg_url) as db:
        PolicyStore(db).push("team", team, author="t", reason="start")
    workers = [Worker(_config(tmp_path, pg_url), "rm -rf build") for _ in range(2)]
    try:
        for worker in workers:
            assert worker.wait_for(1)[1] == "ask:None"
        write_set(team, BASE + "p, agent, *, rm *, deny, no removing\n",
                  "agent, default, deny, rm -rf build\n")
        pushed = cli("policy", "push", str(team), "--reason", "deny rm", "--store", pg_url)
        committed = time.time()  # the push committed before its process ended
        assert pushed.returncode == 0, pushed.stderr
        for worker in workers:
            seen, answer = worker.wait_for(2)
            assert answer == "deny:team/policy.csv:2"
            assert seen - committed < 1.0
    finally:
        for worker in workers:
            worker.stop()


def _version_text(flip: bool) -> tuple[str, str, dict[str, str]]:
    """Four rules that all change between A and B (effects and lines)."""
    effects = {"a": "allow", "b": "ask", "c": "allow", "d": "ask"}
    if flip:
        effects = {k: ("ask" if v == "allow" else "allow") for k, v in effects.items()}
    order = "dcba" if flip else "abcd"
    policy = "".join(f"p, agent, *, echo {k} *, {effects[k]}\n" for k in order)
    tests = "".join(f"agent, default, {effects[k]}, echo {k}\n" for k in "abcd")
    answer = ",".join(f"{effects[k]}:s/policy.csv:{order.index(k) + 1}" for k in "abcd")
    return policy, tests, {"answer": answer}


@pytest.mark.parametrize("pushes", [20])
def test_no_check_sees_a_half_applied_change(pg_url: str, tmp_path: Path, pushes: int) -> None:
    directory = tmp_path / "s"
    db = Database(pg_url)
    store = PolicyStore(db)
    expected: dict[int, str] = {}

    def push(flip: bool) -> int:
        policy, tests, meta = _version_text(flip)
        write_set(directory, policy, tests)
        version = store.push("s", directory, author="t", reason="race")
        expected[version] = meta["answer"]
        return version

    push(False)
    command = "echo a 1; echo b 2 | echo c 3 && echo d 4"
    workers = [Worker(_config(tmp_path, pg_url), command) for _ in range(2)]
    try:
        for n in range(pushes):
            version = push(n % 2 == 0)
            for worker in workers:
                worker.wait_for(version)
    finally:
        for worker in workers:
            worker.stop()
        db.close()
    checks = 0
    for worker in workers:
        assert worker.seen, "no answers"
        for _, seen, answer, count in worker.seen:
            assert seen in expected, seen
            assert answer == expected[seen], (seen, answer)  # one whole version
            checks += count
        assert {v for _, v, _, _ in worker.seen} >= set(expected) - {1}  # 1: maybe never
    assert checks > 100 * len(workers)
