"""Every heredoc as bash's lexer finds it, and a source tree-sitter reads right.

tree-sitter-bash 0.25 reads a heredoc right only when its operator ends the
command line. Anything after the delimiter word goes astray: ``cat <<EOF > f``
hangs ``> f`` inside the heredoc node, ``cat <<EOF > f; ls`` and ``cat <<A <<B``
are parse errors, and ``python3 - <<'PY'`` loses the ``-``. bash reads
heredocs in its lexer: an operator (``<<`` or ``<<-``) and its delimiter word
are a redirection of the command, and the body is the lines after the next
newline *token* (not one inside quotes or a substitution), one heredoc after
another in the order of their operators, each up to a line equal to its
delimiter.

:func:`split` does what bash's lexer does, for exactly what decides heredocs:
quotes, escapes and line continuations, comments, substitutions (where a
heredoc may sit, its body after a newline inside them), arithmetic (where
``<<`` is a shift) and here-strings. It returns the source with

* each operator and delimiter word spelt as an input redirection from a
  placeholder word of the same length (``<<'EOF'`` → ``<______``), and
* each body and its delimiter line blanked (spaces, newlines kept),

so the parser sees plain command lines; every offset stays valid. The heredocs
are returned by the offset of their ``<``. Where the lexer meets what it cannot
read with certainty (a heredoc inside backticks or ``${…}``, a ``case`` inside
``$(…)``, a quote left open), it returns ``None`` and the source is parsed as it
is: tree-sitter's reading, with its findings, so nothing is ever hidden on a
guess. Blanking is the risky direction (text bash would run, read as data), so
the lexer blanks only bodies it found by bash's own rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shellgate.shell.reader.heredocs import bash_delimiter

_TOP = re.compile(rb"[\\'\"`$#<\n()]")
_IN_DQ = re.compile(rb'[\\"`$]')
_BREAKS = frozenset(b" \t\n;&|()<>")
_BLANKS = b" \t"
_CASE = re.compile(rb"(?:^|[\s;&|(])case\s")
#: Heredocs in one source past which it is read as tree-sitter reads it.
MAX_HEREDOCS = 256


@dataclass(frozen=True)
class Heredoc:
    """One heredoc: its operator's offset, delimiter and the body bash reads."""

    at: int  # offset of the operator's first `<` (the placeholder redirection's `<`)
    op: str  # "<<" or "<<-"
    word: str  # the delimiter word as written
    delimiter: str  # after quote removal: the line that ends the body
    quoted: bool  # a quoted delimiter: the body is plain text (nothing expands)
    body: str  # the body as the command reads it (tabs stripped for <<-, continuations joined)
    raw: str  # the body as written
    #: Its delimiter line is joined by backslash-newline (``EO\⏎F``): bash ends the
    #: body there and runs the lines after it, where a reader expects more body.
    joined_end: bool = False


class _Bail(Exception):
    """The lexer cannot be sure; the source is parsed as it stands."""


@dataclass
class _Pending:
    at: int
    op: str
    word: str


