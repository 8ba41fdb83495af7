"""Catalog family: findutils (``find``, ``xargs``) and ``fd``.

What they run is a program of its own, decided on its own: ``find -exec CMD … ;``
(and ``-execdir``, ``-ok``, ``-okdir``, ended by ``;`` or ``+``), ``fd -x CMD … ;``,
and ``xargs CMD`` (``echo`` when none is given). A program word that only the
file list fills in (``{}``, xargs' replace string) is a finding. ``find``'s
expression also names files it writes (``-fprint FILE``…) and deletes its
search roots (``-delete``).
"""

from __future__ import annotations

from shellgate.shell.argv.engine import CLAP, GNU_PREFIX, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Reading,
    Runs,
    flag,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.environment import check_variable_name
from shellgate.shell.catalog.read import add_program, basename, read
from shellgate.shell.catalog.registry import lookup

_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: Primaries naming a file they write, with how many words they take.
_FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}
#: Primaries (and global options) taking one word, which is never a primary itself.
_FIND_VALUED = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-lname", "-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm",
    "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-anewer",
    "-cnewer", "-samefile", "-inum", "-links", "-used", "-maxdepth", "-mindepth", "-fstype",
    "-printf", "-context", "-regextype", "-files0-from", "-D",
})  # fmt: skip


def _find_roots(argv: Argv) -> tuple[list[str], int]:
    """The search roots (operands before the expression) and where the expression starts."""
    i = 1
    while i < len(argv) and (argv[i] in ("-H", "-L", "-P", "-D") or argv[i].startswith("-O")):
        i += 2 if argv[i] == "-D" else 1
    roots: list[str] = []
    while i < len(argv) and not argv[i].startswith("-") and argv[i] not in ("(", "!", ","):
        roots.append(argv[i])
        i += 1
    return roots, i


