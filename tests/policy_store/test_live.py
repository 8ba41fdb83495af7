"""Gates on a store, in this process: live reload, fail closed, sg_hosts, the audit record."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from shellgate.config import load_config
from shellgate.errors import PolicyError, ShellgateError
from shellgate.gate import Gate
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.live import PolicyWatcher
from shellgate.store.db import Database
from shellgate.store.policies import PolicyStore
from tests.conftest import make_config, wait_until_async
from tests.policy_store.helpers import BASE, cli, write_set

RM_DENY = BASE + "p, agent, *, rm *, deny, no removing\n"


@pytest.fixture
async def gates(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``gates(**policy)``: a gate (live reload on, polling every 50 ms), closed after."""
    made: list[Gate] = []

    def factory(**policy: Any) -> Gate:
        gate = Gate(make_config(tmp_path, policy={"reload_poll_ms": 50, **policy}))
        made.append(gate)
        return gate

    yield factory
    for gate in made:
        await gate.aclose()


async def _effect(gate: Gate, command: str) -> tuple[str, str, int | None]:
    decided = await gate.decide("bash", {"command": command, "description": "t"})
    assert decided.verdict is not None
    return decided.effect, decided.reason, decided.verdict.policy_version


def _rules(gate: Gate) -> CasbinLayer:
    assert gate.decider.rules is not None
    return gate.decider.rules


def _watcher(gate: Gate) -> PolicyWatcher:
    watcher = _rules(gate)._watcher
    assert watcher is not None
    return watcher


def _hosts(url: str) -> dict[str, Any]:
    with Database(url) as db:
        return {h.gate: h for h in PolicyStore(db).hosts()}


def _push(url: str, directory: Path, name: str = "team") -> int:
    # Its rows are written for the gates' closing default here, ask (tests/conftest.py).
    config = load_config(None, policy={"default": "ask"}, audit={"path": None})
    with Database(url) as db:
        return PolicyStore(db).push(name, directory, author="t", reason="test", config=config)


def _labels(rules: CasbinLayer) -> list[str | None]:
    """The sets in force, in order, bar the packaged baseline (always there, after files)."""
    return [i.source.label for i in rules.engine.indexes if not i.source.everyone]


async def test_a_push_is_in_force_without_a_restart(
    store_url: str, gates: Callable[..., Gate], tmp_path: Path
) -> None:
    team = write_set(tmp_path / "team", BASE)
    assert _push(store_url, team) == 1
    gate = gates(store=store_url)
    assert (await _effect(gate, "rm x"))[::2] == ("ask", 1)
    write_set(team, RM_DENY, "agent, default, deny, rm x\n")
    assert _push(store_url, team) == 2
    assert await wait_until_async(lambda: _rules(gate).state.version == 2)
    effect, reason, version = await _effect(gate, "rm x")
    assert (effect, version) == ("deny", 2)
    assert "no removing" in reason
    # The decision record says which version decided; the rule ref names the store set.
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decision = [r for r in records if r.get("type") == "decision"][-1]
    assert decision["policy_version"] == 2
    assert decision["rule"] == "team/policy.csv:2"
    hosts = _hosts(store_url)
    assert hosts[gate.gate_id].policy_version == 2
    assert hosts[gate.gate_id].status == "ok"


async def test_a_broken_push_is_refused_and_the_old_policy_stays(
    store_url: str, gates: Callable[..., Gate], tmp_path: Path
) -> None:
    team = write_set(tmp_path / "team", RM_DENY, "agent, default, deny, rm x\n")
    _push(store_url, team)
    gate = gates(store=store_url)
    write_set(team, BASE + "p, agent, *, rm *, dney\n")
    with pytest.raises(PolicyError, match=r"team/policy.csv:2: unknown effect 'dney'"):
        _push(store_url, team)
    write_set(team, BASE, "agent, default, deny, rm x\n")  # loads, but its test fails
    with pytest.raises(PolicyError, match=r"team/tests.csv:1: test failed"):
        _push(store_url, team)
    gate.reload()
    assert (await _effect(gate, "rm x"))[::2] == ("deny", 1)


async def test_store_sets_come_after_the_file_sets_in_order(
    store_url: str, gates: Callable[..., Gate], tmp_path: Path
) -> None:
    _push(store_url, write_set(tmp_path / "b", "p, agent, *, rm *, ask, from b\n",
                               "agent, default, ask, rm x\n"), "b")
    _push(store_url, write_set(tmp_path / "a", "p, agent, *, rm *, ask, from a\n",
                               "agent, default, ask, rm x\n"), "a")
    local = write_set(tmp_path / "local", "p, agent, *, rm *, ask, from files\n")
    rules = _rules(gates(store=store_url))
    assert _labels(rules) == ["a", "b"]  # all, by name
    gate = gates(store=store_url, store_sets=["b", "a"], paths=[str(local)])
    effect, reason, _ = await _effect(gate, "rm x")
    assert effect == "ask"
    assert reason.startswith("from files")
    assert _labels(_rules(gate)) == [None, "b", "a"]


async def test_file_sets_reload_when_they_change(
    gates: Callable[..., Gate], tmp_path: Path
) -> None:
    team = write_set(tmp_path / "team", BASE)
    gate = gates(paths=[str(team)])
    assert (await _effect(gate, "rm x"))[0] == "ask"
    (team / "policy.csv").write_text(RM_DENY)
    assert await wait_until_async(lambda: len(_rules(gate).engine.indexes[0].source.rules) == 2)
    assert (await _effect(gate, "rm x"))[0] == "deny"
    (team / "policy.csv").write_text(RM_DENY + "p, agent, *, x, maybe\n")  # broken: kept out
    watcher = _watcher(gate)
    assert await wait_until_async(lambda: "unknown effect 'maybe'" in watcher.status)
    assert (await _effect(gate, "rm x"))[0] == "deny"
    with pytest.raises(ShellgateError, match="policy not reloaded, the last good one stays"):
        gate.reload()


