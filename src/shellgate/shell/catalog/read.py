"""The one engine that applies catalog entries to an argv.

``read(argv)`` looks the command up by its basename, scans its options in the
entry's dialect (``argv/engine.py``) and turns what the entry declares into a
:class:`~shellgate.shell.catalog.entry.Reading`: programs it runs (each becomes
its own segment), shell strings it runs (parsed as commands), findings, write
targets, deletions, and the canonical form deny and ask rules also match.

Evaluation order: the entry's respelling (old-style bundles) → its own
finding → each option met (runs, finding, writes, deletes) → options once more
read without long-option prefixes, for writes, programs and operand writes
only (a real flag may look like a prefix of a declared option) → operand
writes → a wrapper's command → the subcommand, read the same way from its own
word on → hooks → the canonical form (spelled by the entry's ``canonical_words``
when it has them). Nothing here says a command's name: a new tool is a new entry.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from functools import lru_cache

from shellgate.shell.argv.canonical import operand_words, option_words
from shellgate.shell.argv.engine import Hit, Parsed, scan
from shellgate.shell.catalog.entry import Argv, Entry, Program, Reading
from shellgate.shell.catalog.registry import lookup

_NAME_LIKE = re.compile(r"[A-Za-z_./\\][\w.+/\\-]*")
#: A program word that is not a literal name: find's ``{}``, an expansion.
_NOT_LITERAL = re.compile(r"\{\}|[$`]")


def basename(word: str) -> str:
    """``/usr/bin/rm`` is ``rm``; a leftover backslash never changes the command name."""
    head = word.replace("\\", "") if "\\" in word else word
    if "/" in head.rstrip("/"):
        head = head.rstrip("/").rsplit("/", 1)[1]
    return head


def could_be_command(word: str) -> bool:
    return _NAME_LIKE.fullmatch(word) is not None and not word.isdigit()


def split_words(value: str) -> Argv:
    """A value a tool splits into words itself (``rsync -e 'ssh -p 22'``)."""
    try:
        return tuple(shlex.split(value, posix=True))
    except ValueError:
        return tuple(value.split())


@lru_cache(maxsize=4096)
def read(argv: Argv) -> Reading | None:
    """What the catalog knows of ``argv`` (``None``: no entry for its command).

    Cached (agents repeat the same few argvs): callers must not change the answer.
    """
    if not argv:
        return None
    entry = lookup(basename(argv[0]))
    if entry is None:
        return None
    out = Reading()
    words: list[str] = []
    apply(argv, entry, out, words)
    out.canonical = tuple(words) if words else None
    _seal(out)
    return out


#: The list fields of a :class:`Reading` (its answers; filled while it is read).
_LISTS = tuple(name for name, kind in Reading.__annotations__.items() if "list[" in str(kind))


def _seal(out: Reading) -> None:
    """The cached answer's lists become tuples: nobody may change a cached answer
    (an append now fails loudly), and the cyclic GC does not walk tuples of
    strings — some 40,000 cached lists made every full collection a 30 ms pause."""
    for name in _LISTS:
        setattr(out, name, tuple(getattr(out, name)))


def apply(
    argv: Argv,
    entry: Entry,
    out: Reading,
    canonical: list[str],
    *,
    reports: bool = False,
    head: Argv = (),
) -> Parsed:
    """Read ``argv`` (``argv[0]`` the command or subcommand word) under ``entry``;
    a subcommand inherits its command's ``reports``. ``head``: the words before
    ``argv`` (the command and the subcommands above it), for a runner's spelling."""
    reports = reports or entry.reports
    if entry.respell is not None:
        argv = entry.respell(argv)
    name = argv[0]
    parsed = scan(argv, entry.spec, through_double_dash=entry.through_double_dash)
    if entry.finding:
        out.finding(f"'{name}' {entry.finding}")
    for hit in parsed.hits:
        _option(name, hit, out, reports=reports)
    if any(word.startswith("--") for word in argv[1:]) and entry.dialect.abbreviations:
        literal = scan(argv, entry.spec, abbreviations=False)
        for hit in literal.hits:
            _option(name, hit, out, reports=reports, roles_only=True)
        # A real flag read as the prefix of a value option swallowed an operand
        # (rsync --partial of --partial-dir): the literal reading's writes count too.
        _operand_writes(entry, literal, out)
    _operand_writes(entry, parsed, out)
    out.obvious_writer |= entry.obvious_writer
    if entry.echoes_stdin and not parsed.hits and all(w == "-" for w in parsed.words):
        out.echoes_stdin = True
    if entry.runs is not None:
        _wrapper(argv, entry, parsed, out, head)
    # An entry may name its versions one way for rules (`python3.11` is
    # `python`); otherwise the command keeps its basename, a subcommand its word.
    # A subcommand may be spelled as another one (`docker image ls` is `docker images`),
    # and a group word may be dropped (`docker container run` is `docker run`).
    if not canonical:
        canonical.append(entry.canonical_name or basename(name))
    elif not entry.canonical_group:
        canonical.append(entry.canonical_name or name)
    own = entry.canonical_words(argv, parsed) if entry.canonical_words is not None else None
    if own is not None:
        canonical.extend(own)
        canonical = []  # what follows is read, but spelled by the entry already
    elif not (entry.canonical_drops_options or entry.no_canonical):
        canonical.extend(
            option_words(
                [(h.name, h.value) for h in parsed.hits if not (h.opt and h.opt.inert)],
                glued_short=entry.dialect.glued and entry.dialect.bundles,
            )
        )
    sub = _subcommand(entry, parsed)
    if sub is not None:
        at, child = sub
        apply(argv[at:], child, out, canonical, reports=reports, head=(*head, *argv[:at]))
    elif entry.runs is not None:
        canonical.extend(f"{name}={value}" for name, value in parsed.assignments)
        canonical.extend(argv[parsed.end :])
    elif entry.no_canonical:
        canonical.extend(argv[1:])
    else:
        canonical.extend(operand_words(parsed.words))
    for hook in entry.hooks:
        hook(argv, parsed, out)
    return parsed


