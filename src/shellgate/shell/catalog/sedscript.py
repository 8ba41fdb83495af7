"""A sed script read for what it runs, writes and reads, the way GNU sed reads it.

This is GNU sed's own parser (``compile_program`` in sed/compile.c, unchanged
from 4.2.2 to 4.9) ported construct by construct, so every command sed sees is
seen here, and only text sed takes as data is skipped:

- addresses (``1``, ``$``, ``0~3``, ``addr,+N``, ``/re/I``, ``\\%re%``), ``!``;
- a label (``:``, ``b``, ``t``, ``T``, and ``v``'s version) ends at a blank, ``;``,
  ``}``, ``#`` or a newline, and the next command may follow at once:
  ``:x e CMD`` and ``bx w FILE`` run and write;
- a regex and a replacement end at their delimiter, which may be any one-byte
  character but a newline, the backslash included (``s\\a\\b\\e``: no escape
  is possible then); a bracket expression in a regex (``s/[/]/x/``) hides the
  delimiter;
- ``s`` flags may be spaced out (``s/a/b/ g e``), and ``w`` (``s///w`` too),
  ``W``, ``r``, ``R`` take the rest of the line as a file name;
- ``a``/``i``/``c``/``e`` text runs to the end of the line, a backslash
  escaping the next character (a newline too); ``e``'s text is unescaped as sed
  unescapes it (``\\x72m`` is ``rm``) and is the command sed hands to ``sh -c``.

Where GNU sed would stop with an error (an unknown command, a regex without its
end, a label-less ``:``, an unmatched brace, extra characters after a command, a
missing file name) it runs nothing; :attr:`SedScript.rejected` says why, and the
reader reads on from the offending character, so a sed that accepts more (an
older GNU sed takes a label-less ``:``; busybox has its own grammar) still has
its ``e``/``w``/``r`` found wherever they could start. That is no finding by
itself: the deny-side readings of ``sed -n '2,$p' f`` (``$p`` as an empty
expansion) are rejected scripts, and must not make every ``$`` address ask.

What this reading may get wrong is :attr:`SedScript.unsure`, a finding: a
delimiter that is not ASCII; a non-ASCII character right before a character a
regex scan gives a meaning to (``\\``, ``[``, ``]``, ``:``, ``=``, the
delimiter), which a double-byte locale (GBK, Big5, GB18030, Shift JIS) reads as
one character with it, so the delimiter or escape seen here would not be sed's;
a label holding ``\\v``, ``\\f`` or ``\\r``, where busybox sed ends it. Errors
sed finds only after parsing (an undefined label, a bad regex) are not modelled:
they stop sed before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_DIGITS = "0123456789"
_SPACE = (" ", "\t", "\n", "\v", "\f", "\r")  # C's isspace on ASCII
_LABEL_END = ("", "\n", " ", "\t", ";", "}", "#")  # read_label stops here (and keeps it)
_PLAIN = frozenset("=dDFgGhHnNpPzx")  # commands with no argument
_TEXT_ESCAPES = {"a": "\a", "f": "\f", "n": "\n", "\n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_BASES = {"d": 10, "x": 16, "o": 8}  # \dNNN, \xHH, \oNNN
_HEX = frozenset("0123456789abcdefABCDEF")
#: ASCII characters a regex scan gives a meaning to, which a legacy double-byte
#: locale can join to the non-ASCII character before them (trail bytes 0x30-0x7E).
_JOINABLE = frozenset("\\[]:=")


@dataclass
class SedScript:
    """What one sed script does besides editing its stream."""

    #: ``e COMMAND`` commands as sed runs them ("" for a bare ``e`` or the
    #: ``s///e`` flag: the pattern space runs, not known until then).
    runs: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # ``w FILE``, ``W FILE``, ``s///w FILE``
    reads: list[str] = field(default_factory=list)  # ``r FILE``, ``R FILE``
    #: The first error GNU sed stops at ("" for none): it runs nothing then.
    rejected: str = ""
    #: Why this reading may not be the one sed makes ("" when it is): a finding.
    unsure: str = ""


class _Rejected(Exception):
    def __init__(self, why: str, at: int) -> None:
        super().__init__(why)
        self.at = at  # where the offending character is: reading resumes there


def read_sed(script: str) -> SedScript:
    """Every command of ``script`` that runs, writes or reads (see the module doc).

    Several ``-e`` scripts are read joined by newlines: sed reads them one after
    another, and where an end of script and a newline differ sed rejects the
    script either way (``s/a\\`` at the end of one ``-e``).
    """
    parser = _Parser(script)
    while True:
        start = parser.next_command()
        if start < 0:
            break
        try:
            parser.command()
        except _Rejected as error:
            parser.out.rejected = parser.out.rejected or str(error)
            parser.at = max(error.at, start + 1)
    if parser.depth and not parser.out.rejected:
        parser.out.rejected = "unmatched `{'"
    return parser.out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.depth = 0  # open `{` blocks
        self.out = SedScript()

    # -- characters (inchar, savchar, in_nonblank) ---------------------------------

    def inchar(self) -> str:
        """The next character, or "" at the end (which is never consumed)."""
        if self.at < len(self.text):
            self.at += 1
            return self.text[self.at - 1]
        return ""

    def savchar(self, char: str) -> None:
        if char:
            self.at -= 1

    def nonblank(self) -> str:
        char = self.inchar()
        while char in (" ", "\t"):
            char = self.inchar()
        return char

    def integer(self, char: str) -> None:
        while char and char in _DIGITS:
            char = self.inchar()
        self.savchar(char)

    def reject(self, why: str, char: str = "") -> _Rejected:
        """The error sed stops at; ``char`` is the offending character, just read."""
        return _Rejected(why, self.at - (1 if char else 0))

    def doubt(self, why: str) -> None:
        self.out.unsure = self.out.unsure or why

    def end_of_command(self) -> None:
        char = self.nonblank()
        if char in ("}", "#"):
            self.savchar(char)
        elif char not in ("", "\n", ";"):
            raise self.reject("extra characters after command", char)

    # -- commands -------------------------------------------------------------------

    def next_command(self) -> int:
        """Skip ``;`` and white space: where the next command starts (-1: the end)."""
        while self.at < len(self.text) and self.text[self.at] in (";", *_SPACE):
            self.at += 1
        return self.at if self.at < len(self.text) else -1

    def command(self) -> None:
        char = self.inchar()
        addressed = self.address(char)
        if addressed:
            char = self.nonblank()
            if char == ",":
                char = self.nonblank()
                if not self.address(char):
                    raise self.reject("unexpected `,'", char)
                char = self.nonblank()
        if char == "!":
            char = self.nonblank()
            if char == "!":
                raise self.reject("multiple `!'s", char)
        self.dispatch(char, addressed)

    def dispatch(self, char: str, addressed: bool) -> None:
        out = self.out
        if char == "#":
            if addressed:
                raise self.reject("comments don't accept any addresses", char)
            while char not in ("", "\n"):
                char = self.inchar()
        elif char == "v":
            self.label()
        elif char == "{":
            self.depth += 1
        elif char == "}":
            if not self.depth or addressed:
                raise self.reject("unexpected `}'", char)
            self.depth -= 1
            self.end_of_command()
        elif char == "e":
            char = self.nonblank()
            out.runs.append("" if char in ("", "\n") else self.read_text(char))
        elif char in ("a", "i", "c"):
            self.read_text(self.nonblank())
        elif char == ":":
            if addressed:
                raise self.reject(": doesn't want any addresses", char)
            if not self.label():
                raise self.reject('":" lacks a label')
        elif char in ("b", "t", "T"):
            self.label()
        elif char in ("q", "Q", "l", "L"):
            self.integer(self.nonblank())
            self.end_of_command()
        elif char and char in _PLAIN:
            self.end_of_command()
        elif char in ("r", "R"):
            out.reads.append(self.filename())
        elif char in ("w", "W"):
            out.writes.append(self.filename())
        elif char == "s":
            delimiter = self.delimiter()
            self.delimited(delimiter, regex=True)
            self.delimited(delimiter, regex=False)
            self.flags()
        elif char == "y":
            delimiter = self.delimiter()
            self.delimited(delimiter, regex=False)
            self.delimited(delimiter, regex=False)
            self.end_of_command()
        else:
            raise self.reject(f"unknown command: {char!r}" if char else "missing command", char)

    def address(self, char: str) -> bool:
        if char in ("/", "\\"):
            if char == "\\":
                char = self.inchar()
            self.delimited(self.checked(char), regex=True)
            char = self.nonblank()
            while char in ("I", "M"):
                char = self.nonblank()
            self.savchar(char)
        elif char and char in _DIGITS:
            self.integer(char)
            char = self.nonblank()
            if char == "~":
                self.integer(self.nonblank())
            else:
                self.savchar(char)
        elif char in ("+", "~"):
            self.integer(self.nonblank())
        elif char != "$":
            return False
        return True

    def label(self) -> str:
        found: list[str] = []
        char = self.nonblank()
        while char not in _LABEL_END:
            found.append(char)
            char = self.inchar()
        self.savchar(char)
        label = "".join(found)
        if any(space in label for space in ("\v", "\f", "\r")):
            self.doubt("a label holding \\v, \\f or \\r (busybox sed ends the label there)")
        return label

    def filename(self) -> str:
        found: list[str] = []
        char = self.nonblank()
        while char not in ("", "\n"):
            found.append(char)
            char = self.inchar()
        if not found:
            raise self.reject("missing filename in r/R/w/W commands", char)
        return "".join(found)

    def read_text(self, char: str) -> str:
        """``a``/``i``/``c``/``e`` text from its first character (read_text_to_slash)."""
        if not char:
            raise self.reject("expected \\ after `a', `c' or `i'")
        if char == "\\":
            char = self.inchar()
        else:
            self.savchar(char)
            char = "\n"
        found = [] if char in ("", "\n") else [char]
        char = self.inchar() if char else ""
        while char not in ("", "\n"):
            if char == "\\":
                char = self.inchar()
                if char:
                    found.append("\\")
            if not char:
                break
            found.append(char)
            char = self.inchar()
        return _unescape("".join(found))

    # -- s and y --------------------------------------------------------------------

    def delimiter(self) -> str:
        return self.checked(self.inchar())

    def checked(self, delimiter: str) -> str:
        if delimiter and ord(delimiter) > 0x7F:
            self.doubt("a delimiter that is not one ASCII character")
        return delimiter

    def delimited(self, delimiter: str, *, regex: bool) -> None:
        """Skip to after the closing ``delimiter`` (match_slash)."""
        wide = False
        while True:
            char = self.inchar()
            if char in ("", "\n"):
                raise self.reject("unterminated address regex, or `s' or `y' command", char)
            self.joined(wide, char, delimiter)
            wide = ord(char) > 0x7F
            if char == delimiter:
                return
            if char == "\\":
                char = self.inchar()
                if not char:
                    raise self.reject("unterminated `s' or `y' command")
                wide = ord(char) > 0x7F
            elif char == "[" and regex:
                self.bracket(delimiter)
                wide = False

    def bracket(self, delimiter: str) -> None:
        """Skip a bracket expression to its closing ``]`` (snarf_char_class)."""
        char = self.inchar()
        if char == "^":
            char = self.inchar()
        if char == "]":
            char = self.inchar()
        state, opener, wide = 0, "", False
        while True:
            if char in ("", "\n"):
                raise self.reject("unterminated address regex, or `s' or `y' command", char)
            self.joined(wide, char, delimiter)
            wide = ord(char) > 0x7F
            if char in (".", ":", "="):
                if state == 1:
                    state, opener = 2, char
                    char = self.inchar()
                    continue
                if state == 2 and char == opener:
                    state = 3
                    char = self.inchar()
                    continue
            elif char == "[":
                state = 1 if state == 0 else state
                char = self.inchar()
                continue
            elif char == "]":
                if state in (0, 1):
                    return
                state = 0 if state == 3 else state
            state &= ~1
            char = self.inchar()

    def joined(self, wide: bool, char: str, delimiter: str) -> None:
        """A legacy double-byte locale's trail bytes are 0x30-0x7E: one such
        character after a non-ASCII one may be part of it there."""
        if wide and 0x30 <= ord(char) <= 0x7E and (char in _JOINABLE or char == delimiter):
            self.doubt(
                f"a non-ASCII character before {char!r} in a regex (one character in a "
                "double-byte locale)"
            )

    def flags(self) -> None:
        """``s`` flags (mark_subst_opts): blanks may come between them."""
        while True:
            char = self.nonblank()
            if char == "e":
                self.out.runs.append("")
            elif char == "w":
                self.out.writes.append(self.filename())
                return
            elif char and char in _DIGITS:
                self.integer(char)
            elif char in ("}", "#"):
                self.savchar(char)
                return
            elif char in ("", "\n", ";") or (char == "\r" and self.inchar() == "\n"):
                return
            elif not char or char not in "iImMpg":
                raise self.reject("unknown option to `s'", char)


def _unescape(text: str) -> str:
    """``a``/``i``/``c``/``e`` text as sed keeps it (normalize_text, TEXT_BUFFER):
    ``\\n``, ``\\t``… and ``\\dNNN``, ``\\oNNN``, ``\\xHH``, ``\\cX`` become the
    character, any other backslash goes. Cut at a NUL, as a C string is."""
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        at += 1
        if char != "\\" or at == len(text):
            out.append(char)
            continue
        char = text[at]
        at += 1
        if char in _TEXT_ESCAPES:
            out.append(_TEXT_ESCAPES[char])
        elif char in _BASES:
            base, value, start = _BASES[char], 0, at
            while at - start < (2 if base == 16 else 3) and _digit(text, at) < base:
                value = value * base + _digit(text, at)
                at += 1
            out.append(_byte(value) if at > start else char)
        elif char == "c":
            if at < len(text):
                out.append(_byte(ord(text[at].upper()) ^ 0x40) if ord(text[at]) < 0x80 else "")
                at += 2 if text[at] == "\\" else 1
        else:
            out.append(char)
    return "".join(out).split("\0", 1)[0]


def _digit(text: str, at: int) -> int:
    """The hex digit at ``at`` as a number (16 for none: too big for any base)."""
    return int(text[at], 16) if at < len(text) and text[at] in _HEX else 16


def _byte(value: int) -> str:
    """One byte as a character (non-ASCII bytes as surrogate escapes)."""
    value &= 0xFF
    return chr(value) if value < 0x80 else chr(0xDC00 | value)