async def test_a_gate_without_a_good_policy_denies_every_call(
    store_url: str, gates: Callable[..., Gate], tmp_path: Path
) -> None:
    gate = gates(store=store_url)
    for command in ("ls", "# only a comment", "true"):
        effect, reason, _ = await _effect(gate, command)
        assert effect == "deny", command
        assert "has no policy yet" in reason, (command, reason)
    result = await gate.call("bash", {"command": "ls", "description": "t"})
    assert result.outcome == "denied"
    assert "no policy in force" in result.text
    with pytest.raises(ShellgateError, match="has no policy yet"):
        gate.reload()
    config = tmp_path / "c.toml"
    config.write_text(f'[policy]\nstore = "{store_url}"\n')
    checked = cli("check", "--config", str(config), "--json", "--", "ls")
    assert checked.returncode == 11
    assert "has no policy yet" in json.loads(checked.stdout)["reason"]
    _push(store_url, write_set(tmp_path / "team", BASE))
    assert await wait_until_async(lambda: gate.decider.policy_problem is None)
    assert (await _effect(gate, "ls"))[0] == "allow"
    # A store_sets name the store lacks: denied, and the host row says why.
    other = gates(store=store_url, store_sets=["team", "missing"])
    effect, reason, _ = await _effect(other, "ls")
    assert effect == "deny"
    assert "has no set 'missing'" in reason
    hosts = _hosts(store_url)
    assert "has no set 'missing'" in hosts[other.gate_id].status


async def test_an_unreachable_store_keeps_the_last_good_policy(
    pg_cluster: Any, pg_url: str, gates: Callable[..., Gate], tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    team = write_set(tmp_path / "team", RM_DENY, "agent, default, deny, rm x\n")
    _push(pg_url, team)
    gate = gates(store=pg_url)
    name = pg_url.rsplit("/", 1)[1]

    def connections(allow: bool) -> None:
        with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {allow}')
            if not allow:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = %s", (name,))

    connections(False)
    try:
        watcher = _watcher(gate)
        assert await wait_until_async(lambda: "unreachable" in watcher.status)
        assert "the last good policy stays" in watcher.status
        assert (await _effect(gate, "rm x"))[::2] == ("deny", 1)
        with pytest.raises(ShellgateError, match=r"policy not reloaded, the last good one stays.*"
                           "not currently accepting connections"):
            gate.reload()
        assert (await _effect(gate, "rm x"))[::2] == ("deny", 1)
        polls = watcher.polls
        assert await wait_until_async(lambda: watcher.polls >= polls + 10)
        # Polled every 50 ms meanwhile, logged once per change of state: when the
        # listener broke, and when reconnecting failed.
        down = [r for r in caplog.records if r.name == "shellgate.policy"]
        assert 1 <= len(down) <= 2, [r.getMessage() for r in down]
    finally:
        connections(True)
    write_set(team, BASE, "agent, default, ask, rm x\n")
    _push(pg_url, team)
    assert await wait_until_async(lambda: _rules(gate).state.version == 2)
    assert watcher.status == "ok"
    assert (await _effect(gate, "rm x"))[::2] == ("ask", 2)


async def test_a_gate_that_starts_on_an_unreachable_store_denies(
    gates: Callable[..., Gate],
) -> None:
    gate = gates(store="postgresql://nobody@127.0.0.1:1/none")
    effect, reason, _ = await _effect(gate, "ls")
    assert effect == "deny"
    assert "no policy in force: policy store unreachable" in reason
    assert "cannot connect" in reason


async def test_closing_the_gate_stops_its_thread(store_url: str, tmp_path: Path) -> None:
    _push(store_url, write_set(tmp_path / "team", BASE))
    gate = Gate(make_config(tmp_path, policy={"store": store_url, "reload_poll_ms": 50}))
    watcher = _watcher(gate)
    assert watcher is not None
    assert watcher._thread.is_alive()
    await gate.aclose()
    assert not watcher._thread.is_alive()
    assert not [t for t in threading.enumerate() if t is watcher._thread]
    hosts = _hosts(store_url)
    assert hosts[gate.gate_id].status == "closed"


def test_the_hook_fast_path_imports_nothing_new_without_a_store(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from shellgate.config import load_config; "
            "from shellgate.decider import Decider; "
            f"d = Decider(load_config(None, policy={{'paths': []}}, "
            f"audit={{'path': {str(tmp_path / 'a.jsonl')!r}}})); "
            "print(sorted(m for m in sys.modules if m.startswith('shellgate.store') "
            "or m == 'shellgate.policy.live' or m.startswith('psycopg') or m == 'sqlite3'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


async def test_reload_reads_the_store_head_at_once(
    gates: Callable[..., Gate], tmp_path: Path
) -> None:
    """SIGHUP's path: gate.reload() with polling off picks up the new head at once."""
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE)
    _push(url, team)
    gate = gates(store=url, reload_poll_ms=0)
    write_set(team, RM_DENY, "agent, default, deny, rm x\n")
    _push(url, team)
    gate.reload()
    assert (await _effect(gate, "rm x"))[::2] == ("deny", 2)
    assert _hosts(url)[gate.gate_id].policy_version == 2
    files = gates(paths=[str(team)], reload_poll_ms=0)
    assert _rules(files)._watcher is None  # nothing to poll, nothing notifies: no thread
