"""The ``shellgate_execute`` around-wrappers of one call, stepped by hand.

pluggy's own call loop is synchronous and the execution is async, so the
generators are driven here, in pluggy's order: the last-registered wrapper is the
outermost (entered first, left last).

Invariants:

* "Fails" covers every exception a plugin raises, ``SystemExit`` and
  ``KeyboardInterrupt`` included: a plugin never ends the gate or skips a record.
* A wrapper that fails before its ``yield`` (raises, returns without yielding, is
  not a wrapper at all) stops the call before anything runs: :class:`ExecutionError`
  naming the plugin. Wrappers already entered get that error thrown in.
* A wrapper that fails after its ``yield`` (raises, yields again) cannot undo the
  run: :class:`WrapperFailed` names it and carries the :class:`RunResult` as it
  stood, so the caller still records the result. The outer wrappers get the
  failure thrown in; their reaction is not allowed to hide it.
* Wrappers may only make the plan stricter (:func:`check_plan`).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Generator
from typing import Any, cast

import pluggy

from shellgate.errors import ExecutionError
from shellgate.models import MODE_ORDER, CallInfo, RunResult, SandboxMode

WrapperGen = Generator[None, RunResult, RunResult]


class WrapperFailed(ExecutionError):
    """An execute wrapper failed after the command ran; ``result`` is what ran."""

    def __init__(self, message: str, *, plugin: str, result: RunResult) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.result = result


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class Wrappers:
    """The execute wrappers around one call: ``enter`` → run → ``exit`` (or ``fail``)."""

    def __init__(self, pm: pluggy.PluginManager, call: CallInfo, plan: dict[str, Any]) -> None:
        self.impls = pm.hook.shellgate_execute.get_hookimpls()
        self.call = call
        self.plan = plan
        self.active: list[tuple[str, WrapperGen]] = []

    def enter(self) -> None:
        """Run every wrapper up to its ``yield``; raise ExecutionError if one fails."""
        given = {"call": self.call, "plan": self.plan}
        for impl in reversed(self.impls):
            name = impl.plugin_name
            if not impl.wrapper:
                # Refused at start-up (plugins.register_plugin); this catches a plugin
                # put on the manager directly: it would otherwise be skipped silently.
                raise ExecutionError(
                    f"execute hook of plugin '{name}' is not declared @hookimpl(wrapper=True); "
                    "refused, nothing ran"
                )
            try:
                gen = impl.function(**{k: v for k, v in given.items() if k in impl.argnames})
                if not inspect.isgenerator(gen):
                    raise TypeError(f"returned {type(gen).__name__}, not a generator")
                next(gen)
            except StopIteration:
                raise ExecutionError(
                    f"execute wrapper '{name}' returned without yielding; refused, nothing ran"
                ) from None
            except BaseException as exc:  # SystemExit too: a plugin never ends the gate
                raise ExecutionError(
                    f"execute wrapper '{name}' failed before the run ({_describe(exc)}); "
                    "nothing ran"
                ) from exc
            self.active.append((name, cast("WrapperGen", gen)))

    def exit(self, result: RunResult) -> RunResult:
        """Hand ``result`` out through the wrappers; raise WrapperFailed if one fails."""
        active, self.active = self.active, []
        while active:
            name, gen = active.pop()
            try:
                gen.send(result)
            except StopIteration as stop:
                if isinstance(stop.value, RunResult):
                    result = stop.value
                continue
            except BaseException as exc:  # SystemExit too: the run still gets its record
                failure = WrapperFailed(
                    f"execute wrapper '{name}' failed after the command ran ({_describe(exc)})",
                    plugin=name,
                    result=result,
                )
                failure.__cause__ = exc
            else:
                gen.close()
                failure = WrapperFailed(
                    f"execute wrapper '{name}' yielded a second time after the command ran",
                    plugin=name,
                    result=result,
                )
            self.active = active
            self.fail(failure)
            raise failure
        return result

    def fail(self, exc: BaseException) -> None:
        """Throw ``exc`` into every wrapper still open, innermost first."""
        active, self.active = self.active, []
        for _name, gen in reversed(active):
            # The original failure is what we report; a wrapper's reaction to it is not.
            with contextlib.suppress(BaseException):
                gen.throw(exc)
                gen.close()


def check_plan(plan: dict[str, Any], kind: str, mode: SandboxMode) -> None:
    """A wrapper may tighten the plan, never loosen it."""
    if plan.get("executor") not in ("local", "bwrap"):
        raise ExecutionError(f"an execute wrapper set an unknown executor {plan.get('executor')!r}")
    if kind == "bwrap" and plan["executor"] != "bwrap":
        raise ExecutionError(
            "an execute wrapper tried to run a sandboxed call unsandboxed; refused"
        )
    new_mode = plan.get("sandbox_mode")
    if new_mode not in MODE_ORDER or MODE_ORDER.index(new_mode) > MODE_ORDER.index(mode):
        raise ExecutionError(
            f"an execute wrapper tried to widen the sandbox mode to {new_mode!r}; refused"
        )
