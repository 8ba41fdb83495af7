"""Every reading of one argv: what it runs, finds, writes, and how rules see it.

``read_argv`` is a pure function of the argv (cached): it applies the catalog to
the argv and to every command the argv runs, and collects

* ``forms``: the argv, then every command it runs (a wrapper's payload, a
  program named by an option), best reading first, then grammar guesses and
  bash respellings (``/bin/rm``, ``{rm,-rf,/}``, ``rm -rf /etc//``): deny and
  ask rules match all of them, allow rules only the argv;
* ``programs``: what the argv itself runs, each to be its own segment (an allow
  on a wrapper covers the wrapper only);
* ``payloads``: shell strings to parse as nested commands. Those of a command
  that is a program of this argv are left to that program's own segment;
* findings, write targets, option outputs, and the canonical spelling of each
  form (``Segment.canonical``).

Readings are taken best first: a guess ranks one lower than its parent, so when
a long wrapper line yields more than ``MAX_FORMS`` readings, the cap drops
guesses, not the chain of commands that really run.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import lru_cache

from shellgate.shell import catalog
from shellgate.shell.argv.canonical import joined
from shellgate.shell.argv.spellings import respellings
from shellgate.shell.catalog.entry import Argv, Program
from shellgate.shell.catalog.read import basename

#: Most forms kept per argv before respellings; past it the segment asks.
MAX_FORMS = 48
#: Most readings kept for one argv, respellings included.
MAX_READINGS = 2 * MAX_FORMS
#: Operands that name no file (a write there is none).
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})


def _first_how(writes: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Each target once, with the first reading's account of what writes it."""
    seen: dict[str, str] = {}
    for target, how in writes:
        if target not in HARMLESS_TARGETS:
            seen.setdefault(target, how)
    return tuple(seen.items())


@dataclass(frozen=True)
class ArgvReading:
    forms: tuple[Argv, ...]
    findings: tuple[str, ...]
    payloads: tuple[tuple[str, str], ...]
    programs: tuple[Program, ...]
    stdin_shell: bool
    #: Every path it writes or deletes, as written (operands, options, deletions),
    #: with what writes it: ``(target, how)``.
    writes: tuple[tuple[str, str], ...]
    #: Names it makes for existing files: ``(link, target, symbolic)``.
    links: tuple[tuple[str, str, bool], ...]
    #: Where it reads a repository's configuration (``Reading.repository``), each form's.
    repositories: tuple[str, ...]
    #: The language of the code it reads from stdin (``Reading.stdin_code``), if any.
    stdin_code: str | None
    #: Its output is its stdin (plain ``cat``).
    echoes_stdin: bool
    #: Path literals in code it runs.
    mentions: tuple[str, ...]
    #: Files it reads named inside an argument (``Reading.reads``).
    reads: tuple[str, ...]
    #: The file it runs in this shell (``source FILE``), as written.
    sourced: str | None
    #: Canonical spellings (argv joined) of its forms that have a catalog entry.
    canonical: tuple[str, ...]


@dataclass
class _Walk:
    forms: list[Argv] = field(default_factory=list)
    payloads: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False


def basename_form(argv: Argv) -> Argv:
    """``/usr/bin/rm`` is ``rm``; a leftover backslash never changes the command name."""
    if not argv:
        return argv
    head = basename(argv[0])
    return argv if head == argv[0] else (head, *argv[1:])


def unwrap(argv: Argv) -> _Walk:
    """The argv and every command it runs, best reading first (see the module doc)."""
    walk = _Walk()
    first = tuple(argv)
    seen = {first}
    heap: list[tuple[int, int, Argv, bool]] = [(0, 0, first, False)]
    order = 1
    while heap:
        rank, _, form, chain = heapq.heappop(heap)
        if len(walk.forms) >= MAX_FORMS:
            walk.truncated = True
            return walk
        walk.forms.append(form)
        norm = basename_form(form)
        queued: list[tuple[int, Argv, bool]] = []
        if norm != form:
            queued.append((rank, norm, chain))  # peeled on its own turn
        else:
            reading = catalog.read(form)
            if reading is not None:
                if not chain:
                    walk.payloads.extend(reading.payloads)
                # A program of the argv itself is its own segment (and so is what
                # that runs in turn): its payloads are parsed there, not here.
                covered = chain or form == first
                for index, program in enumerate(reading.programs):
                    queued.append((rank + (index > 0), program.argv, covered))
                queued.extend((rank + 1, guess, chain) for guess in reading.guesses)
        for next_rank, candidate, is_chain in queued:
            if candidate and candidate not in seen:
                seen.add(candidate)
                heapq.heappush(heap, (next_rank, order, candidate, is_chain))
                order += 1
    return walk


