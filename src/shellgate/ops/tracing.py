"""One OpenTelemetry span per tool call (``[observability] otel = true``).

The span is ``shellgate.<tool>`` (``bash``, ``bash_output``, ``bash_kill``; a
tool name the gate does not know is ``shellgate.unknown_tool``, since the name is
the model's input), from :func:`opentelemetry.trace.get_tracer` ``("shellgate")``:
the host configures the SDK and its exporter, shellgate only uses the API (with
no SDK configured the spans are OpenTelemetry's no-ops). The span is current
for the duration of the call, so spans the host's instrumentation makes inside
it (a database driver, an HTTP client) nest under it.

Attributes come from the call's audit records as they are written (see
:mod:`shellgate.ops.context`), so a span says what the trail says:
``shellgate.call_id``, ``shellgate.tool``, ``shellgate.subject``,
``shellgate.tenant``, ``shellgate.effect``, ``shellgate.layer``,
``shellgate.rule``, ``shellgate.executor``, ``shellgate.approval.answer``,
``shellgate.approval.approver``, ``shellgate.exit_code``, ``shellgate.signal``,
``shellgate.timed_out``, ``shellgate.task_id`` (a background call), ``shellgate.via``
(``decide`` for :meth:`Gate.decide`) and ``shellgate.outcome`` (the
``ToolResult`` outcome: ``ok``, ``denied``, ``not approved``, ``error``,
``aborted``; ``decided`` for a decide). The command itself is never an
attribute: it may hold secrets, and the audit trail has it under the call_id.

Status: error for ``denied``, ``not approved``, ``error`` and ``aborted``
(description: the outcome); an exception escaping the call is recorded on the
span. Child spans ``shellgate.decide``, ``shellgate.approve`` (only when someone
was asked) and ``shellgate.execute`` (only when a command was started) cover
each step, timed by when its record was written.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Protocol

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

TOOLS = ("bash", "bash_output", "bash_kill")
ERROR_OUTCOMES = frozenset({"denied", "not approved", "error", "aborted"})
NOT_RUN = frozenset({"denied", "not approved"})  # result outcomes with nothing executed
MAX_ATTRIBUTE_CHARS = 1000


class Scope(Protocol):
    """What a span reads of the call it follows (:class:`shellgate.ops.context.CallScope`).

    A protocol rather than an import: the context module loads this one lazily,
    only when tracing is on, and this one needs nothing of it but these names.
    """

    @property
    def tool(self) -> str: ...

    @property
    def subject(self) -> str: ...

    @property
    def tenant(self) -> str: ...

    @property
    def via(self) -> str | None: ...


class GateTracer:
    """The gate's tracer: ``get_tracer("shellgate")``, one :class:`CallSpan` a call."""

    def __init__(self) -> None:
        self.tracer = trace.get_tracer("shellgate")

    @contextmanager
    def start(self, scope: Scope) -> Iterator[CallSpan]:
        span = CallSpan(self.tracer, scope)
        with trace.use_span(
            span.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            yield span


def _text(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS] + "…"


class CallSpan:
    """The span of one call, annotated from its records (see the module doc)."""

    def __init__(self, tracer: trace.Tracer, scope: Scope) -> None:
        self._tracer = tracer
        self._mark = time.time_ns()  # where the next child span starts
        attributes: dict[str, str] = {
            "shellgate.tool": _text(scope.tool),
            "shellgate.subject": _text(scope.subject),
            "shellgate.tenant": _text(scope.tenant),
        }
        if scope.via is not None:
            attributes["shellgate.via"] = scope.via
        name = scope.tool if scope.tool in TOOLS else "unknown_tool"
        self.span = tracer.start_span(
            f"shellgate.{name}", start_time=self._mark, attributes=attributes
        )

    def _child(self, step: str) -> None:
        """A child span for the step that just ended (since the previous one)."""
        now = time.time_ns()
        child = self._tracer.start_span(
            f"shellgate.{step}",
            context=trace.set_span_in_context(self.span),
            start_time=self._mark,
        )
        child.end(end_time=now)
        self._mark = now

    def _set(self, key: str, value: object) -> None:
        if isinstance(value, bool | int | float):
            self.span.set_attribute(f"shellgate.{key}", value)
        elif isinstance(value, str):
            self.span.set_attribute(f"shellgate.{key}", _text(value))

    def record(self, record: Mapping[str, object]) -> None:
        kind = record.get("type")
        self._set("call_id", record.get("call_id"))
        if kind == "decision":
            self._set("effect", record.get("decision"))
            for key in ("layer", "rule", "executor"):
                self._set(key, record.get(key))
            self._child("decide")
        elif kind == "approval":
            self._set("approval.answer", record.get("answer"))
            self._set("approval.approver", record.get("approver"))
            if "question" in record:  # someone (or something) was asked
                self._child("approve")
            else:
                self._mark = time.time_ns()
        elif kind in ("result", "started"):
            for key in ("exit_code", "signal", "timed_out", "executor", "task_id"):
                self._set(key, record.get(key))
            if record.get("outcome") not in NOT_RUN:
                self._child("execute")

    def end(self, outcome: str, exc: BaseException | None = None) -> None:
        self._set("outcome", outcome)
        if exc is not None:
            self.span.record_exception(exc)
        if outcome in ERROR_OUTCOMES:
            self.span.set_status(Status(StatusCode.ERROR, outcome))
        self.span.end()
