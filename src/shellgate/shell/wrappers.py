"""Deny-side normalisation: every reading of an argv that still runs a command.

``unwrap`` peels wrappers (``sudo -u root``, ``env -S``, ``timeout -s KILL 5``,
``find -exec … ;``, ``xargs -0``…) recursively, each with its own option grammar,
and reduces absolute paths to basenames. It over-approximates on purpose: where a
grammar could be wrong (is ``sudo -h`` a flag or a host?), the command starting at
every word the grammar swallowed is tried too. Extra forms can only make deny and
ask rules match more, never less (the asymmetry of policy.md).

Shell strings a wrapper hands to ``sh -c`` (``watch``, ``flock -c``, ``su -c``,
``sg``, ``sudo -s``, ``gdb -ex 'shell …'``; ``env -S`` splitting aside) come back
as ``payloads`` for the walker to parse. The grammars are in ``wrapper_grammars.py``;
wrappers no grammar describes (``sg``, ``capsh``, ``setarch``, ``gdb``, ``mpirun``…)
have their own peelers in ``wrapper_specials.py``.
"""

from __future__ import annotations

import heapq
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shellgate.shell.options import Grammar, has, values
from shellgate.shell.tools import fd_exec_command
from shellgate.shell.wrapper_grammars import GRAMMARS
from shellgate.shell.wrapper_specials import (
    Payloads,
    commands_after,
    peel_capsh,
    peel_gdb,
    peel_launcher,
    peel_schedtool,
    peel_setarch,
    peel_sg,
)

Argv = tuple[str, ...]

#: Most forms kept per segment; a longer chain of wrappers is itself a finding.
MAX_FORMS = 48

#: What sudo -s/-i backslash-escapes in the command it hands to the shell.
_SUDO_QUOTED = re.compile(r"([^A-Za-z0-9_$-])")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass
class Unwrapped:
    forms: list[Argv] = field(default_factory=list)
    payloads: list[tuple[str, str]] = field(default_factory=list)  # (label, shell string)
    truncated: bool = False


def basename_form(argv: Argv) -> Argv:
    """``/usr/bin/rm`` is ``rm``; a leftover backslash never changes the command name."""
    if not argv:
        return argv
    head = argv[0]
    if "\\" in head:
        head = head.replace("\\", "")
    if "/" in head.rstrip("/"):
        head = head.rstrip("/").rsplit("/", 1)[1]
    return argv if head == argv[0] else (head, *argv[1:])


def split_string(value: str) -> list[str]:
    """``env -S`` splitting: shell-like quoting; unbalanced quotes fall back to blanks."""
    try:
        return shlex.split(value, posix=True)
    except ValueError:
        return value.split()


def _peel_generic(form: Argv, grammar: Grammar, out: Unwrapped) -> list[Argv]:
    start, options, found = commands_after(form, grammar)
    name = form[0]
    inner: list[Argv] = []
    if name == "env":
        head = [w for v in values(options, "-S", "--split-string") for w in split_string(v)]
        if head:
            inner.append((*head, *form[start:]))
    if name == "flock":
        # flock FILE -c CMD: the -c may also follow the lock file.
        rest = form[start:]
        commands = values(options, "-c", "--command")
        if rest[:1] in (("-c",), ("--command",)) and len(rest) > 1:
            commands.append(rest[1])
        for command in commands:
            out.payloads.append(("flock -c payload", command))
    if name == "env" and form[start : start + 1] == ("-",):
        inner.append(form[start + 1 :])  # `env -` is `env -i`
    if name == "coproc":
        # coproc [NAME] { CMD; }: the group's first command (the tree has it as words).
        for skip in (1, 2):
            if form[skip : skip + 1] == ("{",):
                inner.append(form[skip + 1 :])
        inner.append(form[2:])
    if name == "watch" and not has(options, "-x", "--exec") and start < len(form):
        out.payloads.append(("watch command", " ".join(form[start:])))
    if name == "firejail" and start < len(form):
        # Before 0.9.64 firejail ran its command line through a shell by default.
        out.payloads.append(("firejail command", " ".join(form[start:])))
    if name == "sudo" and has(options, "-s", "-i", "--shell", "--login") and start < len(form):
        # sudo -s/-i: the shell runs the words joined, escaped but for `$`.
        quoted = " ".join(_SUDO_QUOTED.sub(r"\\\1", word) for word in form[start:])
        out.payloads.append(("sudo -s command", quoted))
    inner.extend(found)
    return inner


