"""What a statement handler may use of the walker: the seam under :mod:`.walker`.

:mod:`.walker` walks simple commands and dispatches every other statement to a
handler (:mod:`.compound`) by node type; redirections are read by
:mod:`.redirects`. Those two reach back into the walk in progress (go one
level deeper, walk a block, draft a command, parse a payload) through
:class:`Walking`, the part of :class:`~.walker.Walker` they use, so the walker
is the one module that imports them and neither imports it. Typing only: at
run time a handler is given the :class:`~.walker.Walker` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from tree_sitter import Node

from shellgate.shell.reader.drafts import Draft, Extra, Sink, State
from shellgate.shell.reader.heredoc_lexer import Heredoc
from shellgate.shell.reader.words import WordReader

#: A glob's words and a finding about them.
GlobRead = tuple[tuple[str, ...], str | None]


class Walking(Protocol):
    """The walk of one source (a command or a nested payload), as handlers see it."""

    source: bytes
    #: Run by another process (``bash -c``, ``sudo -s``): no variable is known there.
    opaque: bool
    #: The heredocs the lexer read, by the offset of their operator.
    heredocs: dict[int, Heredoc]
    sink: Sink
    #: Where the commands at hand sit (``if condition``, ``loop body``…).
    ctx: tuple[str, ...]
    words: WordReader
    #: Assignments read in the statement at hand: ``(name, literal value or None)``.
    assigned: list[tuple[str, str | None]]
    inherited: list[Extra]
    #: What the previous command of a pipeline printed, when known.
    piped: list[str] | None
    #: The last simple command drafted here.
    last: Draft | None

    def descend(self, label: str, fn: Callable[[Node], None], node: Node, scoped: bool) -> None:
        """Run ``fn(node)`` one level deeper; ``scoped`` keeps a ``cd`` inside from leaking."""

    def payload(self, label: str, source: str) -> None:
        """Parse a shell string that will be run (``bash -c``…) as nested commands."""

    def block(self, node: Node) -> None:
        """Walk the statements of ``node`` in order."""

    def statement(self, node: Node, extra: Extra | None = None) -> None:
        """Walk one statement; the next one runs whether it succeeded or not."""

    def outcomes(self, node: Node, extra: Extra | None = None) -> tuple[State | None, State | None]:
        """Walk one statement; the states the shell is in if it succeeds and if it fails."""

    def dispatch(self, node: Node, extra: Extra | None = None) -> None:
        """Walk one statement by its node type."""

    def scan(self, node: Node, label: str) -> None:
        """Find commands anywhere under ``node``."""

    def short(self, node: Node) -> str:
        """The start of ``node``'s text as written, on one line, for a finding."""

    def commit_assignments(self) -> None:
        """Assignments that outlive their statement: later words expand them."""

    def heredoc_body(self, body: str) -> None:
        """An unquoted heredoc's body: the substitutions in it run."""

    def glob_for_loop(self, value: str, mask: str, shown: str) -> GlobRead | None:
        """A glob in a ``for`` list: its matches, or None (a finding)."""

    def assignment(self, node: Node, findings: list[str]) -> tuple[str, str]:
        """One ``NAME=value``: its name and value as read."""

    def add(
        self,
        node: Node,
        argv: tuple[str, ...],
        assignments: list[tuple[str, str]],
        extra: Extra,
        findings: list[str],
        span: tuple[int, int] | None = None,
        readings: list[tuple[str, ...]] | None = None,
    ) -> None:
        """Draft one simple command."""

    def words_of(self, node: Node, findings: list[str]) -> list[str]:
        """Quote-removed words of a test or declaration, operators kept as written."""


#: A statement handler: walks one node of its type.
Handler = Callable[[Walking, Node, "Extra | None"], None]
