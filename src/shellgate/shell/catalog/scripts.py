"""The little languages that sed and awk run, read for what they can do.

A sed script is read command by command, as GNU sed reads it: addresses
(``1``, ``$``, ``/re/I``, ``\\%re%``, ``0~3``, ``addr,+N``), ``!``, then one command
letter, in ``{}`` blocks, after ``;`` or a newline. So every spelling of the
``e`` command (``1e id``, ``/x/,/y/ !e``, ``$e``) and of the ``s///e`` flag is
found, and ``w``/``W`` (and ``s///w``) name a file that runs to the end of the
line, as sed reads it. Text that is data (``a``/``i``/``c`` text, labels,
regexes, replacements) is skipped, not read as commands.

An awk program is not parsed: any construct that can run a command, write a
file, load code or read the environment is a finding (over-approximating:
``a > b`` is a comparison, and is still asked about).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, optional, val
from shellgate.shell.catalog.read import apply

#: awk constructs that run commands (system, pipes, indirect calls of gawk, which
#: reach builtins too), write files (>), load code, or read the environment.
AWK_RISK = re.compile(
    r"system\s*\(|\||getline|>|@load|@include|ENVIRON|PROCINFO|@\s*[A-Za-z_]\w*\s*\("
)

_LINE_ARGUMENT = frozenset("ewWrR")  # the rest of the line is a command or a file name
_TEXT = frozenset("aic")  # the rest of the line (and continuations) is text
_LABEL = frozenset(":btT")
_NUMBER_ARGUMENT = frozenset("qQlL")


@dataclass
class SedScript:
    """What one sed script does besides editing its stream."""

    #: ``e COMMAND`` commands ("" for a bare ``e`` or the ``s///e`` flag: the
    #: pattern space runs, not known until then).
    runs: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # ``w FILE``, ``W FILE``, ``s///w FILE``
    reads: list[str] = field(default_factory=list)  # ``r FILE``, ``R FILE``


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def blanks(self) -> None:
        while self.peek() in (" ", "\t"):
            self.at += 1

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.at)
        end = len(self.text) if end == -1 else end
        found, self.at = self.text[self.at : end], end
        return found

    def delimited(self, delimiter: str) -> None:
        """Skip to after the next unescaped ``delimiter`` (a regex, a replacement)."""
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 2 if char == "\\" else 1
            if char == delimiter:
                return

    def address(self) -> bool:
        char = self.peek()
        if char.isdigit():
            while self.peek().isdigit() or self.peek() == "~":
                self.at += 1
        elif char == "$":
            self.at += 1
        elif char in ("/", "\\"):
            if char == "\\":
                self.at += 1
            delimiter = self.peek()
            self.at += 1
            self.delimited(delimiter)
            while self.peek() in ("I", "M"):
                self.at += 1
        elif char in ("+", "~") and self.text[self.at + 1 : self.at + 2].isdigit():
            self.at += 1
            while self.peek().isdigit():
                self.at += 1
        else:
            return False
        return True

    def text_argument(self) -> None:
        """``a``/``i``/``c`` text: one line, or lines continued by a trailing backslash."""
        self.blanks()
        if self.text.startswith("\\\n", self.at):
            self.at += 2
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "\\":
                self.at += 2
                continue
            self.at += 1
            if char == "\n":
                return


def read_sed(script: str) -> SedScript:
    """Every command of ``script`` that runs, writes or reads (see the module doc)."""
    out = SedScript()
    r = _Reader(script)
    while r.at < len(script):
        char = r.peek()
        if char in " \t\n;{}!":
            r.at += 1
            continue
        if char == "#":
            r.rest_of_line()
            continue
        if r.address():
            r.blanks()
            if r.peek() == ",":
                r.at += 1
                r.blanks()
                r.address()
            continue  # the `!`, blanks and the command follow
        r.at += 1
        if char in _LINE_ARGUMENT:
            r.blanks()
            argument = r.rest_of_line().strip()
            {"e": out.runs, "w": out.writes, "W": out.writes}.get(char, out.reads).append(argument)
        elif char in _TEXT:
            r.text_argument()
        elif char in _LABEL:
            while r.peek() not in ("", "\n", ";"):
                r.at += 1
        elif char in ("s", "y"):
            _substitution(r, out, flags=char == "s")
        elif char in _NUMBER_ARGUMENT:
            r.blanks()
            while r.peek().isdigit():
                r.at += 1
    out.writes = [name for name in out.writes if name]
    return out


def _substitution(r: _Reader, out: SedScript, *, flags: bool) -> None:
    delimiter = r.peek()
    if delimiter in ("", "\n", "\\"):
        return
    r.at += 1
    r.delimited(delimiter)
    r.delimited(delimiter)
    while flags:
        char = r.peek()
        if char == "e":
            out.runs.append("")
        elif char == "w":
            r.at += 1
            r.blanks()
            out.writes.append(r.rest_of_line().strip())
            return
        elif not char or not (char.isdigit() or char in "gpiImM"):
            return
        r.at += 1


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
    if any(AWK_RISK.search(program) for program in [*programs, *joined]):
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
    if found.reads:
        out.finding(f"'{name}' script reads files (r, R)")


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
