"""Operations: metrics for the console's ``/metrics``, JSON logs, OpenTelemetry spans.

Nothing here is imported at gate start but :mod:`shellgate.ops.context` (a
context variable and a few small classes): :mod:`~shellgate.ops.metrics` needs
prometheus-client and is imported by the console, :mod:`~shellgate.ops.tracing`
needs opentelemetry-api and is imported only when ``[observability] otel = true``.
See docs/operations.md.
"""
