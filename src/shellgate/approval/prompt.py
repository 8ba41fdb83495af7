"""The interactive terminal approver.

What the person sees is built only from the request, with every string made
visible (control characters, bidi overrides and other invisible code points are
shown as ``\\x1b``/``\\u202e`` escapes and rich markup is never interpreted), so
a command cannot repaint the prompt it is being judged by.

Reading: one ``readline`` at a time runs on a daemon thread. A line that arrives
while no question is on screen (say, a late answer to a question that already
timed out) is discarded before the next question is shown, so an answer is only
ever taken for the question that was displayed when it arrived. Questions from
concurrent calls are asked one at a time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import termios
import weakref
from typing import IO, Literal

from rich.console import Console
from rich.text import Text

from shellgate.approval.base import start_in_daemon_thread
from shellgate.approval.question import segment_shown, visible
from shellgate.models import ApprovalAnswer, ApprovalRequest

#: Unrecognised answers before the prompt gives up and denies.
MAX_ATTEMPTS = 3
#: Longest line read as an answer or message, in characters.
MAX_LINE_CHARS = 4096


class _LineReader:
    """At most one outstanding ``readline`` on the stream, shared across questions.

    The read is a thread-side future (not tied to an event loop), so the reader
    survives a gate that runs each call in its own loop.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._pending: concurrent.futures.Future[str] | None = None

    def _read(self) -> str:
        return self._stream.readline(MAX_LINE_CHARS)

    def discard_stale(self) -> None:
        """Drop input that arrived while no question was shown.

        A completed read is dropped; on a terminal, typed-ahead input still in the
        kernel's queue is flushed too (as ``sudo`` does), so keys pressed before
        the question appeared cannot answer it.
        """
        if self._pending is not None and self._pending.done():
            self._pending = None
        try:
            if self._stream.isatty():
                termios.tcflush(self._stream.fileno(), termios.TCIFLUSH)
        except (termios.error, OSError, ValueError, AttributeError):
            pass  # not a terminal we can flush: the completed-read check above still holds

    async def next_line(self) -> str:
        """The next line, ``""`` at end of input."""
        if self._pending is None:
            self._pending = start_in_daemon_thread(self._read)
        pending = self._pending
        # Shielded: a timeout abandons the wait, not the read, which stays
        # pending for the next question (and is discarded if it completes first).
        line = await asyncio.shield(asyncio.wrap_future(pending))
        self._pending = None
        return line


class PromptApprover:
    """Asks on a terminal: ``[y]`` allow once, ``[n]`` deny, ``[s]`` allow for the session.

    ``[s]`` is offered only when ``request.session_scope`` is non-empty. End of
    input, an unreadable stream or ``MAX_ATTEMPTS`` unrecognised answers deny.
    With the default input (``sys.stdin``) a non-terminal stdin denies without
    reading: a pipe or a file is not a person.

    Answers are read from ``stdin`` (default ``sys.stdin``); output goes to
    ``output`` (default ``sys.stderr``, so a command's own stdout stays clean).
    """

    name = "prompt"

    def __init__(
        self,
        stdin: IO[str] | None = None,
        output: IO[str] | None = None,
        *,
        require_tty: bool | None = None,
    ) -> None:
        self._input = stdin
        self._output = output
        self._require_tty = stdin is None if require_tty is None else require_tty
        self._reader: _LineReader | None = None
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _console(self) -> Console:
        return Console(file=self._output or sys.stderr, highlight=False, soft_wrap=True)

    def _stream(self) -> IO[str]:
        return self._input if self._input is not None else sys.stdin

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        stream = self._stream()
        if self._require_tty:
            try:
                is_tty = stream.isatty()
            except (AttributeError, ValueError, OSError):
                is_tty = False
            if not is_tty:
                return self._deny("approval needs an interactive terminal, and stdin is not one")
        if self._reader is None:
            self._reader = _LineReader(stream)
        # One question at a time per terminal; asyncio locks belong to one loop.
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            console = self._console()
            try:
                self._reader.discard_stale()
                self._show(console, request)
                return await self._converse(console, self._reader, bool(request.session_scope))
            except asyncio.CancelledError:
                console.print(Text("\n(no answer in time: denied)", style="bold red"))
                raise

    def _deny(self, message: str | None) -> ApprovalAnswer:
        return ApprovalAnswer(answer="deny", message=message, approver=self.name)

    def _show(self, console: Console, request: ApprovalRequest) -> None:
        call = request.call
        head = Text("shellgate: approval needed", style="bold yellow")
        console.print(head)
        console.print(Text(visible(request.question)))
        console.print(
            Text(
                f"  subject {visible(call.subject)}  tenant {visible(call.tenant)}"
                f"  workdir {visible(call.workdir)}",
                style="dim",
            )
        )
        if call.description:
            console.print(Text(f"  description: {visible(call.description)}"))
        console.print(Text("  command:", style="bold"))
        for line in visible(call.command).split("\n"):
            console.print(Text("  │ ", style="dim") + Text(line, style="cyan"))
        for item in request.verdict.segments:
            if item.decision.effect != "ask":
                continue
            decision = item.decision
            console.print(
                Text("  needs approval: ", style="bold")
                + Text(visible(segment_shown(item.segment)), style="cyan")
            )
            rule = f" rule {visible(decision.rule)}" if decision.rule else ""
            console.print(Text(f"    {visible(decision.layer)}{rule}: {visible(decision.reason)}"))
        if request.escalation is not None:
            console.print(
                Text(f"  sandbox escalation requested: {request.escalation}", style="bold magenta")
            )
            console.print(Text(f"    justification: {visible(request.justification or '(none)')}"))
        if request.session_scope:
            console.print(Text("  [s] would allow, for the rest of this session, exactly:"))
            for command in request.session_scope:
                console.print(Text("    ") + Text(visible(command), style="cyan"))

    async def _converse(
        self, console: Console, reader: _LineReader, offer_session: bool
    ) -> ApprovalAnswer:
        choices = "[y] allow once  [n] deny" + (
            "  [s] allow for this session" if offer_session else ""
        )
        for _attempt in range(MAX_ATTEMPTS):
            console.print(Text(f"{choices} > ", style="bold"), end="")
            line = await self._readline(reader)
            if line is None:
                return self._deny(
                    "approval prompt got no answer (end of input), so the call was denied"
                )
            choice = _parse(line, offer_session)
            if choice == "allow_once" or choice == "allow_session":
                return ApprovalAnswer(answer=choice, approver=self.name)
            if choice == "deny":
                console.print(Text("message for the model (optional, Enter to skip) > "), end="")
                message = await self._readline(reader)
                return self._deny((message.strip() or None) if message else None)
            console.print(Text(f"unrecognised answer {visible(line.strip())!r}", style="red"))
        return self._deny(
            f"no recognisable answer after {MAX_ATTEMPTS} tries, so the call was denied"
        )

    @staticmethod
    async def _readline(reader: _LineReader) -> str | None:
        try:
            line = await reader.next_line()
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return line if line else None


def _parse(line: str, offer_session: bool) -> Literal["allow_once", "allow_session", "deny"] | None:
    word = line.strip().lower()
    if word in {"y", "yes"}:
        return "allow_once"
    if word in {"n", "no"}:
        return "deny"
    if offer_session and word in {"s", "session"}:
        return "allow_session"
    return None
