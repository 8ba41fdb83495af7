"""A plugin layer's time budget is enforced while it runs: a hung plugin is a deny, not a hang.

The hanging plugin is real (loaded by name from an installed entry point, or
registered with ``Decider.register``) and blocks on an Event that the test
releases at its end; a timer releases it too, so that a regression fails the test
instead of hanging it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shellgate.approval import AllowApprover
from shellgate.config import Config, load_config
from shellgate.decider import Decider
from shellgate.gate import Gate
from shellgate.hookspecs import hookimpl
from shellgate.models import Analysis, CallInfo, Decision, Segment
from shellgate.policy.deadline import LayerRunner
from shellgate.policy.engine import Layer, decide, layers_of, new_plugin_manager
from shellgate.policy.loader import SHIPPED_MODEL

ROOT = Path(__file__).resolve().parents[2]
BUDGET_MS = 200
SAFETY_S = 20.0  # a regression (an unbounded wait) ends here instead of hanging the suite

PLUGIN_CODE = '''
import threading

RELEASE = threading.Event()
ENTERED = threading.Event()
CALLS = []

class Hangs:
    """Blocks on RELEASE for "sleep" commands; abstains on everything else."""

    @hookimpl
    def shellgate_check(self, segment):
        CALLS.append(segment.argv)
        if segment.argv[:1] == ("sleep",):
            ENTERED.set()
            RELEASE.wait()
        return None

class HangsForGood:
    @hookimpl
    def shellgate_check(self, segment):
        threading.Event().wait()
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[ModuleType]:
    """The ``sghang_demo`` module, installed with its entry points; released at the end."""
    site = tmp_path / "site"
    dist = site / "sghang_demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sghang-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[shellgate]\nhangs = sghang_demo:Hangs\nhangs-for-good = sghang_demo:HangsForGood\n"
    )
    code = "from shellgate.hookspecs import hookimpl\n" + textwrap.dedent(PLUGIN_CODE)
    (site / "sghang_demo.py").write_text(code)
    sys.path.insert(0, str(site))
    module = importlib.import_module("sghang_demo")
    valve = threading.Timer(SAFETY_S, module.RELEASE.set)
    valve.start()
    try:
        yield module
    finally:
        module.RELEASE.set()
        valve.cancel()
        sys.path.remove(str(site))
        sys.modules.pop("sghang_demo", None)


def write_set(root: Path, rows: str, name: str = "set") -> Path:
    """A policy set directory: the shipped model and ``rows`` as policy.csv."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED_MODEL, directory / "model.conf")
    (directory / "policy.csv").write_text(rows, encoding="utf-8")
    return directory


def call(command: str) -> CallInfo:
    return CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="s", workdir="/tmp", workspace="/tmp")


def config(root: Path, *plugins: str, budget_ms: int = BUDGET_MS) -> Config:
    policy = write_set(root, "p, agent, *, sleep *, allow\np, agent, *, echo *, allow\n")
    (root / "ws").mkdir(exist_ok=True)
    return load_config(
        None,
        executor={"workspace": str(root / "ws")},
        audit={"path": str(root / "audit.jsonl")},
        policy={"paths": [str(policy)], "plugins": list(plugins), "plugin_timeout_ms": budget_ms},
    )


def layer_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "shellgate-layers")


async def test_a_hung_plugin_is_denied_in_time_and_the_loop_runs_on(
    tmp_path: Path, plugin: ModuleType
) -> None:
    async with Gate(config(tmp_path, "hangs"), approver=AllowApprover()) as gate:
        started = time.monotonic()
        pending = asyncio.ensure_future(
            gate.call("bash", {"command": "sleep 31.4401", "description": "d"})
        )
        # Another coroutine progresses while the plugin hangs: the loop is not blocked.
        assert await asyncio.to_thread(plugin.ENTERED.wait, SAFETY_S)
        progressed = asyncio.Event()
        asyncio.get_running_loop().call_soon(progressed.set)
        await progressed.wait()
        assert not pending.done()
        result = await pending
        elapsed = time.monotonic() - started
    assert elapsed < BUDGET_MS / 1000 * 10
    assert result.outcome == "denied"
    assert result.text == (
        f"Error: denied by hangs: policy layer 'hangs' did not answer within its {BUDGET_MS} ms "
        "budget; denied"
    )
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert (records[0]["decision"], records[0]["layer"]) == ("deny", "hangs")
    assert records[-1]["outcome"] == "denied"


async def test_a_plugin_still_hung_is_denied_at_once_and_piles_nothing_up(
    tmp_path: Path, plugin: ModuleType
) -> None:
    async with Gate(config(tmp_path, "hangs"), approver=AllowApprover()) as gate:
        first = await gate.call("bash", {"command": "sleep 1", "description": "d"})
        assert "did not answer within" in first.text
        threads = layer_threads()
        calls = len(plugin.CALLS)
        started = time.monotonic()
        for _ in range(20):
            again = await gate.call("bash", {"command": "sleep 1", "description": "d"})
            assert again.text == (
                "Error: denied by hangs: policy layer 'hangs' is still running an earlier check "
                f"that overran its {BUDGET_MS} ms budget; denied"
            )
        # At once: waiting would take 20 budgets; this is 10 times less (and no new
        # thread, no new call of the plugin).
        assert time.monotonic() - started < 20 * BUDGET_MS / 1000 / 10
        assert layer_threads() == threads
        assert len(plugin.CALLS) == calls
        plugin.RELEASE.set()
        # Once its late check returned, the plugin is asked again (and abstains).
        deadline = time.monotonic() + SAFETY_S
        while True:
            later = await gate.call("bash", {"command": "echo back", "description": "d"})
            if not later.is_error or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
        assert later.text == "back\n"


