"""Mutable drafts the walker fills, and the state shared by nested parses.

One :class:`Sink` serves a whole ``analyse`` call, including every ``bash -c``
payload parsed on the way, so segment counting, whole-command findings and the
``cd`` tracking see everything. Drafts become frozen ``Segment`` values only at
the end, when whole-command findings are known and copied onto each of them.
"""

from __future__ import annotations

import functools
import os
import pwd
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from shellgate.models import Redirect, Write

Argv = tuple[str, ...]
#: ``Sink.cd_fail`` when the last command was no ``cd``.
UNSET = object()
_SPLIT_OR_GLOB = re.compile(r"[\s*?\[\]]")


class Runs(Protocol):
    """A program a command runs (``catalog.entry.Program``): its own segment."""

    @property
    def label(self) -> str: ...
    @property
    def argv(self) -> Argv: ...
    @property
    def assignments(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def via(self) -> Argv: ...
    @property
    def via_at(self) -> int: ...


#: What a finished command hands back: a shell string to parse (label, source),
#: or a program it runs.
Nested = tuple[str, str] | Runs


@functools.cache
def _passwd_home() -> str | None:
    """The current user's home in the password database (bash's ``~`` without ``HOME``)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir or None
    except KeyError:
        return None


def _in_this_environment(name: str) -> bool:
    """This process's environment, and the names every call gets (``SHELLGATE_*``,
    the overrides: command_env.py)."""
    return name in os.environ or name.startswith("SHELLGATE_") or name in _ALWAYS_SET


#: Set in every command's environment (shellgate.command_env.OVERRIDES).
_ALWAYS_SET = frozenset({"NO_COLOR", "TERM", "PAGER", "GIT_PAGER"})


#: Directories besides ``cwd`` the shell may be in, at most: past this a ``cd``
#: the analysis cannot be sure of leaves the directory unknown.
MAX_ALTERNATIVES = 8


@dataclass(frozen=True)
class State:
    """What the shell carries from one command to the next of a line: where it is
    (``cwd``; ``known`` false after a ``cd`` the analysis cannot follow; ``alts``,
    other directories it may be in after a ``cd`` that may have failed or not
    run), the variables the line assigned, and the globbing options it set."""

    cwd: str
    known: bool
    alts: tuple[str, ...]
    vars: tuple[tuple[str, str | None], ...]
    globbing: frozenset[str]


def merge_states(states: Sequence[State | None]) -> State | None:
    """Where the shell may be after one of several ways through a construct (an
    ``&&``/``||`` list, ``if``, a loop…): one directory when all agree, else each
    as an alternative; a variable keeps a value all agree on, else it is unknown;
    a globbing option set on any way counts. ``None`` is a way bash cannot take."""
    real = [s for s in states if s is not None]
    if not real:
        return None
    first = real[0]
    if all(s == first for s in real[1:]):
        return first
    known = all(s.known for s in real)
    places = list(dict.fromkeys(d for s in real for d in (s.cwd, *s.alts)))
    if len(places) > MAX_ALTERNATIVES + 1:
        known = False
    tables = [dict(s.vars) for s in real]
    names = dict.fromkeys(name for table in tables for name in table)
    merged: list[tuple[str, str | None]] = []
    for name in names:
        # A name one way did not assign has the value it had before: unknown here.
        values = {table.get(name) for table in tables}
        merged.append((name, values.pop() if len(values) == 1 else None))
    globbing = frozenset(o for s in real for o in s.globbing)
    return State(first.cwd, known, tuple(places[1:]) if known else (), tuple(merged), globbing)


@dataclass
class Draft:
    text: str
    argv: Argv
    context: tuple[str, ...]
    assignments: list[tuple[str, str]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    forms: list[Argv] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    #: Canonical spellings of its forms (deny and ask rules match them too).
    canonical: list[str] = field(default_factory=list)
    #: Deny-side readings of a dynamic argv: expansions empty (words they empty
    #: kept, and dropped as bash drops an unquoted one).
    readings: list[Argv] = field(default_factory=list)
    #: The directory it runs in ("" unknown: a ``cd`` the analysis cannot follow).
    cwd: str | None = None
    #: Where it reads a repository's configuration (absolute; see ``Segment``).
    repositories: list[str] = field(default_factory=list)
    #: Path literals in code it runs (see ``Segment``).
    mentions: list[str] = field(default_factory=list)
    #: Files it reads named inside an argument (see ``Segment``).
    reads: list[str] = field(default_factory=list)
    #: A runner's spelling of this program and the index of its word (``Segment.via``).
    via: Argv = ()
    via_at: int = 0
    #: Its globs: the directory each was read in (one the line writes is not known
    #: in advance) and its matches.
    globbed: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    #: Its writes into a directory that does not exist and that no earlier command
    #: visibly makes: (target as written, that directory). A finding when another
    #: command of the line runs a program (analyse._writes_into_unmade).
    unmade: list[tuple[str, str]] = field(default_factory=list)
    #: What it prints when that is its stdin (``cat <<EOF |``): the next command of
    #: a pipeline reads it (``None``: not known).
    output: list[str] | None = None


@dataclass
class Extra:
    """Redirections a compound statement applies to the commands inside it."""

    redirects: list[Redirect] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    stdin_texts: list[str] = field(default_factory=list)  # here-string/heredoc contents
    #: Words after a redirection's target: the command's arguments (``cmd > f x``).
    arguments: list[str] = field(default_factory=list)

    def merged(self, other: Extra | None) -> Extra:
        if other is None:
            return self
        return Extra(
            self.redirects + other.redirects,
            self.findings + other.findings,
            self.stdin_texts + other.stdin_texts,
            self.arguments + other.arguments,
        )


#: Completes a draft once its words are read: forms, findings, writes, ``cd``;
#: returns the shell strings it runs, to be parsed as nested commands.
Finisher = Callable[["Draft", "Sink", Sequence[str]], list[Nested]]


def _unset_finisher(draft: Draft, sink: Sink, stdin: Sequence[str]) -> list[Nested]:
    raise RuntimeError("Sink.finish was not set (analyse() sets it)")


def _every_name(name: str) -> list[str]:
    return [f"assignment to '{name}' (not on the known-safe list)"]


@dataclass
class Sink:
    """Shared output and state of one analysis (all nested parses included).

    The reader knows bash, not commands: what a command does is filled in by
    ``finish`` (the catalog's side), and which assignments are safe is asked of
    ``assignment_findings``; ``analyse`` sets both.
    """

    workdir: str
    max_depth: int
    finish: Finisher = _unset_finisher
    assignment_findings: Callable[[str], list[str]] = _every_name
    max_nodes: int = 10_000  # syntax nodes one parse may have (a re-read's too)
    drafts: list[Draft] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    cwd: str = "/"
    cwd_known: bool = True
    #: Other directories the shell may be in (see :class:`State`).
    alts: tuple[str, ...] = ()
    #: Globbing options the line set (``shopt -s nocaseglob``, ``set -f``: ``noglob``).
    globbing: frozenset[str] = frozenset()
    #: How the last ``cd`` may have ended, for the walker: ``None`` it surely
    #: succeeded; a directory (with whether it is known) where the shell stays if
    #: it failed; :data:`UNSET` no ``cd`` (the command's own status says nothing).
    cd_fail: object = UNSET
    #: Drafts already made for a command text in one place (see Walker._command).
    memo: dict[tuple[object, ...], tuple[list[Draft], State, object]] = field(
        default_factory=dict
    )
    #: The workspace the call runs in (``source`` files are named relative to it).
    workspace: str = "/"
    #: Variables the call's environment fixes, as the command sees them (``HOME``,
    #: ``USER``, ``TMPDIR``, ``PATH``; ``PWD`` is the current directory).
    env: dict[str, str] = field(default_factory=dict)
    #: Variables the line assigned earlier (``X=1; echo $X``): the literal value,
    #: or ``None`` when it is not known (a dynamic value, ``unset``, ``read``).
    vars: dict[str, str | None] = field(default_factory=dict)
    #: Names ``declare`` gave an attribute that changes what an assignment stores
    #: (``-l``, ``-u``, ``-i``, ``-n``, ``-a``…): their values are never known.
    transformed: set[str] = field(default_factory=set)
    #: Every path an earlier command of the line writes (a ``source`` of one is
    #: not trusted; a glob in one is not known in advance).
    written: set[str] = field(default_factory=set)
    #: The analysis read the file system (a glob's matches): its answer is not cached.
    fs: bool = False
    #: Whether the command's environment exports a name (``analyse`` sets it).
    exported: Callable[[str], bool] = field(default=lambda name: _in_this_environment(name))
    #: The analysis asked ``exported`` (a bare assignment): its answer is not cached.
    environ_read: bool = False
    #: Offsets of ERROR nodes read as bash reads them (a brace word in command
    #: position): no parse error of their own.
    read_errors: set[int] = field(default_factory=set)
    #: Names the line made for files (``ln``, ``cp -l/-s``): absolute link path →
    #: absolute path it names. Later writes through a link write what it names.
    links: dict[str, str] = field(default_factory=dict)
    #: A misreading survived the re-read: add the rough forms (as for a parse error).
    unresolved: bool = False
    #: Why the command is too large to analyse (a re-read over the node budget).
    refused: str | None = None

    @property
    def cwd_sure(self) -> bool:
        """The shell is in ``cwd`` and nowhere else."""
        return self.cwd_known and not self.alts

    def places(self) -> tuple[str, ...]:
        """Every directory the shell may be in (``()``: not known)."""
        return (self.cwd, *self.alts) if self.cwd_known else ()

    def state(self) -> State:
        return State(self.cwd, self.cwd_known, self.alts, tuple(self.vars.items()),
                     self.globbing)  # fmt: skip

    def restore(self, state: State) -> None:
        self.cwd, self.cwd_known, self.alts = state.cwd, state.known, state.alts
        self.vars = dict(state.vars)
        self.globbing = state.globbing

    def value(self, name: str, *, quoted: bool) -> str | None:
        """The value ``$name`` expands to where the analysis knows it, else ``None``.

        Unquoted, a value bash would split or glob (blanks, ``*?[``, empty) is not
        known as one word; once the line assigns ``IFS``, no unquoted one is."""
        if not quoted and "IFS" in self.vars:
            return None
        if name in self.vars:
            value = self.vars[name]
        elif name == "PWD":
            value = self.cwd if self.cwd_sure else None
        else:
            value = self.env.get(name)
        if value is None or (not quoted and (not value or _SPLIT_OR_GLOB.search(value))):
            return None
        return value

    def home(self) -> str | None:
        """What ``~`` expands to as the line has ``HOME`` (``None``: not known — the
        line assigned something unknown, or ``HOME`` is empty). With ``HOME`` unset
        bash takes the user's home from the password database, as this does."""
        if "HOME" in self.vars:
            return self.vars["HOME"] or None
        if "HOME" in self.env:
            return self.env["HOME"] or None
        return _passwd_home()

    def note(self, finding: str) -> None:
        """A whole-command finding (copied onto every segment at the end)."""
        if finding not in self.findings:
            self.findings.append(finding)