class _Lexer:
    def __init__(self, source: bytes) -> None:
        self.src = source
        self.found: list[Heredoc] = []
        self.blanks: list[tuple[int, int]] = []
        self.ops: list[tuple[int, int]] = []

    # -- command level ---------------------------------------------------------

    def commands(self, pos: int, closing: bool) -> int:
        """Scan a command list from ``pos``; with ``closing``, up to the ``)`` of a
        ``$(`` (the offset after it is returned), else to the end."""
        src, n = self.src, len(self.src)
        pending: list[_Pending] = []
        depth = 0
        start = pos
        while True:
            match = _TOP.search(src, pos)
            if match is None:
                if closing:
                    raise _Bail
                self.bodies(pending, n)
                return n
            i = match.start()
            char = src[i]
            if char == 0x5C:  # backslash: quotes the next byte (a newline: continuation)
                pos = i + 2
            elif char == 0x27:  # '
                pos = self.single(i + 1)
            elif char == 0x22:  # "
                pos = self.double(i + 1)
            elif char == 0x60:  # `
                pos = self.backticks(i + 1)
            elif char == 0x24:  # $
                pos = self.dollar(i, in_quotes=False)
            elif char == 0x23:  # # starts a comment at the start of a word only
                if i == 0 or src[i - 1] in _BREAKS:
                    end = src.find(b"\n", i)
                    pos = n if end == -1 else end
                else:
                    pos = i + 1
            elif char == 0x3C:  # <
                pos = self.less(i, pending)
            elif char == 0x0A:  # a newline token: the pending heredocs' bodies follow
                pos = self.bodies(pending, i + 1)
                pending = []
            elif char == 0x28:  # (
                if src.startswith(b"((", i) and (i == 0 or src[i - 1] not in b"<>"):
                    pos = self.arithmetic(i + 2, 2)
                else:
                    depth += 1
                    pos = i + 1
            else:  # )
                if closing and depth == 0:
                    if pending or _CASE.search(src, start, i):
                        # A body cut off by `)`, or a case pattern's `)` closing early.
                        raise _Bail
                    return i + 1
                depth = max(depth - 1, 0)
                pos = i + 1

    def less(self, i: int, pending: list[_Pending]) -> int:
        src = self.src
        if src.startswith(b"<<<", i):
            return i + 3
        if not src.startswith(b"<<", i):
            return i + 1
        op = "<<-" if src.startswith(b"<<-", i) else "<<"
        pos = i + len(op)
        while pos < len(src) and src[pos] in _BLANKS:
            pos += 1
        end = self.word_end(pos)
        word = src[pos:end].decode("utf-8", "surrogatepass")
        if not word or "$(" in word or "`" in word or "${" in word:
            raise _Bail  # no delimiter (bash: a syntax error) or one bash reads as a substitution
        if len(self.found) + len(pending) >= MAX_HEREDOCS:
            raise _Bail
        pending.append(_Pending(i, op, word))
        self.ops.append((i, end))
        return end

    def word_end(self, pos: int) -> int:
        """Where the word at ``pos`` ends (quotes and escapes inside it)."""
        src, n = self.src, len(self.src)
        while pos < n and src[pos] not in _BREAKS:
            char = src[pos]
            if char == 0x5C:
                pos += 2
            elif char == 0x27:
                pos = self.single(pos + 1)
            elif char == 0x22:
                pos = self.double(pos + 1)
            elif char == 0x24 and pos + 1 < n and src[pos + 1] in b"'\"":
                pos = self.single(pos + 2) if src[pos + 1] == 0x27 else self.double(pos + 2)
            else:
                pos += 1
        return min(pos, n)

    # -- quotes and substitutions ----------------------------------------------

    def single(self, pos: int) -> int:
        end = self.src.find(b"'", pos)
        if end == -1:
            raise _Bail
        return end + 1

    def ansi_c(self, pos: int) -> int:
        src, n = self.src, len(self.src)
        while pos < n:
            if src[pos] == 0x5C:
                pos += 2
            elif src[pos] == 0x27:
                return pos + 1
            else:
                pos += 1
        raise _Bail

    def double(self, pos: int) -> int:
        src = self.src
        while True:
            match = _IN_DQ.search(src, pos)
            if match is None:
                raise _Bail
            i = match.start()
            char = src[i]
            if char == 0x5C:
                pos = i + 2
            elif char == 0x22:
                return i + 1
            elif char == 0x60:
                pos = self.backticks(i + 1)
            else:
                pos = self.dollar(i, in_quotes=True)

    def backticks(self, pos: int) -> int:
        src, n = self.src, len(self.src)
        start = pos
        while pos < n:
            if src[pos] == 0x5C:
                pos += 2
            elif src[pos] == 0x60:
                if b"<<" in src[start:pos].replace(b"<<<", b""):
                    raise _Bail  # a heredoc inside backticks: not read here
                return pos + 1
            else:
                pos += 1
        raise _Bail

    def dollar(self, i: int, *, in_quotes: bool) -> int:
        src = self.src
        nxt = src[i + 1 : i + 3]
        if nxt.startswith(b"(("):
            return self.arithmetic(i + 3, 2)
        if nxt.startswith(b"("):
            return self.commands(i + 2, closing=True)
        if nxt.startswith(b"["):
            return self.arithmetic(i + 2, 0, bracket=True)
        if nxt.startswith(b"{"):
            return self.braces(i + 2)
        if nxt.startswith(b"'") and not in_quotes:
            return self.ansi_c(i + 2)
        if nxt.startswith(b'"') and not in_quotes:
            return self.double(i + 2)
        return i + 1

    def braces(self, pos: int) -> int:
        """``${…}``: to its ``}`` (quotes and nested braces inside)."""
        src, n = self.src, len(self.src)
        start, depth = pos, 1
        while pos < n:
            char = src[pos]
            if char == 0x5C:
                pos += 2
                continue
            if char == 0x27:
                pos = self.single(pos + 1)
                continue
            if char == 0x22:
                pos = self.double(pos + 1)
                continue
            if char == 0x7B:
                depth += 1
            elif char == 0x7D:
                depth -= 1
                if depth == 0:
                    if b"<<" in src[start:pos]:
                        raise _Bail
                    return pos + 1
            pos += 1
        raise _Bail

    def arithmetic(self, pos: int, depth: int, *, bracket: bool = False) -> int:
        """``$((…))``, ``((…))`` or ``$[…]``: ``<<`` inside is a shift, never a heredoc."""
        src, n = self.src, len(self.src)
        opening, closing = (0x5B, 0x5D) if bracket else (0x28, 0x29)
        depth = depth or 1
        while pos < n:
            char = src[pos]
            if char == 0x5C:
                pos += 2
            elif char == 0x27:
                pos = self.single(pos + 1)
            elif char == 0x22:
                pos = self.double(pos + 1)
            elif char == 0x60:
                pos = self.backticks(pos + 1)
            elif char == 0x24 and src[pos + 1 : pos + 2] in (b"(", b"{", b"["):
                pos = self.dollar(pos, in_quotes=False)
            else:
                if char == opening:
                    depth += 1
                elif char == closing:
                    depth -= 1
                    if depth == 0:
                        return pos + 1
                pos += 1
        raise _Bail

    # -- bodies ----------------------------------------------------------------

    def bodies(self, pending: list[_Pending], pos: int) -> int:
        """Read the bodies of ``pending`` from ``pos`` (the start of a line), in order."""
        for item in pending:
            pos = self.body(item, pos)
        return pos

    def body(self, item: _Pending, pos: int) -> int:
        src, n = self.src, len(self.src)
        word = item.word
        delimiter = bash_delimiter(word)
        quoted = any(q in word for q in "'\"\\")
        strip = item.op == "<<-"
        start = pos
        lines: list[str] = []
        end = n
        joined_end = False
        while pos < n:
            line_start = pos
            parts: list[bytes] = []
            while True:
                newline = src.find(b"\n", pos)
                physical = src[pos : n if newline == -1 else newline]
                pos = n if newline == -1 else newline + 1
                if not quoted and newline != -1 and _odd_backslashes(physical):
                    parts.append(physical[:-1])  # bash joins backslash-newline first
                    continue
                parts.append(physical)
                break
            joined = b"".join(parts).decode("utf-8", "surrogatepass")
            reading = joined.lstrip("\t") if strip else joined
            if len(parts) > 1 and strip:
                # Tabs stripped from each physical line would end it elsewhere: unsure.
                other = "".join(p.decode("utf-8", "surrogatepass").lstrip("\t") for p in parts)
                if (other == delimiter) != (reading == delimiter):
                    raise _Bail
            if reading == delimiter:
                end = line_start
                joined_end = len(parts) > 1
                break
            lines.append(reading)
        else:
            end = n  # delimited by end-of-file: bash warns and reads it all
        raw = src[start:end].decode("utf-8", "surrogatepass")
        body = "".join(line + "\n" for line in lines) if lines else ""
        if quoted:
            body = _plain_body(raw, strip)
        self.found.append(
            Heredoc(item.at, item.op, word, delimiter, quoted, body, raw, joined_end)
        )
        self.blanks.append((start, pos))
        return pos