def _respelled(walk: _Walk) -> None:
    """Respell the argv and every command it runs (``sudo kill -9 -01`` respells as
    kill), and peel each respelling (``{sudo,rm,-rf,/}``). What a respelling with a
    new command name runs is respelled in turn (``{kill,-9,-01}``); an operand
    reading is not, or the readings of several words would multiply."""
    pending = list(walk.forms)
    done: set[Argv] = set()
    seen = set(walk.forms)
    while pending and len(done) < MAX_FORMS:
        form = pending.pop(0)
        if form in done:
            continue
        done.add(form)
        for other in respellings(form):
            inner = unwrap(other)
            extra = [f for f in inner.forms if f not in seen]
            room = MAX_READINGS - len(walk.forms)
            if len(extra) > room:
                # Globs in names and operands multiply readings (`/**/ /[^a]* …`):
                # past the bound the rest is not read, and the segment asks.
                extra = extra[: max(room, 0)]
                walk.truncated = True
            seen.update(extra)
            walk.forms.extend(extra)
            if other[0] != form[0]:
                pending.extend(extra)
            if walk.truncated:
                pending.clear()
                break


@lru_cache(maxsize=4096)
def read_argv(argv: Argv) -> ArgvReading:
    """Every reading of one argv (see the module docstring)."""
    walk = unwrap(argv)
    _respelled(walk)
    findings: list[str] = []
    payloads = list(walk.payloads)
    stdin_shell = False
    extra_forms: list[Argv] = []
    writes: list[tuple[str, str]] = []
    links: list[tuple[str, str, bool]] = []
    repositories: list[str] = []
    mentions: list[str] = []
    reads: list[str] = []
    stdin_code: str | None = None
    canonical: list[str] = []
    for form in walk.forms:
        reading = catalog.read(form)
        if reading is None:
            continue  # a command the catalog does not know: its name is all rules see
        findings.extend(reading.findings)
        stdin_shell |= reading.stdin_shell
        extra_forms.extend(reading.forms)
        if reading.canonical is not None:
            canonical.append(joined(reading.canonical))
        name = basename(form[0])
        writes.extend((target, f"'{name}' writes it") for target in reading.writes)
        writes.extend((target, f"'{name}' writes a report to it") for target in reading.outputs)
        writes.extend((target, f"'{name}' empties or deletes it") for target in reading.deleted)
        findings.extend(f"'{form[0]}' empties or deletes '{t}'" for t in reading.deleted)
        links.extend(reading.links)
        mentions.extend(reading.mentions)
        reads.extend(reading.reads)
        stdin_code = stdin_code or reading.stdin_code
        if reading.repository is not None:
            repositories.append(reading.repository)
        writes.extend(
            (target, f"'{name}' links it (a write to the link writes it)")
            for _, target, symbolic in reading.links
            if not symbolic
        )
    forms = [*walk.forms, *(f for f in dict.fromkeys(extra_forms) if f not in walk.forms)]
    if walk.truncated:
        findings.append(
            f"too many wrapper readings (over {MAX_FORMS}; globs multiply them too); "
            "not all were checked"
        )
    own = catalog.read(basename_form(argv))
    return ArgvReading(
        forms=tuple(forms),
        findings=tuple(dict.fromkeys(findings)),
        payloads=tuple(dict.fromkeys(payloads)),
        programs=tuple(own.programs) if own is not None else (),
        stdin_shell=stdin_shell,
        writes=_first_how(writes),
        links=tuple(dict.fromkeys(links)),
        repositories=tuple(dict.fromkeys(repositories)),
        stdin_code=stdin_code,
        echoes_stdin=own is not None and own.echoes_stdin and len(walk.forms) == 1,
        mentions=tuple(dict.fromkeys(mentions)),
        reads=tuple(dict.fromkeys(reads)),
        sourced=own.sourced if own is not None else None,
        canonical=tuple(dict.fromkeys(canonical)),
    )
