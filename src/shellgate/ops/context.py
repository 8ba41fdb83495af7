"""The tool call in progress, for logs and spans: one context variable.

:class:`~shellgate.gate.Gate` opens a :func:`call_scope` for the duration of
each ``call`` and ``decide``. The ``bash`` call binds itself to it when it makes
its ``call_id`` (:func:`bind`) and shows it every record it writes
(:func:`observe`), so:

* the JSON log formatter (:mod:`shellgate.ops.logs`) adds the ``call_id``,
  subject and tenant of the call whose code logged a line — the variable is per
  asyncio task (and copied into threads the call starts), so concurrent calls
  never mix;
* the optional span (:mod:`shellgate.ops.tracing`) takes its attributes from
  the records themselves: the attributes are exactly what the audit trail says.

Cheap on purpose (this module is imported by the gate): no OpenTelemetry here.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

from shellgate.errors import ConfigError

if TYPE_CHECKING:
    from shellgate.config import Config


MAX_TOOL_CHARS = 100


class HasCallId(Protocol):
    """A call that names itself (``BashCall``: its id may change on resume)."""

    call_id: str


class CallObserver(Protocol):
    """What follows one call (a span): its records, then its end."""

    def record(self, record: Mapping[str, object]) -> None: ...

    def end(self, outcome: str, exc: BaseException | None = None) -> None: ...


class Tracer(Protocol):
    """Starts one observer per call (:class:`shellgate.ops.tracing.GateTracer`)."""

    def start(self, scope: CallScope) -> AbstractContextManager[CallObserver]: ...


class CallScope:
    """One tool call (or decide) in progress: who for, and which ``call_id``."""

    __slots__ = ("_call", "closed", "observer", "session", "subject", "tenant", "tool", "via")

    def __init__(self, tool: str, subject: str, tenant: str, session: str, via: str | None):
        self.tool = tool[:MAX_TOOL_CHARS]  # the model's input: an unknown tool can be anything
        self.subject = subject
        self.tenant = tenant
        self.session = session
        self.via = via
        self._call: HasCallId | None = None
        self.observer: CallObserver | None = None
        self.closed = False

    @property
    def call_id(self) -> str | None:
        """The bound call's id, read live (a resumed call takes its decision's id)."""
        return self._call.call_id if self._call is not None else None


_current: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "shellgate_call", default=None
)


def current() -> CallScope | None:
    """The call in progress in this task or thread, if any."""
    return _current.get()


def bind(call: HasCallId) -> None:
    """``call`` is the call of the scope in progress (the first one to bind wins)."""
    scope = _current.get()
    if scope is not None and scope._call is None and not scope.closed:
        scope._call = call


def observe(call: HasCallId, record: Mapping[str, object]) -> None:
    """``call`` wrote ``record``: its scope's observer (a span) sees it.

    Records of other calls are ignored: a background task's ending may be
    written from inside a later call's task.
    """
    scope = _current.get()
    if scope is None or scope.closed or scope._call is not call or scope.observer is None:
        return
    scope.observer.record(record)


@contextmanager
def call_scope(
    tool: str,
    subject: str,
    tenant: str,
    session: str,
    tracer: Tracer | None = None,
    *,
    via: str | None = None,
) -> Iterator[CallScope]:
    """The scope of one call: set for its task, closed (and its span ended) after it.

    The caller sets the outcome with :func:`finish`; a call that raises ends
    with ``"error"`` (``"aborted"`` when cancelled) and the exception.
    """
    scope = CallScope(tool, subject, tenant, session, via)
    token = _current.set(scope)
    try:
        if tracer is None:
            yield scope
            return
        with tracer.start(scope) as observer:
            scope.observer = observer
            try:
                yield scope
            except BaseException as exc:
                cancelled = isinstance(exc, asyncio.CancelledError)
                finish(scope, "aborted" if cancelled else "error", exc)
                raise
            # left without an outcome (a bug): say so rather than lose the span
            finish(scope, "error")
    finally:
        scope.closed = True
        _current.reset(token)


def finish(scope: CallScope, outcome: str, exc: BaseException | None = None) -> None:
    """The call ended with ``outcome`` (``ToolResult.outcome``): end its span (once)."""
    if scope.closed:
        return
    scope.closed = True
    if scope.observer is not None:
        scope.observer.end(outcome, exc)


def make_tracer(config: Config) -> Tracer | None:
    """The gate's tracer for ``[observability] otel`` (None when off: nothing imported).

    Raises :class:`~shellgate.errors.ConfigError` at gate start when OpenTelemetry's
    API is not installed.
    """
    if not config.observability.otel:
        return None
    try:
        from shellgate.ops.tracing import GateTracer
    except ImportError as exc:
        raise ConfigError(
            "[observability] otel = true needs opentelemetry-api, which is not installed "
            f"({exc}): pip install 'shellgate[fleet]', and configure an OpenTelemetry SDK "
            "in the host (docs/operations.md)"
        ) from exc
    return GateTracer()
