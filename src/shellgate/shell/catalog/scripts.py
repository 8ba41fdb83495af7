"""The little languages that sed and awk run, read for what they can do.

A sed script is read by a port of GNU sed's own parser (``sedscript.py``), so
every spelling of the ``e`` command (``1e id``, ``/x/,/y/ !e``, ``:x e id``) and
of the ``s///e`` flag is found, and ``w``/``W``/``s///w`` name a file that runs
to the end of the line, as sed reads it; a script sed may read otherwise is a
finding.

An awk program is read token by token (``awkscript.py``): a construct that can
run a command, write a file, load code or read the environment is a finding;
a comparison (``NR>1``), ``||`` and the insides of strings and regular
expressions (``/a|b/``) are not.
"""

from __future__ import annotations

from collections.abc import Callable

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, Parsed
from shellgate.shell.catalog.awkscript import awk_risk
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, optional, val
from shellgate.shell.catalog.read import apply
from shellgate.shell.catalog.sedscript import read_sed


def in_place(*code: str) -> Callable[[Parsed], list[str]]:
    """``-i``: the file operands are written (all of them when ``code`` options
    give the script, else all but the first, which is the script)."""

    def writes(parsed: Parsed) -> list[str]:
        if not parsed.has("-i"):
            return []
        files = parsed.words if parsed.has(*code) else parsed.words[1:]
        return [*files, *_backups(parsed.values("-i"), files)]

    return writes


def _backups(suffixes: list[str], files: list[str]) -> list[str]:
    """Where ``-i SUFFIX`` keeps each original: GNU sed puts the file's name for
    every ``*`` and, with a ``/``, reads the result as a path (``-i'/root/*'``
    moves ``.bashrc`` to ``/root/.bashrc``); else the name plus the suffix."""
    out: list[str] = []
    for suffix in suffixes:
        for path in files:
            base = path.rsplit("/", 1)[-1]
            if "*" in suffix:
                backup = suffix.replace("*", base)
                if "/" not in backup:
                    backup = path[: len(path) - len(base)] + backup
            elif "/" in suffix:
                backup = suffix  # sed refuses it without a *: listed all the same
            else:
                backup = path + suffix
            out.append(backup)
    return out


_AWK_DEFAULTS = {"-o": "awkprof.out", "-p": "awkprof.out", "-d": "awkvars.out"}
_AWK_FILE = "runs a program read from a file"


def _long_w(argv: Argv, parsed: Parsed) -> Argv:
    """``-W NAME[=V]`` respelled ``--NAME[=V]`` (gawk's getopt ``W;``, mawk's -W
    options: ``-W exec FILE`` is ``--exec FILE``); comma lists split too (mawk)."""
    words = list(argv)
    for hit in reversed([h for h in parsed.hits if h.name == "-W" and h.value]):
        value = hit.value or ""
        word = argv[hit.at]
        letter = word.index("W", 1)  # the letters before it are flags: W took the rest
        glued = letter + 1 < len(word)
        head = word[:letter]
        spelled = [f"--{value}"] + ([f"--{p}" for p in value.split(",")] if "," in value else [])
        words[hit.at : hit.at + (1 if glued else 2)] = [*([head] if head != "-" else []), *spelled]
    return tuple(words)


def _awk(argv: Argv, parsed: Parsed, out: Reading) -> None:
    respelled = _long_w(argv, parsed)
    if respelled != argv:
        apply(respelled, AWK, out, [])  # its own hook reads the program
        return
    for hit in parsed.hits:
        if hit.name in _AWK_DEFAULTS and not hit.value:
            out.outputs.append(_AWK_DEFAULTS[hit.name])
    programs = parsed.values("-e")
    if not parsed.has("-e", "-f", "-E"):
        programs = parsed.words[:1]
    # awk joins a backslash-newline (`system\⏎("id")` is `system("id")`).
    joined = [program.replace("\\\n", "") for program in programs]
    if any(awk_risk(program) for program in [*programs, *joined]):
        out.finding(f"'{argv[0]}' program can run commands or write files (system, pipes, >)")


AWK = Entry(
    ("awk", "gawk", "mawk", "nawk"),
    GNU_PREFIX,  # gawk's getopt string starts with "+": options end at the program
    options=(
        val("-F --field-separator"),
        val("-v --assign"),
        val("-e --source"),
        val("-W"),
        val("-f --file", finding=_AWK_FILE),
        val("-E --exec", last=True, finding=_AWK_FILE),
        val("-i --include", finding="includes a source library (code from a file)"),
        val("-l --load", finding="loads a shared library extension"),
        optional("-o --pretty-print", writes=True),
        optional("-p --profile", writes=True),
        optional("-d --dump-variables", writes=True),
        optional("-D --debug", finding="runs the debugger (commands from stdin or a file)"),
        optional("-L --lint"),
        flag("-V --version", inert=True),
    ),
    hooks=(_awk,),
)


def _sed(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    scripts = parsed.values("-e")
    if not parsed.has("-e", "-f"):
        scripts = parsed.words[:1]
    found = read_sed("\n".join(scripts))  # sed joins its -e pieces with newlines
    for command in found.runs:
        out.finding(f"'{name}' script runs commands (e)")
        if command:
            out.payloads.append((f"{name} e command", command))
    out.writes.extend(found.writes)
    # r/R FILE reads a file as an operand does: the protected-reads layer checks it.
    out.reads.extend(found.reads)
    if found.unsure:
        out.finding(f"'{name}' script may be read otherwise by sed ({found.unsure})")


SED = Entry(
    ("sed", "gsed"),
    GNU,
    options=(
        val("-e --expression"),
        val("-f --file", finding="runs a script read from a file"),
        optional("-i --in-place"),
        val("-l --line-length"),
        flag("-n --quiet --silent"),
        flag("-E -r --regexp-extended"),
        flag("-s --separate"),
        flag("-z --null-data"),
        flag("-u --unbuffered", inert=True),
        flag("--posix"),
        flag("--sandbox"),
        flag("--follow-symlinks"),
        flag("--debug", inert=True),
    ),
    writes=in_place("-e", "-f"),
    hooks=(_sed,),
)