def _subcommand(entry: Entry, parsed: Parsed) -> tuple[int, Entry] | None:
    if not entry.subcommands or not parsed.operands:
        return None
    at, word = parsed.operands[0]
    child = entry.subcommands.get(word)
    return (at, child) if child is not None else None


def _option(name: str, hit: Hit, out: Reading, *, reports: bool, roles_only: bool = False) -> None:
    opt = hit.opt
    if opt is None:
        return
    value = hit.value
    if opt.when is not None and (value is None or not opt.when(value)):
        return
    shown = f"'{name} {hit.spelled}'"
    if opt.finding and not roles_only:
        out.finding(f"{shown} {opt.finding}")
    if value is None:
        return
    if opt.writes and value:
        (out.outputs if reports else out.writes).append(value)
    if opt.deletes and value:
        out.deleted.append(value)
    if opt.runs == "shell":
        out.payloads.append((f"{name} {opt.canonical} payload", value))
    elif opt.runs in ("words", "program"):
        program = split_words(value) if opt.runs == "words" else (value,)
        add_program(out, f"{name} {opt.canonical} payload", program)


def in_repository(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """A hook for commands that run git in their directory (go's VCS stamping,
    ``gh``, ``pre-commit``): the repository found there is read as git's own is
    (``Reading.repository``), from the last ``chdir`` option's directory if any."""
    del argv
    moved = [h.value for h in parsed.hits if h.opt is not None and h.opt.chdir and h.value]
    out.repository = moved[-1] if moved else "."


def add_program(
    out: Reading,
    label: str,
    argv: Sequence[str],
    assignments: Sequence[tuple[str, str]] = (),
    *,
    via: Sequence[str] = (),
    via_at: int = 0,
) -> None:
    """A program ``out``'s command runs: its own segment, and a finding if the
    program is not a literal name (find's ``{}``, a variable). ``via``/``via_at``:
    a runner's spelling of it (see :class:`Program`)."""
    program = tuple(argv)
    if not program:
        return
    if _NOT_LITERAL.search(program[0]) or not program[0]:
        out.finding(f"runs a program not known until it runs ('{program[0][:40]}', {label})")
    out.programs.append(Program(label, program, tuple(assignments), tuple(via), via_at))


def _operand_writes(entry: Entry, parsed: Parsed, out: Reading) -> None:
    rule = entry.writes
    if not rule:
        return
    operands = parsed.words
    if rule == "all":
        out.writes.extend(operands)
    elif rule == "last":
        out.writes.extend(operands[-1:] if len(operands) >= 2 else [])
    elif callable(rule):
        out.writes.extend(rule(parsed))


def _wrapper(argv: Argv, entry: Entry, parsed: Parsed, out: Reading, head: Argv = ()) -> None:
    """A wrapper's command (its own segment), and guesses for deny rules.

    A runner's command carries the runner's spelling (``Program.via``: the whole
    command line, ``head`` included, and where the program's word is in it).
    The guesses over-approximate a grammar that could be wrong: the command
    starting at every word read as an option argument or a positional, and one
    word later after a long option the entry does not know (it may take one).
    """
    runs = entry.runs
    assert runs is not None
    start = parsed.end + runs.skip
    inner = argv[start:]
    label = f"{argv[0]} payload"
    if inner and runs.via:
        via = (*head, *argv)
        add_program(out, label, inner, parsed.assignments, via=via, via_at=len(head) + start)
    elif inner:
        add_program(out, label, inner, parsed.assignments)
    elif runs.default:
        add_program(out, label, runs.default, parsed.assignments)
    guessed = [*parsed.consumed, *range(parsed.end, min(start, len(argv)))]
    for index in guessed:
        if index < len(argv) and could_be_command(argv[index]):
            out.guesses.append(argv[index:])
    before = argv[parsed.end - 1] if parsed.end > 1 else ""
    if before.startswith("--") and "=" not in before:
        hit = next((h for h in parsed.hits if h.at == parsed.end - 1), None)
        if hit is not None and hit.opt is None and parsed.end + 1 < len(argv):
            out.guesses.append(argv[parsed.end + 1 :])