def test_the_sync_decider_and_a_registered_plugin_get_the_same_deadline(
    tmp_path: Path, plugin: ModuleType
) -> None:
    decider = Decider(config(tmp_path))
    decider.register(plugin.Hangs(), name="mine")
    started = time.monotonic()
    verdict = decider.decide(call(command="echo fine; sleep 5"))
    assert time.monotonic() - started < BUDGET_MS / 1000 * 10
    assert verdict.effect == "deny"
    assert verdict.decision.layer == "mine"
    assert "policy layer 'mine' did not answer within its 200 ms budget" in verdict.decision.reason
    assert [sv.decision.effect for sv in verdict.segments] == ["allow", "deny"]


def test_shellgate_check_denies_a_plugin_that_never_returns(
    tmp_path: Path, plugin: ModuleType
) -> None:
    policy = write_set(tmp_path, "p, agent, *, echo *, allow\n", name="cli-set")
    cfg = tmp_path / "shellgate.toml"
    cfg.write_text(
        f'[policy]\npaths = ["{policy}"]\nplugins = ["hangs-for-good"]\n'
        f"plugin_timeout_ms = {BUDGET_MS}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(ROOT / "src")])
    # The daemon worker stays stuck in the plugin: the process must still exit.
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--config", str(cfg), "--json", "--",
         "echo hi"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 11, done.stderr
    out = json.loads(done.stdout)
    assert (out["decision"], out["layer"]) == ("deny", "hangs-for-good")
    assert out["reason"] == (
        f"policy layer 'hangs-for-good' did not answer within its {BUDGET_MS} ms budget; denied"
    )


class Spy:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def shellgate_check(self, segment: Segment) -> None:
        self.seen.append(segment.command)


def test_a_guarded_layer_keeps_the_waterfall_order_and_veto() -> None:
    def deny_b(segment: Segment) -> Decision | None:
        if segment.command == "b":
            return Decision(effect="deny", reason="no b", layer="builtin")
        return None

    spy = Spy()
    pm = new_plugin_manager()
    pm.register(spy, name="spy")
    builtin = Layer(name="builtin", check=deny_b, argnames=("segment",))
    layers = [builtin, *layers_of(pm, builtin={"builtin"})]
    assert [layer.guarded for layer in layers] == [False, True]
    segments = tuple(Segment(text=c, argv=(c,)) for c in ("a", "b", "c"))
    info = CallInfo(tool="bash", command="a; b; c", subject="s", tenant="t", session="x",
                    workdir="/", workspace="/")
    verdict = decide(info, Analysis(command="a; b; c", segments=segments), layers, default="ask")
    assert spy.seen == ["a"]  # asked on its worker for a; nothing at or after b's veto
    assert [sv.decision.effect for sv in verdict.segments] == ["ask", "deny", "deny"]
    assert verdict.decision.reason == "no b"


def test_a_guarded_layer_that_raises_anything_fails_closed() -> None:
    class Exits:
        @hookimpl
        def shellgate_check(self) -> None:
            raise SystemExit(3)

    pm = new_plugin_manager()
    pm.register(Exits(), name="exits")
    info = CallInfo(tool="bash", command="a", subject="s", tenant="t", session="x",
                    workdir="/", workspace="/")
    analysis = Analysis(command="a", segments=(Segment(text="a", argv=("a",)),))
    verdict = decide(info, analysis, layers_of(pm, builtin=()), default="allow")
    assert verdict.effect == "deny"
    assert verdict.decision.reason.startswith("policy layer 'exits' failed (SystemExit: 3)")


EFFECTS = st.sampled_from(["allow", "ask", "deny", None])
RUNNER = LayerRunner()  # one for every example: no thread per example


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(EFFECTS, min_size=3, max_size=3), min_size=1, max_size=5),
    st.integers(min_value=0, max_value=5),
)
def test_guarded_layers_ask_and_decide_exactly_as_one_segment_at_a_time(
    matrix: list[list[str | None]], split: int
) -> None:
    """Built-ins first for every segment, plugins on a worker after: nothing observable moves."""
    commands = ("c0", "c1", "c2")
    asked: list[tuple[str, str]] = []

    def make(name: str, row: list[str | None]) -> Any:
        def check(segment: Segment) -> Decision | None:
            asked.append((name, segment.command))
            effect = row[commands.index(segment.command)]
            if effect is None:
                return None
            return Decision(effect=effect, reason=f"{name} {segment.command}", layer=name,
                            require_sandbox=name == "L0")
        return check

    layers = [Layer(name=f"L{i}", check=make(f"L{i}", row), argnames=("segment",),
                    guarded=i >= split) for i, row in enumerate(matrix)]
    info = CallInfo(tool="bash", command="c0; c1; c2", subject="s", tenant="t", session="x",
                    workdir="/", workspace="/")
    analysis = Analysis(command="c0; c1; c2",
                        segments=tuple(Segment(text=c, argv=(c,)) for c in commands))
    verdict = decide(info, analysis, layers, default="ask", runner=RUNNER)
    got_plugin_asks = [a for a in asked if int(a[0][1:]) >= split]
    asked.clear()
    reference = decide(info, analysis, [dataclasses.replace(layer, guarded=False)
                                        for layer in layers], default="ask")
    # The one-segment-at-a-time order (all inline) asks plugins exactly the same things.
    assert got_plugin_asks == [a for a in asked if int(a[0][1:]) >= split]
    assert verdict == reference