def _peel_find(form: Argv, out: Payloads) -> list[Argv]:
    del out
    inner: list[Argv] = []
    i, n = 1, len(form)
    while i < n:
        if form[i] in _FIND_EXEC:
            j = i + 1
            while j < n and form[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                inner.append(form[i + 1 : j])
            i = j
        i += 1
    return inner


def _peel_fd(form: Argv, out: Payloads) -> list[Argv]:
    """``fd -x CMD ARGS ;``: the command fd runs per file, like ``find -exec``."""
    del out
    found = fd_exec_command(form)
    return [found[1]] if found is not None and found[1] else []


def _peel_payload_option(form: Argv, out: Payloads) -> list[Argv]:
    """``su -c CMD``, ``runuser -c``, ``script -c``: the command is a shell string."""
    for i, word in enumerate(form[1:], start=1):
        name, eq, value = word.partition("=")
        # getopt_long abbreviations too: `su --comm CMD`, `script --com=CMD`.
        long = len(name) >= 4 and any(
            full.startswith(name) for full in ("--command", "--session-command")
        )
        if (word == "-c" or (long and not eq)) and i + 1 < len(form):
            out.payloads.append((f"{form[0]} -c payload", form[i + 1]))
        elif long and eq:
            out.payloads.append((f"{form[0]} -c payload", value))
        elif len(word) > 2 and word[0] == "-" and word[1] != "-" and "c" in word:
            # Bundled letters (-qc CMD, -ecCMD): c takes the rest or the next word.
            rest = word[word.index("c") + 1 :]
            if rest or i + 1 < len(form):
                out.payloads.append((f"{form[0]} -c payload", rest or form[i + 1]))
    return []


_SPECIAL: dict[str, Callable[[Argv, Payloads], list[Argv]]] = {
    "find": _peel_find,
    "fd": _peel_fd,
    "fdfind": _peel_fd,
    "su": _peel_payload_option,
    "script": _peel_payload_option,
    "sg": peel_sg,
    "capsh": peel_capsh,
    "setarch": peel_setarch,
    "gdb": peel_gdb,
    "schedtool": peel_schedtool,
    **dict.fromkeys(("mpirun", "mpiexec", "orterun", "srun", "salloc"), peel_launcher),
}


def peel(form: Argv, out: Unwrapped) -> list[Argv]:
    """The commands ``form`` runs directly (one wrapper layer), best reading first."""
    if not form:
        return []
    name = form[0]
    special = _SPECIAL.get(name)
    if special is not None:
        return special(form, out)
    if name == "runuser":
        _peel_payload_option(form, out)
    grammar = GRAMMARS.get(name)
    if grammar is None:
        return []
    return _peel_generic(form, grammar, out)


def unwrap(argv: Sequence[str]) -> Unwrapped:
    """Every normalised reading of ``argv``; ``forms[0]`` is ``argv`` itself.

    Readings are taken best first: each peel's first reading keeps its parent's
    rank, every other one (a guess at a consumed word) ranks one lower. So when a
    long wrapper line (``bwrap`` with twenty ``--ro-bind SRC DEST``) yields more
    than ``MAX_FORMS`` readings, the cap drops guesses, not the chain of best
    readings (``bwrap … sudo rm -rf /`` still reaches ``rm -rf /``).
    """
    first = tuple(argv)
    out = Unwrapped()
    seen = {first}
    heap: list[tuple[int, int, Argv]] = [(0, 0, first)]
    order = 1
    while heap:
        rank, _, form = heapq.heappop(heap)
        if len(out.forms) >= MAX_FORMS:
            out.truncated = True
            return out
        out.forms.append(form)
        norm = basename_form(form)
        # A renamed head is queued and peeled on its own turn (no payload twice).
        candidates = [norm] if norm != form else peel(form, out)
        for index, candidate in enumerate(candidates):
            if candidate and candidate not in seen:
                seen.add(candidate)
                heapq.heappush(heap, (rank + (index > 0), order, candidate))
                order += 1
    return out
