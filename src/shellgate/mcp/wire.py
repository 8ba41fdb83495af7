"""MCP's stdio wire, read strictly: a line is UTF-8 JSON-RPC, or it runs nothing.

The SDK's ``stdio_server`` decodes stdin with ``errors="replace"`` (a request
whose bytes are not UTF-8 would run with U+FFFD in their place) and drops a line
it cannot parse without answering (the client waits forever). This transport
reads the wire itself and hands the SDK only messages that passed:

1. a blank line is skipped; a line over :data:`MAX_LINE_BYTES` is dropped unread;
2. the bytes are decoded as strict UTF-8, else ``-32700`` (parse error);
3. the text is parsed as JSON (no ``NaN``/``Infinity``), else a parse error
   (answered when a lenient read of the line finds a request's id);
4. no string (key or value) may hold a lone surrogate (``"\\ud800"`` is valid
   JSON but not Unicode text), else ``-32600`` (invalid request);
5. an ``id`` must be an integer or a string, else an invalid request (the SDK
   would take the line for a notification and drop it);
6. it must be a JSON-RPC 2.0 message as the SDK models it, else ``-32600``.

A refused line is answered only when it is a request whose id can be read (an
integer, or a string that is itself clean); otherwise it is logged (stderr) and
dropped. Responses and notifications are never answered. Either way the
``on_refused`` callback sees the raw line (the server writes an audit record).

While serving, fd 0 reads ``/dev/null`` and fd 1 writes to stderr (as the SDK's
transport does), so neither a command nor a plugin can read or write the wire;
both are restored on exit. stdin is read non-blocking on the event loop, so
:meth:`Wire.hang_up` (a signal) ends the read side at once, exactly as EOF does.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from shellgate.errors import ShellgateError

logger = logging.getLogger("shellgate.mcp")

MAX_LINE_BYTES = 16 * 1024 * 1024  # bytes; far over any command the input guard lets pass
CHUNK_BYTES = 64 * 1024  # bytes per read(2)
DRAIN_S = 5.0  # seconds the writer gets to flush queued answers at the end

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@dataclass(frozen=True)
class Refused:
    """A line that reaches nobody: why (for the log), and the answer if one can be sent."""

    reason: str
    answer: types.JSONRPCError | None


def read_line(line: bytes) -> types.JSONRPCMessage | Refused | None:
    """Check one wire line (without its newline); ``None`` for a blank line."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        loose = _loads(line.decode("utf-8", "surrogateescape"))  # bad bytes: lone surrogates
        return _refuse(
            loose,
            PARSE_ERROR,
            f"parse error: the line is not UTF-8 (byte 0x{line[exc.start]:02x} at offset "
            f"{exc.start}); nothing in it was run",
        )
    message = _loads(text)
    if message is _NOT_JSON:
        # Answered when a lenient read finds a request's id, so the client is not
        # left waiting; the lenient value is used for nothing else.
        return _refuse(
            _lenient(text), PARSE_ERROR, "parse error: the line is not JSON; nothing in it was run"
        )
    where = _surrogate_in(message)
    if where is not None:
        return _refuse(
            message,
            INVALID_REQUEST,
            f"invalid request: {where} holds a lone surrogate (U+D800..U+DFFF), which is "
            "not Unicode text; nothing in it was run",
        )
    if isinstance(message, dict) and "id" in message and not _readable(message["id"]):
        # the SDK's models would read it as a notification and drop it unanswered
        return Refused("invalid request: the id is neither an integer nor a string", None)
    try:
        return types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(part) for part in first["loc"]) or "message"
        return _refuse(
            message,
            INVALID_REQUEST,
            f"invalid request: not a JSON-RPC 2.0 message ({at}: {first['msg']})",
        )


_NOT_JSON = object()


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _lenient(text: str) -> Any:
    """The JSON value a sloppy client meant, only to read its ``id``: raw control
    characters inside strings, ``NaN``, a byte-order mark, bytes after the value."""
    try:
        value, _end = json.JSONDecoder(strict=False).raw_decode(text.lstrip("\ufeff \t"))
    except (ValueError, RecursionError):
        return None
    return value


