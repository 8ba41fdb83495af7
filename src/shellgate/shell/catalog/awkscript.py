"""What an awk program can do beyond printing, read token by token.

awk has no ``>`` redirection outside ``print`` and ``printf``: ``NR>1``,
``$3 > 100`` and ``if (a > b)`` compare, while ``print > "f"``, ``printf "%s",
x >> f`` and ``print a > b`` write a file (in a ``print`` statement a ``>`` that
no parenthesis encloses is a redirection). A ``|`` is a pipe (``print | "sh"``,
``"id" | getline``, gawk's ``|&``) unless it is half of ``||``. Both can hide in
string and regular-expression literals (``/a|b/``, ``"x>y"``), which are
skipped.

A ``/`` starts a regular expression only where an operand is expected (after an
operator, an opening bracket, ``,``, ``;``, a newline or the start); after an
operand (a name, a number, ``)``, ``]``, ``$``) it divides. A reading that takes
a regular expression for a division only sees more (its ``|`` and ``>`` count);
the other way round could hide a redirection, so it is never taken.

Everything else that runs a command, loads code or reads the environment
(``system()``, ``getline``, ``@load``, ``ENVIRON``, gawk's indirect calls) is a
plain pattern (:data:`AWK_CALLS`).
"""

from __future__ import annotations

import re

#: awk constructs that run commands, read files or the environment, or load code.
AWK_CALLS = re.compile(
    r"system\s*\(|getline|@load|@include|ENVIRON|PROCINFO|@\s*[A-Za-z_]\w*\s*\("
)
_WORD = re.compile(r"[A-Za-z_]\w*")
_NUMBER = re.compile(r"\d[\w.]*")
#: Keywords after which an operand is expected (a ``/`` there starts a regex).
_OPERAND_NEXT = frozenset({"print", "printf", "return", "in", "case", "getline", "if",
                           "while", "for", "do", "else", "delete", "exit"})  # fmt: skip


def _skip_string(program: str, i: int) -> int:
    """Index after the string literal opening at ``i``."""
    n = len(program)
    i += 1
    while i < n and program[i] != '"':
        i += 2 if program[i] == "\\" else 1
    return i + 1


def _skip_regex(program: str, i: int) -> int:
    """Index after the regex literal opening at ``i`` (``[…]`` hides a ``/``)."""
    n = len(program)
    i += 1
    while i < n and program[i] not in "/\n":
        if program[i] == "\\":
            i += 2
            continue
        if program[i] == "[":
            i += 1
            if i < n and program[i] == "^":
                i += 1
            if i < n and program[i] == "]":
                i += 1
            while i < n and program[i] not in "]\n":
                i += 2 if program[i] == "\\" else 1
        i += 1
    return i + 1


#: Redirection targets that are no file: the streams awk already writes.
_STREAMS = re.compile(r'>>?[ \t]*"/dev/(?:stdout|stderr|null)"[ \t]*(?=[;}\n#]|$)')


def _stream_target(program: str, i: int) -> int:
    """Where the redirection at ``i`` ends when its target is a standard stream
    (``print "x" > "/dev/stderr"``), else 0."""
    found = _STREAMS.match(program, i)
    return found.end() if found is not None else 0


def writes_or_pipes(program: str) -> str:
    """``">"`` or ``"|"`` when the program redirects print output or pipes, else ``""``."""
    i, n = 0, len(program)
    operand_next = True  # at the start a / is a regex
    printing = False  # inside a print/printf statement
    depth = 0  # brackets open inside the print statement
    last = ""  # the last character that is no blank (a newline after "," continues)
    while i < n:
        c = program[i]
        if c == '"':
            i = _skip_string(program, i)
            operand_next, last = False, c
            continue
        if c == "#":
            while i < n and program[i] != "\n":
                i += 1
            continue
        if c == "/" and operand_next:
            i = _skip_regex(program, i)
            operand_next, last = False, c
            continue
        if program.startswith(("++", "--"), i):
            i += 2  # before a name it is prefix; before a / it can only be postfix
            operand_next, last = False, c
            continue
        word = _WORD.match(program, i)
        if word is not None:
            name = word.group()
            last = name[-1]
            if name in ("print", "printf"):
                printing, depth = True, 0
            operand_next = name in _OPERAND_NEXT
            i = word.end()
            continue
        number = _NUMBER.match(program, i)
        if number is not None:
            operand_next, last = False, "0"
            i = number.end()
            continue
        if c == "|":
            if program.startswith("||", i):
                i += 2
                operand_next, last = True, c
                continue
            return "|"
        if c == ">" and printing and depth == 0:
            after = _stream_target(program, i)
            if not after:
                return ">"
            i, last = after, '"'
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(depth - 1, 0)
        elif c in ";{}" or (c == "\n" and last not in ",&|\\"):
            printing = False  # awk reads on after a newline that follows , && || or \\
        if not c.isspace():
            operand_next = c not in ")]$"
            last = c
        i += 1
    return ""


def awk_risk(program: str) -> str:
    """What in ``program`` runs a command, writes a file, loads code or reads the
    environment (the construct's text), or ``""``."""
    found = AWK_CALLS.search(program)
    if found is not None:
        return found.group()
    return writes_or_pipes(program)