def _odd_backslashes(line: bytes) -> bool:
    return (len(line) - len(line.rstrip(b"\\"))) % 2 == 1


def _plain_body(raw: str, strip: bool) -> str:
    """A quoted heredoc's body: the lines as written (leading tabs gone for ``<<-``)."""
    if not strip:
        return raw
    return "".join(line.lstrip("\t") for line in raw.splitlines(keepends=True))


def split(source: bytes) -> tuple[bytes, dict[int, Heredoc]] | None:
    """The source as tree-sitter should read it, and its heredocs by operator offset.

    ``None`` when the source has no heredoc, or one the lexer cannot be sure of
    (then the caller parses ``source`` as it is).
    """
    if b"<<" not in source.replace(b"<<<", b""):
        return None
    lexer = _Lexer(source)
    try:
        lexer.commands(0, closing=False)
    except (_Bail, IndexError):
        return None
    if not lexer.found:
        return None
    patched = bytearray(source)
    for start, end in lexer.ops:
        patched[start:end] = b"<" + b"_" * (end - start - 1)
    for start, end in lexer.blanks:
        patched[start:end] = re.sub(rb"[^\n]", b" ", source[start:end])
    return bytes(patched), {h.at: h for h in lexer.found}


def prepare(source: bytes) -> tuple[bytes, dict[int, Heredoc]]:
    """:func:`split`, or ``source`` as it is with no heredocs."""
    found = split(source)
    return found if found is not None else (source, {})