def _surrogate_in(value: Any) -> str | None:
    """Where the first lone surrogate is (``"params.arguments.command"``), else None.

    Iterative: json.loads already bounds the depth, but a walk must not recurse.
    """
    stack: list[tuple[str, Any]] = [("message", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                if _has_surrogate(key):
                    return f"a key in {where}"
                stack.append((key if where == "message" else f"{where}.{key}", child))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _readable(request_id: object) -> bool:
    """An id an answer can carry back: an integer, or a string that is Unicode text."""
    if isinstance(request_id, str):
        return not _has_surrogate(request_id)
    return isinstance(request_id, int) and not isinstance(request_id, bool)


def _refuse(message: Any, code: int, reason: str) -> Refused:
    """Answer a request whose id reads cleanly; anything else only goes to the log."""
    if isinstance(message, dict) and "method" in message and _readable(message.get("id")):
        error = types.ErrorData(code=code, message=reason)
        return Refused(reason, types.JSONRPCError(jsonrpc="2.0", id=message["id"], error=error))
    return Refused(reason, None)


class Wire:
    """The claimed stdin/stdout as the SDK's streams (see :func:`stdio_wire`)."""

    def __init__(
        self, in_fd: int, out_fd: int, on_refused: Callable[[bytes, Refused], None] | None = None
    ) -> None:
        self._in_fd, self._out_fd = in_fd, out_fd
        self._on_refused = on_refused
        to_sdk: tuple[
            MemoryObjectSendStream[SessionMessage | Exception],
            MemoryObjectReceiveStream[SessionMessage | Exception],
        ] = anyio.create_memory_object_stream(0)
        to_client: tuple[
            MemoryObjectSendStream[SessionMessage],
            MemoryObjectReceiveStream[SessionMessage],
        ] = anyio.create_memory_object_stream(64)
        self._to_sdk, self.read_stream = to_sdk
        self.write_stream, self._outbox = to_client
        self._answers = self.write_stream.clone()  # the reader's own error answers
        self._reading = anyio.CancelScope()
        self._threaded = False  # reads block in a worker thread (an fd epoll refuses)
        self.hung_up = False

    def hang_up(self) -> None:
        """End the read side now, as EOF would (idempotent; for signal handlers)."""
        self.hung_up = True
        self._reading.cancel()

    async def read(self) -> None:
        """Feed checked messages to the SDK until EOF or :meth:`hang_up`."""
        async with self._to_sdk, self._answers:
            with self._reading:
                line = bytearray()
                dropping = False  # inside a line over MAX_LINE_BYTES
                while chunk := await self._read_chunk():
                    start = 0
                    while (end := chunk.find(b"\n", start)) != -1:
                        if not dropping:
                            line += chunk[start:end]
                            if len(line) > MAX_LINE_BYTES:
                                self._too_long(bytes(line))
                            else:
                                await self._take(bytes(line))
                        line.clear()
                        dropping, start = False, end + 1
                    if dropping:
                        continue
                    line += chunk[start:]
                    if len(line) > MAX_LINE_BYTES:  # drop it now: memory stays bounded
                        self._too_long(bytes(line))
                        line.clear()
                        dropping = True
                if line and not dropping:
                    await self._take(bytes(line))

    async def _take(self, line: bytes) -> None:
        checked = read_line(line)
        if checked is None:
            return
        if isinstance(checked, Refused):
            if self._on_refused is not None:
                self._on_refused(line, checked)
            if checked.answer is None:
                logger.warning("dropped a line from the client: %s", checked.reason)
            else:
                logger.warning("answered request %r: %s", checked.answer.id, checked.reason)
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await self._answers.send(SessionMessage(checked.answer))
            return
        try:
            await self._to_sdk.send(SessionMessage(checked))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.hang_up()  # the session has ended; nobody reads any more

    def _too_long(self, head: bytes) -> None:
        """A line over the limit: dropped unread, its first part on the record."""
        logger.warning("dropped a line over %d bytes from the client unread", MAX_LINE_BYTES)
        if self._on_refused is not None:
            reason = (
                f"dropped unread: the line is over {MAX_LINE_BYTES} bytes (line_bytes and "
                "line_sha256 cover the part read before it was dropped)"
            )
            self._on_refused(head, Refused(reason, None))

    async def _read_chunk(self) -> bytes:
        if self._threaded:
            return await anyio.to_thread.run_sync(
                os.read, self._in_fd, CHUNK_BYTES, abandon_on_cancel=True
            )
        loop = asyncio.get_running_loop()
        while True:
            try:
                return os.read(self._in_fd, CHUNK_BYTES)
            except BlockingIOError:
                pass
            except OSError as exc:
                logger.warning("reading stdin failed (%s); ending the connection", exc)
                return b""
            readable = loop.create_future()
            try:
                loop.add_reader(self._in_fd, _settle, readable)
            except OSError:  # a descriptor epoll cannot watch: block in a worker thread
                os.set_blocking(self._in_fd, True)
                self._threaded = True
                return await self._read_chunk()
            try:
                await readable
            finally:
                loop.remove_reader(self._in_fd)

    async def write(self) -> None:
        """Write every message the SDK (or the reader) sends until both have closed."""
        broken = False
        async with self._outbox:
            async for message in self._outbox:
                if broken:
                    continue  # keep draining so no sender blocks on a dead client
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await anyio.to_thread.run_sync(
                        _write_all, self._out_fd, data.encode() + b"\n", abandon_on_cancel=True
                    )
                except OSError as exc:
                    logger.warning("writing stdout failed (%s); answers are dropped", exc)
                    broken = True


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@asynccontextmanager
async def stdio_wire(
    on_refused: Callable[[bytes, Refused], None] | None = None,
) -> AsyncIterator[Wire]:
    """Claim fds 0 and 1 for MCP, serve them as a :class:`Wire`, then give them back.

    Use ``wire.read_stream`` / ``wire.write_stream`` as the SDK's streams; the
    context ends after the SDK has closed its write stream and queued answers were
    written (at most :data:`DRAIN_S` more when the client stops reading).
    """
    sys.stdout.flush()
    try:
        in_fd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError as exc:
        raise ShellgateError(f"stdin cannot carry MCP: {exc.strerror}") from exc
    try:
        out_fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError as exc:
        os.close(in_fd)
        raise ShellgateError(f"stdout cannot carry MCP: {exc.strerror}") from exc
    blocking = os.get_blocking(in_fd)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        os.set_blocking(in_fd, False)  # regular files and /dev/null ignore it: never EAGAIN
        wire = Wire(in_fd, out_fd, on_refused)
        async with anyio.create_task_group() as tg:
            tg.start_soon(wire.read)
            writer = anyio.CancelScope()

            async def write() -> None:
                with writer:
                    await wire.write()

            tg.start_soon(write)
            try:
                yield wire
            finally:
                wire.hang_up()
                await wire.write_stream.aclose()
                writer.deadline = anyio.current_time() + DRAIN_S
    finally:
        with suppress(OSError):
            os.set_blocking(in_fd, blocking)  # the description may be a shared terminal
        with suppress(OSError):
            os.dup2(in_fd, 0)
        with suppress(OSError):
            os.dup2(out_fd, 1)
        os.close(in_fd)
        os.close(out_fd)
