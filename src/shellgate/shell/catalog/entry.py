"""What one catalog entry declares about a command, and what reading it yields.

An :class:`Entry` says, in one place, everything the analysis knows about a
command: its names, its option dialect, which options carry a program
(``Opt.runs``), load code or change state (``Opt.finding``), name files it
writes (``Opt.writes``) or deletes (``Opt.deletes``), which are inert (dropped
from the canonical form), which operands it writes, whether its operands are a
command it runs (``runs``: a wrapper), and its subcommands. Named hook functions
cover what a table cannot (make variables, gdb ``-ex``, kill pids, find
expressions); a hook receives the argv, the scan, and the :class:`Reading` it adds to.

The engine that applies entries is :mod:`shellgate.shell.catalog.read`; it never
asks for a command by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from shellgate.shell.argv.engine import GNU, OPTIONAL, Dialect, Opt, Parsed, Spec

Argv = tuple[str, ...]


@dataclass(frozen=True)
class Program:
    """A program a command runs: its own segment, decided on its own."""

    label: str  # context label: "env payload", "find -exec payload"
    argv: Argv
    assignments: tuple[tuple[str, str], ...] = ()  # environment it is given (env NAME=v)
    #: A runner's own spelling of it (``python -m pytest -q``, ``npx tsc``) and the
    #: index of the program's word there: an allow rule naming the program through
    #: its runner (``python -m pytest *``) covers it, one for the runner alone does not.
    via: Argv = ()
    via_at: int = 0


@dataclass
class Reading:
    """What reading one argv found. Every list only grows (findings never vanish)."""

    findings: list[str] = field(default_factory=list)
    #: Shell strings it runs (``-c`` payloads, ``--upload-pack=CMD``), parsed as commands.
    payloads: list[tuple[str, str]] = field(default_factory=list)
    #: Programs it runs directly (a wrapper's command, ``find -exec``, ``rsync -e``).
    programs: list[Program] = field(default_factory=list)
    #: Other readings of what it runs, for deny and ask rules only (a grammar guess).
    guesses: list[Argv] = field(default_factory=list)
    #: Extra deny-side forms of this command (``(sh,)`` for a shell reading stdin).
    forms: list[Argv] = field(default_factory=list)
    #: Operands it writes, as written (relative ones resolved later against the cwd).
    writes: list[str] = field(default_factory=list)
    #: Reports it writes through an option (``Entry.reports``): fine inside the workdir.
    outputs: list[str] = field(default_factory=list)
    #: Paths it empties or deletes through an option (pytest --basetemp, find -delete).
    deleted: list[str] = field(default_factory=list)
    #: It reads shell commands from its stdin (a here-string or heredoc is parsed).
    stdin_shell: bool = False
    #: It reads code in this language from its stdin (``python -``, ``node``):
    #: a known stdin (a heredoc, a here-string, ``cat <<EOF |``) is read as that
    #: code (:mod:`.inline_code`); an unknown one is a finding.
    stdin_code: str | None = None
    #: Its output is its stdin (``cat`` with no file), for the next command of a pipe.
    echoes_stdin: bool = False
    #: The file it runs in this shell (``source FILE``, ``. FILE``): rules decide it
    #: by that file's name, resolved (``Segment.argv`` becomes ``source PATH …``).
    sourced: str | None = None
    #: Path literals in code it runs (:mod:`.inline_code`): protected paths and
    #: secrets named there ask.
    mentions: list[str] = field(default_factory=list)
    #: Files it reads that are named inside an argument rather than as one
    #: (``sed '1r FILE'``): the protected-reads layer checks them as operands.
    reads: list[str] = field(default_factory=list)
    #: The shell's directory after it (``cd``): the operand as written, ``""``
    #: for a directory the analysis cannot know; ``None`` when it changes none.
    chdir: str | None = None
    #: Names it makes for existing files: ``(link, target, symbolic)``. A later
    #: write to the link in the same line writes the target (``ln -s ~/.bashrc x
    #: && echo >> x``); a hard link's target is exposed to every later write.
    links: list[tuple[str, str, bool]] = field(default_factory=list)
    #: It reads the configuration of the repository it runs in (git: ``core.fsmonitor``,
    #: aliases, hooks run programs): the directory it is found from, relative to where
    #: the command runs (``git -C DIR``), or a repository directory itself (``--git-dir``).
    repository: str | None = None
    #: Its operands are written, and that is its whole purpose (cp, rm, touch…).
    obvious_writer: bool = False
    #: The canonical spelling of the command, for deny and ask rules (None: no entry).
    canonical: Argv | None = None

    def finding(self, text: str) -> None:
        if text not in self.findings:
            self.findings.append(text)


Hook = Callable[[Argv, Parsed, Reading], None]
#: Which operands a command writes, given its scan (``cp A B``: the last one).
OperandWrites = Callable[[Parsed], list[str]]
#: The canonical words after a command's name, given its argv and scan.
CanonicalWords = Callable[[Argv, Parsed], "list[str] | None"]


@dataclass(frozen=True)
class Runs:
    """The operands (after ``skip`` of them) are a command the entry runs."""

    skip: int = 0  # operands before the command: ``timeout DURATION``, ``chroot DIR``
    default: Argv = ()  # what runs when no command is given (``xargs``: echo)
    #: Operands that are words it always hands on, never a command (none by default).
    label: str = ""
    #: A runner (``npx``, ``uv run``, ``pnpm exec``): its command is the program it
    #: names, and an allow naming the program through it (``npx tsc *``) covers
    #: that program (``Program.via``); a plain wrapper's never does.
    via: bool = False


@dataclass(frozen=True)
class Entry:
    """Everything the analysis knows about one command (see the module docstring)."""

    names: tuple[str, ...]
    dialect: Dialect = GNU
    options: tuple[Opt, ...] = ()
    runs: Runs | None = None
    #: Which operands it writes: "all", "last" (of two or more), or a function.
    writes: str | OperandWrites = ""
    #: Writing operands is its whole purpose: an admin allowing it knows it writes.
    obvious_writer: bool = False
    #: Its operands name files it changes: after a ``cd``, deny rules also see them
    #: resolved against the new directory (``cd / && rm -rf usr`` is ``rm -rf /usr``).
    cwd_operands: bool = False
    #: Operands spelled ``KEY=PATH`` whose path is resolved so (dd's ``if=``, ``of=``).
    path_keys: tuple[str, ...] = ()
    #: Files its options name are reports and build products (``pytest
    #: --junitxml``, ``go build -o``): inside the workdir they need no question.
    #: Any other tool's option write asks, as a surprising operand does; so does
    #: a file whose text the command's options choose (``git log --format
    #: --output``): that is no report but a write like ``> FILE``.
    reports: bool = False
    subcommands: Mapping[str, Entry] = field(default_factory=dict)
    hooks: tuple[Hook, ...] = ()
    #: The name rules see for every name and version of it (``python`` for
    #: ``python3.11``), or for a subcommand every spelling of it (``images`` for
    #: ``docker image ls``); empty: the name as written (``bash`` is not ``sh``).
    canonical_name: str = ""
    #: A subcommand group whose word rules never see: its subcommands are spelled as
    #: their command's own (``docker container run`` is ``docker run``).
    canonical_group: bool = False
    #: Running it at all is a finding (``eval``): the text says why.
    finding: str = ""
    #: Option checks read past ``--`` (it may be the argument of the option before it).
    through_double_dash: bool = False
    #: Options are dropped from the canonical form whole (systemctl: the verb decides).
    canonical_drops_options: bool = False
    #: No canonical form (an expression language, not options: find, test).
    no_canonical: bool = False
    #: Spells the canonical words after the name itself (``None`` back: the engine's
    #: own), for words that are no option grammar: kill's ``-SIGNAL`` and pids.
    canonical_words: CanonicalWords | None = None
    #: With no option and no file but ``-`` it prints its stdin as it is (``cat``):
    #: the next command of a pipeline reads a heredoc it was given.
    echoes_stdin: bool = False
    #: Respells an old-style argv as the options it stands for before it is read
    #: (``tar czf F`` is ``tar -c -z -f F``); returns the argv unchanged otherwise.
    respell: Callable[[Argv], Argv] | None = None

    @cached_property
    def spec(self) -> Spec:
        return Spec(self.dialect, self.options)

    @property
    def name(self) -> str:
        return self.names[0]


def _names(spelled: str) -> tuple[str, ...]:
    return tuple(spelled.split())


def flag(names: str, *, inert: bool = False, finding: str = "") -> Opt:
    """An option without an argument."""
    return Opt(_names(names), 0, inert=inert, finding=finding)


def val(
    names: str,
    *,
    takes: int = 1,
    runs: str = "",
    finding: str = "",
    writes: bool = False,
    deletes: bool = False,
    inert: bool = False,
    when: Callable[[str], bool] | None = None,
    last: bool = False,
    chdir: bool = False,
) -> Opt:
    """An option with an argument (``takes`` words; ``OPTIONAL``: glued only)."""
    return Opt(_names(names), takes, runs, finding, writes, deletes, inert, when, last, chdir)


def optional(
    names: str,
    *,
    inert: bool = False,
    finding: str = "",
    writes: bool = False,
    when: Callable[[str], bool] | None = None,
) -> Opt:
    """An option whose value may only be glued (``--color[=WHEN]``)."""
    return Opt(_names(names), OPTIONAL, finding=finding, writes=writes, inert=inert, when=when)


def values(names: str, *, takes: int = 1) -> tuple[Opt, ...]:
    """Several plain value options at once (a wrapper's grammar row)."""
    return tuple(Opt((name,), takes) for name in names.split())


def letters(short: str, *, takes: int = 1) -> tuple[Opt, ...]:
    """Short value options given as letters (``"ugC"``: -u -g -C take a value)."""
    return tuple(Opt(("-" + letter,), takes) for letter in short)


def aliases(groups: str, *, takes: int = 1) -> tuple[Opt, ...]:
    """Plain value options, each with its aliases: ``"-n --namespace, --context"``
    (comma-separated options, the canonical spelling first in each)."""
    return tuple(Opt(_names(group), takes) for group in groups.split(",") if group.strip())
