"""shellgate's log lines on stderr: the classic text, or one JSON object a line.

``[observability] log_format = "json"`` makes every line one JSON object (and
nothing else) with these keys, in this order:

``time``
    UTC, ISO 8601 with milliseconds: ``2026-12-03T19:45:18.123Z``
``level``
    ``DEBUG`` | ``INFO`` | ``WARNING`` | ``ERROR`` | ``CRITICAL``
``logger``
    the logger's name (``shellgate.mcp``, ``shellgate.approval``, ``uvicorn.error``…)
``message``
    the formatted message
``call_id``, ``subject``, ``tenant``, ``tool``
    only for a line logged by the code of a tool call in progress (the
    context variable of :mod:`shellgate.ops.context`): the same ``call_id``
    as the call's audit records
``exc``
    only when an exception is logged: its traceback, as one string

Nothing else of a log record is copied (no ``extra=`` fields), so a command's
environment can never reach a log line through this formatter. The long-running
commands (``shellgate mcp``, ``shellgate mcp --http``, ``shellgate serve``) and
``run``/``check`` call :func:`configure_logging` once, after loading the config.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Final

from shellgate.config import Config
from shellgate.ops.context import current

TEXT_FORMAT: Final = "shellgate: %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module doc for the keys)."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = int(record.created)
        millis = int((record.created - seconds) * 1000)
        line: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        scope = current()
        if scope is not None:
            if scope.call_id is not None:
                line["call_id"] = scope.call_id
            line["subject"] = scope.subject
            line["tenant"] = scope.tenant
            line["tool"] = scope.tool
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        text = json.dumps(line, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (text that was not UTF-8): escape it
            text = json.dumps(line)
        return text


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Ours, so a second :func:`configure_logging` replaces it instead of doubling lines."""


def configure_logging(
    config: Config,
    *,
    level: int | str = logging.WARNING,
    text_format: str | None = TEXT_FORMAT,
) -> None:
    """Log to stderr at ``level`` in ``config``'s ``[observability] log_format``.

    ``text`` (the default) keeps shellgate's classic lines in ``text_format``
    (``shellgate mcp`` passes ``"shellgate mcp: %(levelname)s %(name)s:
    %(message)s"``); ``text_format=None`` leaves text logging as it is (``run`` and
    ``check`` print Python's plain warnings). ``json``: one object a line
    (:class:`JsonFormatter`). Calling it again replaces the handler it installed.
    """
    json_lines = config.observability.log_format == "json"
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _Handler):
            root.removeHandler(handler)
    if not json_lines and text_format is None:
        return
    handler = _Handler(sys.stderr)
    if json_lines:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(text_format))
    root.addHandler(handler)
    root.setLevel(level)


def announcement(config: Config, program: str, logger: str, message: str) -> str:
    """A line a server always prints on stderr (its address), in the log format.

    Text: ``"{program}: {message}"`` as before; json: a ``JsonFormatter`` line
    (level ``INFO``, ``logger``), so stderr stays one JSON object a line.
    """
    if config.observability.log_format != "json":
        return f"{program}: {message}"
    record = logging.LogRecord(logger, logging.INFO, __file__, 0, message, None, None)
    return JsonFormatter().format(record)
