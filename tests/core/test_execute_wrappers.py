"""Failing ``shellgate_execute`` wrappers: every call that started is answered and recorded.

Real plugin objects (registered with ``Decider.register`` or loaded by name from
config through an installed entry point), real processes, the real audit log.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import AllowApprover
from shellgate.audit import verify
from shellgate.gate import Gate
from shellgate.hookspecs import hookimpl
from shellgate.models import RunResult
from tests.conftest import make_config

PLUGIN_CODE = '''
from shellgate.hookspecs import hookimpl

class FailsAfter:
    @hookimpl(wrapper=True)
    def shellgate_execute(self, plan):
        yield
        raise RuntimeError("metrics backend down")
'''


class FailsAfter:
    """Raises after the command ran (a metrics exporter whose backend is down)."""

    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        yield  # the result is dropped: this wrapper only fails
        raise RuntimeError("metrics backend down")


class FailsBefore:
    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        raise RuntimeError("tracing not configured")
        return (yield)  # never reached: it only makes this a generator


class YieldsTwice:
    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        result = yield
        yield
        return result


class Recorder:
    """An outer wrapper: records what it was handed, and tries to hide a failure."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        try:
            result = yield
        except Exception as exc:
            self.seen.append(f"thrown: {exc}")
            return RunResult(exit_code=0, duration_ms=0, executor="local",
                             sandbox_mode="workspace-write")  # ignored: the failure stands
        self.seen.append("result")
        return result


class PlainExecute:
    @hookimpl
    def shellgate_execute(self, plan: dict[str, Any]) -> None:
        plan["executor"] = "bwrap"


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[None]:
    """``fails-after`` installed as a ``shellgate`` entry point (loaded only when named)."""
    site = tmp_path / "site"
    dist = site / "sgwrap_demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sgwrap-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[shellgate]\nfails-after = sgwrap_demo:FailsAfter\n")
    (site / "sgwrap_demo.py").write_text(textwrap.dedent(PLUGIN_CODE))
    sys.path.insert(0, str(site))
    try:
        yield
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("sgwrap_demo", None)


def records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "audit.jsonl"
    assert verify(path).ok
    return [json.loads(line) for line in path.read_text().splitlines()]


def gate_with(tmp_path: Path, how: str, **plugins: object) -> Gate:
    names = ["fails-after"] if how == "config" else []
    gate = Gate(make_config(tmp_path, policy={"plugins": names}), approver=AllowApprover())
    for name, plugin in plugins.items():
        gate.decider.register(plugin, name=name)
    return gate


@pytest.mark.parametrize("how", ["register", "config"])
async def test_a_wrapper_failing_after_the_run_still_answers_and_records(
    tmp_path: Path, installed: None, how: str
) -> None:
    plugins = {"fails-after": FailsAfter()} if how == "register" else {}
    async with gate_with(tmp_path, how, **plugins) as gate:
        marker = gate.executor.workspace / "ran"
        result = await gate.call(
            "bash", {"command": f"touch {marker}; echo secret-output", "description": "d"}
        )
    assert marker.exists()  # it ran: that cannot be undone, so the model is told
    assert result.is_error
    assert result.outcome == "error"
    assert result.text == (
        "Error: the command ran and ended [status: completed, exit code: 0], but execute "
        "wrapper 'fails-after' failed after the command ran (RuntimeError: metrics backend "
        "down); its output is withheld"
    )
    assert "secret-output" not in result.text
    trail = records(tmp_path)
    decision, outcome = trail[0], trail[-1]
    assert [r["type"] for r in trail] == ["decision", "approval", "result"]
    assert outcome["call_id"] == decision["call_id"]
    assert (outcome["is_error"], outcome["outcome"], outcome["exit_code"]) == (
        True, "wrapper error", 0
    )
    assert outcome["stdout_bytes"] == len("secret-output\n")
    assert "execute wrapper 'fails-after' failed after the command ran" in outcome["error"]


async def test_a_background_wrapper_failure_still_records_and_notifies(tmp_path: Path) -> None:
    loop_errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: loop_errors.append(ctx))
    async with gate_with(tmp_path, "register", **{"fails-after": FailsAfter()}) as gate:
        started = await gate.call(
            "bash", {"command": "echo bg", "description": "d", "run_in_background": True}
        )
        assert started.text == "started background task bash-1"
        await gate.wait_task("bash-1")
        await asyncio.sleep(0)  # the registry's own done-callback runs after ours
        notices = gate.pop_notices(gate.owner(None, None, None))
    assert notices == [
        "background task bash-1 (echo bg) finished [status: completed, exit code: 0]. "
        "Read its output with bash_output."
    ]
    assert loop_errors == []  # nothing escaped the done-callback
    result = [r for r in records(tmp_path) if r["type"] == "result"]
    assert len(result) == 1
    assert (result[0]["task_id"], result[0]["outcome"], result[0]["exit_code"]) == (
        "bash-1", "wrapper error", 0
    )
    assert "execute wrapper 'fails-after' failed" in result[0]["error"]


