"""Catalog family: debuggers, tracers and launchers: they run a program under control.

``strace``, ``ltrace`` and ``valgrind`` are wrappers: their operands are the
program (its own segment). ``gdb`` runs a program only when told to: its
``--args`` operands, and gdb commands given with ``-ex`` that run shell strings
(``shell``, ``!``, ``pipe``, ``run`` through ``sh -c``, a debuggee's
``system()``/``popen()``) or Python. The MPI and Slurm launchers take hundreds
of options: every word that could start their command is a guess too.
"""

from __future__ import annotations

import re
import shlex

from shellgate.shell.argv.engine import (
    GNU_PREFIX,
    LONG_ONLY,
    OPTIONAL,
    POSIX,
    Dialect,
    Parsed,
    scan,
)
from shellgate.shell.catalog.entry import Argv, Entry, Reading, Runs, flag, letters, val, values
from shellgate.shell.catalog.read import add_program, basename, could_be_command
from shellgate.shell.catalog.registry import lookup
from shellgate.shell.catalog.wrappers import drop_program, replace_program, wrapper


def _schedtool(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``schedtool [-R -p 20 …] -e CMD ARGS``: ``-e`` ends the options."""
    del parsed
    found = [
        argv[i + 1 :]
        for i, word in enumerate(argv[:-1])
        if i and word[:1] == "-" and word[1:2] != "-" and word.endswith("e")
    ]
    if found:
        add_program(out, f"{argv[0]} payload", found[0])
        out.guesses.extend(found[1:])


#: Guesses a launcher with unknown options may produce (the forms cap is shared).
_LAUNCHER_GUESSES = 8


def _launcher(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``mpirun``/``srun``…: hundreds of options, so every word that could start
    the command is a guess too; ``:`` starts another program (``mpirun -n 1 A : -n 2 B``).

    No option takes more than two words (``mpirun --mca KEY VALUE``), so of three
    operands in a row the command starts at one of them: the guessing stops there.
    """
    run = guessed = 0
    for i, word in enumerate(argv[1:], start=1):
        if word == "--":
            break
        if word == ":" or (len(word) > 1 and word.startswith("-")):
            run = 0
            continue
        run += 1
        if could_be_command(word) and i != parsed.end:
            out.guesses.append(argv[i:])
            guessed += 1
        if guessed >= _LAUNCHER_GUESSES or (run >= 3 and ":" not in argv[i:]):
            break
    inner = argv[parsed.end :]
    if ":" not in inner:
        return
    entry = lookup(basename(argv[0]))
    assert entry is not None
    cut = inner.index(":")
    replace_program(argv, out, inner[:cut], parsed)
    rest = inner[cut + 1 :]
    while rest:
        cut = rest.index(":") if ":" in rest else len(rest)
        part = (argv[0], *rest[:cut])
        add_program(out, f"{argv[0]} payload", part[scan(part, entry.spec).end :])
        rest = rest[cut + 1 :]


#: Open MPI and MPICH spell long options with one dash or two (``-np``, ``--mca``)
#: and stop at the command; no engine dialect reads both, so it is declared here.
_LONG_ONLY_PREFIX = Dialect(
    "long-only-prefix", permute=False, abbreviations=False, bundles=False, single_dash_long=True
)
_MPI = (
    *values("-n -c -N -H -x -f --np --host --hostfile --machinefile --wdir --wd --map-by "
            "--bind-to --rank-by --prefix --ppn --hosts --npernode --envlist --genvlist "
            "--output-filename"),
    *values("--mca --gmca --genv --env", takes=2),
)  # fmt: skip
_SLURM = (
    *letters("ABCcDdeGiJLMmNnopqrSTtWwx"),
    *values("--ntasks --nodes --partition --time --job-name --account --cpus-per-task --mem "
            "--gres --output --error --input --chdir --constraint --exclude --nodelist --qos "
            "--dependency --mpi --export --gpus --mem-per-cpu --ntasks-per-node "
            "--distribution --cpu-bind --reservation"),
)  # fmt: skip

_LOADS_GDB_COMMANDS = "runs the gdb commands of a file"
_GDB_EVAL = ("-ex", "-iex", "-eiex")
_GDB_RUN = frozenset({"r", "ru", "run", "start", "starti"})
_GDB_PYTHON = frozenset({"python", "py", "pi", "python-interactive"})
#: ``call system("CMD")``, ``print popen("CMD", "r")``: the debuggee runs CMD via sh -c.
_GDB_LIBC_SHELL = re.compile(r'\b(?:system|popen)\s*\(\s*"((?:[^"\\]|\\.)*)"')


def _gdb(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``gdb -ex 'shell CMD'``, ``-ex '!CMD'``, ``-ex 'pipe P | CMD'``, ``--args CMD…``.

    gdb stops reading options at ``--args``: the words after it are the program
    and its arguments. ``run ARGS`` (and ``set args``) start the program through
    ``sh -c``, so the program with its arguments is a shell string too.
    """
    stop = next((h.at for h in parsed.hits if h.name == "--args"), len(argv))
    inferior = argv[stop + 1 :]
    if inferior:
        add_program(out, f"{argv[0]} --args program", inferior)
    positional = [word for at, word in parsed.operands if at < stop]
    program = inferior[0] if inferior else positional[0] if positional else None
    for hit in parsed.hits:
        if hit.at < stop and hit.name in _GDB_EVAL and hit.value is not None:
            _gdb_command(hit.value, program, out)


def _head(text: str) -> tuple[str, str]:
    """The first word of a gdb command line and the rest."""
    parts = text.split(None, 1)
    return (parts[0], parts[1] if len(parts) > 1 else "") if parts else ("", "")


def _gdb_command(command: str, program: str | None, out: Reading) -> None:
    text = command.strip()
    label = "gdb shell command"
    for found in _GDB_LIBC_SHELL.finditer(text):
        out.payloads.append((label, re.sub(r"\\(.)", r"\1", found.group(1))))
    if text.startswith("!"):
        out.payloads.append((label, text[1:]))
        return
    if text.startswith("|"):
        _gdb_pipe(text[1:], out)
        return
    head, rest = _head(text)
    if head == "set" and _head(rest)[0] == "args":
        head, rest = "run", _head(rest)[1]
    if len(head) >= 3 and "shell".startswith(head):
        out.payloads.append((label, rest))
    elif len(head) >= 3 and "pipe".startswith(head):
        _gdb_pipe(rest, out)
    elif head in _GDB_RUN:
        line = f"{shlex.quote(program)} {rest}" if program else rest
        if line.strip():
            out.payloads.append((label, line))
    elif head in _GDB_PYTHON and rest:
        out.finding(f"'gdb {head}' runs inline code (Python in gdb)")
    else:
        _gdb_files(head, rest, out)


#: gdb commands whose file operand is written: ``dump``/``append`` (after their
#: kind words), ``gcore``, ``generate-core-file``, ``save …``.
_GDB_DUMP_WORDS = frozenset({"binary", "ihex", "srec", "tekhex", "verilog", "value", "memory"})


def _gdb_files(head: str, rest: str, out: Reading) -> None:
    """Files gdb commands write (``dump value F EXPR``, ``set logging file F``) and
    code they load (``source F``, ``guile``, ``compile``)."""
    words = rest.split()
    if head in ("dump", "append"):
        while words and words[0] in _GDB_DUMP_WORDS:
            words = words[1:]
        out.writes.extend(words[:1])
    elif head in ("gcore", "generate-core-file") and words:
        out.writes.append(words[0])
    elif head == "save" and len(words) > 1:
        out.writes.append(words[1])
    elif head == "set" and words[:2] == ["logging", "file"] and len(words) > 2:
        out.writes.append(words[2])
    elif head in ("source", "so"):
        out.finding(f"'gdb {head}' {_LOADS_GDB_COMMANDS}")
    elif head in ("guile", "gu", "compile", "expression") and words:
        out.finding(f"'gdb {head}' runs inline code (compiled or Guile, in gdb)")


def _gdb_pipe(text: str, out: Reading) -> None:
    """``pipe [COMMAND] | SHELL_COMMAND`` or ``pipe -d DELIM COMMAND DELIM SHELL_COMMAND``."""
    text = text.strip()
    delimiter = "|"
    if text.startswith("-d"):
        parts = text[2:].split(None, 1)
        if len(parts) == 2:
            delimiter, text = parts
    before, found, after = text.partition(delimiter)
    out.payloads.append(("gdb shell command", after if found else before))


def _strace(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-o FILE`` writes FILE; ``-o '|CMD'`` (or ``!CMD``) pipes the trace to ``sh -c CMD``.

    ``-E NAME=value`` is the traced program's environment."""
    for value in parsed.values("-o"):
        if value[:1] in ("|", "!"):
            out.payloads.append((f"{argv[0]} -o command", value[1:]))
        elif value:
            out.outputs.append(value)
    given = tuple((n, v) for n, eq, v in (w.partition("=") for w in parsed.values("-E")) if eq)
    inner = argv[parsed.end :]
    if given and inner:
        drop_program(argv, out)
        add_program(out, f"{argv[0]} payload", inner, given)


_TRACER = (
    val("-o --output"), val("-p --attach"), val("-u --user"), val("-E --env"),
    val("-s --string-limit"), val("-a --columns"), val("-S --summary-sort-by"),
    val("-P --trace-path"), val("-b --detach-on"), *letters("eOIX"),
)  # fmt: skip

ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("gdb",),
        LONG_ONLY,
        (
            val("-ex --eval-command"), val("-iex --init-eval-command"),
            val("-eiex --early-init-eval-command"),
            val("-x --command", finding=_LOADS_GDB_COMMANDS),
            val("-ix --init-command", finding=_LOADS_GDB_COMMANDS),
            val("-eix --early-init-command", finding=_LOADS_GDB_COMMANDS),
            val("-p --pid"), val("-c --core"), val("-d --directory"), val("-s --symbols"),
            val("-e --exec"), val("-se"), val("-cd"), val("-b --baud"), val("-l"),
            val("-D --data-directory"), val("-t --tty"), val("-i --interpreter"),
            flag("--args"),
        ),
        hooks=(_gdb,),
    ),
    Entry(("strace",), GNU_PREFIX, _TRACER, runs=Runs(), hooks=(_strace,)),
    Entry(
        ("ltrace",),
        GNU_PREFIX,
        (val("-o --output", writes=True), *letters("eOpPsSuabIEXFlnwxAD")),
        runs=Runs(),
    ),
    Entry(("schedtool",), POSIX, hooks=(_schedtool,), no_canonical=True),
    wrapper("mpirun mpiexec orterun", _MPI, dialect=_LONG_ONLY_PREFIX, hooks=(_launcher,)),
    wrapper("srun salloc", _SLURM, hooks=(_launcher,)),
    Entry(
        ("valgrind",),
        POSIX,  # every value is glued (--log-file=F); no abbreviations
        (
            val("--log-file", takes=OPTIONAL, writes=True),
            val("--xml-file", takes=OPTIONAL, writes=True),
            val("--db-command", takes=OPTIONAL, runs="shell"),
        ),
        runs=Runs(),
    ),
)  # fmt: skip