def _find(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Read find's expression: the programs it runs, files it writes, what it deletes."""
    del parsed
    roots, i = _find_roots(argv)
    n = len(argv)
    while i < n:
        word = argv[i]
        if word in _FIND_EXEC:
            end = i + 1
            while end < n and argv[end] not in (";", "+"):
                end += 1
            add_program(out, f"{argv[0]} {word} payload", argv[i + 1 : end])
            i = end + 1
            continue
        if word in _FIND_WRITES:
            out.writes.extend(argv[i + 1 : i + 2])  # a surprising write: it asks
            i += 1 + _FIND_WRITES[word]
            continue
        if word == "-delete":
            out.deleted.extend(roots or ["."])
        elif word in _FIND_VALUED or word.startswith("-newer"):
            i += 1
        i += 1


def _xargs(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``xargs -I R CMD``: a command word holding R is filled in from the input;
    ``--process-slot-var NAME`` sets NAME in every child (``PATH`` would steer it)."""
    for name in parsed.values("--process-slot-var"):
        check_variable_name(name, f"{argv[0]} --process-slot-var", out)
    replace = [*parsed.values("-I"), *(h.value or "{}" for h in parsed.hits if h.name == "-i")]
    head = argv[parsed.end : parsed.end + 1]
    if head and any(r and r in head[0] for r in replace):
        out.finding(f"'{argv[0]}' runs a program named by its input ('{head[0][:40]}')")
    program = argv[parsed.end :] or ("echo",)
    if _input_steers(program):
        out.finding(
            f"'{argv[0]}' hands words from its input to '{program[0][:40]}', whose "
            "arguments can make it run, load or write what nobody allowed"
        )


def _input_steers(program: Argv, depth: int = 0) -> bool:
    """Whether words xargs appends could change what ``program`` does beyond the
    files it reads: a wrapper (``xargs env`` runs whatever the input names), a
    command with subcommands (``xargs git``: the input picks ``push``), one with
    hooks or with options that run, load or write (``xargs sed``, ``xargs tar``).

    The words go to the end of the line, so through a wrapper that already has
    its command (``xargs env grep foo``) they reach that command: it decides.
    """
    entry = lookup(basename(program[0]))
    if entry is None:
        return False  # an unknown program needs its own allow, arguments and all
    if entry.runs is not None:
        reading = read(program)
        inner = reading.programs[-1].argv if reading and reading.programs else ()
        if inner and inner[-1] == program[-1] and depth < 8:
            return _input_steers(inner, depth + 1)
        return True  # its command is (or may be) the input itself
    if entry.subcommands or entry.hooks or entry.finding:
        return True
    return any(o.runs or o.finding or o.writes or o.deletes for o in entry.options)


_FD_OPTIONS = (
    val("-e --extension"), val("-t --type"), val("-E --exclude"), val("-d --max-depth --maxdepth"),
    val("-S --size"), val("-o --owner"), val("-c --color"), val("-j --threads"),
    val("-C --base-directory"), val("-x --exec"), val("-X --exec-batch"),
    *values("--min-depth --exact-depth --changed-within --changed-before --change-newer-than "
            "--change-older-than --newer --older --max-results --path-separator --search-path "
            "--ignore-file --batch-size --format --max-buffer-time"),
)  # fmt: skip
#: Short letters whose option takes a value: the rest of a bundle is that value.
_FD_VALUE_LETTERS = frozenset(
    n[1] for o in _FD_OPTIONS for n in o.names if len(n) == 2 and n[1] not in "xX"
)


def fd_exec_command(form: Argv) -> tuple[str, Argv] | None:
    """(option, command) of fd's ``-x``/``-X``/``--exec``/``--exec-batch``, or None.

    The command runs to a ``;`` word or the end (clap's value terminator); a glued
    spelling (``--exec=CMD``, ``-xCMD``) gives the command's first word. Every word
    is read, ``--`` too (it may be an option's value: ``fd -E -- -x rm``).
    """
    for i, word in enumerate(form[1:], start=1):
        glued: str | None = None
        option = ""
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if len(name) > 4 and ("--exec-batch".startswith(name) or name == "--exec"):
                option, glued = name, (value if eq else None)
        elif len(word) > 1 and word[0] == "-":
            for j, letter in enumerate(word[1:], start=1):
                if letter in "xX":
                    option, glued = "-" + letter, (word[j + 1 :] or None)
                    break
                if letter in _FD_VALUE_LETTERS:
                    break  # the rest is this option's value (-tx: type executable)
        if option:
            rest = list(form[i + 1 :])
            if glued is not None:
                rest.insert(0, glued)
            end = rest.index(";") if ";" in rest else len(rest)
            return option, tuple(rest[:end])
    return None


def _fd(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``fd -x CMD``/``-X CMD``: CMD is a program of its own, as ``find -exec``'s is
    (no finding: ``fd -X wc -l`` is ``find … -exec wc -l {} +``)."""
    del parsed
    found = fd_exec_command(argv)
    if found is not None:
        option, command = found
        add_program(out, f"{argv[0]} {option} payload", command)


ENTRIES: tuple[Entry, ...] = (
    Entry(("find",), hooks=(_find,), no_canonical=True),
    Entry(("fd", "fdfind"), CLAP, _FD_OPTIONS, hooks=(_fd,), through_double_dash=True),
    Entry(
        ("xargs",),
        GNU_PREFIX,
        (
            val("-a --arg-file"), val("-d --delimiter"), val("-E"), optional("-e --eof"),
            val("-I"), optional("-i --replace"), val("-L"), optional("-l --max-lines"),
            val("-n --max-args"), val("-P --max-procs"), val("-s --max-chars"),
            val("--process-slot-var"), flag("-0 --null"), flag("-r --no-run-if-empty"),
            flag("-p --interactive"), flag("-t --verbose"), flag("-x --exit"),
            flag("-o --open-tty"),
        ),
        runs=Runs(default=("echo",)),
        hooks=(_xargs,),
    ),
)  # fmt: skip