async def test_a_wrapper_failing_before_its_yield_fails_closed(tmp_path: Path) -> None:
    outer = Recorder()
    # Registered last, so outermost: entered first, and handed the failure.
    async with gate_with(tmp_path, "register", **{"fails-before": FailsBefore(),
                                                  "recorder": outer}) as gate:
        marker = gate.executor.workspace / "ran"
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "d"})
    assert not marker.exists()
    assert result.is_error
    assert result.text == (
        "Error: execute wrapper 'fails-before' failed before the run (RuntimeError: tracing "
        "not configured); nothing ran"
    )
    assert outer.seen == [f"thrown: {result.text.removeprefix('Error: ')}"]
    outcome = records(tmp_path)[-1]
    assert (outcome["type"], outcome["outcome"]) == ("result", "execution error")
    assert "'fails-before'" in outcome["error"]


async def test_an_outer_wrapper_cannot_hide_an_inner_failure(tmp_path: Path) -> None:
    outer = Recorder()
    async with gate_with(tmp_path, "register", twice=YieldsTwice(), recorder=outer) as gate:
        result = await gate.call("bash", {"command": "echo hi", "description": "d"})
    assert result.is_error
    assert "execute wrapper 'twice' yielded a second time after the command ran" in result.text
    assert len(outer.seen) == 1
    assert outer.seen[0].startswith("thrown: execute wrapper 'twice'")
    assert records(tmp_path)[-1]["outcome"] == "wrapper error"


async def test_a_plain_execute_hook_put_on_the_manager_directly_fails_closed(
    tmp_path: Path,
) -> None:
    async with gate_with(tmp_path, "register") as gate:
        gate.decider.pm.register(PlainExecute(), name="plain")  # bypasses the start-up check
        marker = gate.executor.workspace / "ran"
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "d"})
    assert not marker.exists()
    assert result.text == (
        "Error: execute hook of plugin 'plain' is not declared @hookimpl(wrapper=True); "
        "refused, nothing ran"
    )
    assert records(tmp_path)[-1]["outcome"] == "execution error"


async def test_a_refused_background_start_is_recorded(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, executor={"max_tasks": 1})
    async with Gate(cfg, approver=AllowApprover()) as gate:
        bg = {"command": "sleep 31.4301", "description": "d", "run_in_background": True}
        assert not (await gate.call("bash", bg)).is_error
        refused = await gate.call("bash", bg)
    assert refused.is_error
    assert "too many background tasks running (1 of 1)" in refused.text
    trail = records(tmp_path)
    calls = list(dict.fromkeys(r["call_id"] for r in trail))
    assert len(calls) == 2
    second = [r for r in trail if r["call_id"] == calls[1]]
    assert [r["type"] for r in second] == ["decision", "approval", "result"]
    assert "too many background tasks" in second[-1]["error"]


async def test_a_cancelled_call_is_recorded_as_aborted(tmp_path: Path) -> None:
    from tests.conftest import pids_with_arg, wait_until

    async with gate_with(tmp_path, "register") as gate:
        call = asyncio.ensure_future(
            gate.call("bash", {"command": "sleep 31.4302", "description": "d"})
        )
        assert await asyncio.to_thread(wait_until, lambda: bool(pids_with_arg("31.4302")), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    assert not pids_with_arg("31.4302")
    last = records(tmp_path)[-1]
    assert (last["type"], last["outcome"], last["is_error"]) == ("result", "aborted", True)


class ExitsAfter:
    """Calls ``sys.exit`` after the run: a BaseException, not an Exception."""

    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        yield
        raise SystemExit(3)


class InterruptsBefore:
    @hookimpl(wrapper=True)
    def shellgate_execute(self) -> Generator[None, RunResult, RunResult]:
        raise KeyboardInterrupt
        return (yield)  # never reached: it only makes this a generator


@pytest.mark.parametrize("background", [False, True])
async def test_a_wrapper_raising_systemexit_neither_ends_the_gate_nor_skips_the_record(
    tmp_path: Path, background: bool
) -> None:
    async with gate_with(tmp_path, "register", exits=ExitsAfter()) as gate:
        result = await gate.call(
            "bash", {"command": "echo x", "description": "d", "run_in_background": background}
        )
        if background:
            await gate.wait_task("bash-1")
            await asyncio.sleep(0)
        else:
            assert result.is_error
            assert "execute wrapper 'exits' failed after the command ran (SystemExit: 3)" in (
                result.text
            )
        after = await gate.call("bash", {"command": "echo still-serving", "description": "d"})
    assert "still-serving" not in after.text  # the wrapper fails this call too, but answers
    outcomes = [r for r in records(tmp_path) if r["type"] == "result"]
    assert [r["outcome"] for r in outcomes] == ["wrapper error", "wrapper error"]
    assert all("(SystemExit: 3)" in r["error"] for r in outcomes)


async def test_a_wrapper_raising_keyboardinterrupt_before_its_yield_fails_closed(
    tmp_path: Path,
) -> None:
    async with gate_with(tmp_path, "register", interrupts=InterruptsBefore()) as gate:
        marker = gate.executor.workspace / "ran"
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "d"})
    assert not marker.exists()
    assert result.text == (
        "Error: execute wrapper 'interrupts' failed before the run (KeyboardInterrupt); "
        "nothing ran"
    )
    assert records(tmp_path)[-1]["outcome"] == "execution error"
