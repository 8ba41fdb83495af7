"""The ops tests' OpenTelemetry SDK: one in-memory exporter behind the global provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from shellgate.ops.metrics import Metrics

_EXPORTER = InMemorySpanExporter()


def _install() -> None:
    """The global provider can be set once per process: the host's job, done here once."""
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _install()
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


@pytest.fixture
def metrics() -> Iterator[Metrics]:
    """A fresh metrics state (as in a new console process), its connections closed after."""
    state = Metrics()
    yield state
    state.close()
