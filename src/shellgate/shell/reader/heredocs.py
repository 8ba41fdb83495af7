"""What bash does with an unquoted heredoc body that tree-sitter-bash reads otherwise.

Two differences, both hiding commands from a reader of the tree:

* tree-sitter-bash 0.25 does not parse backticks in a heredoc body (nor inside a
  ``${…}`` there), yet bash runs them when the heredoc is read. ``backtick_spans``
  finds them by bash's rules for the body: a backslash quotes ``\\``, `````, ``$``
  and newline; quotes are ordinary characters.
* bash joins backslash-newline before it compares a body line with the delimiter,
  so ``EO\\⏎F`` ends the heredoc and the lines after it run as commands, while
  tree-sitter reads on to the next plain ``EOF``. ``bash_body_end`` says where
  bash really ends the body.

Both are pure functions of the body text (what tree-sitter gave as
``heredoc_body``: the text after the start line, up to its end line).
"""

from __future__ import annotations

from shellgate.shell.reader.words import decode_ansi_c

_BACKTICK_ESCAPES = frozenset("$`\\")


def backtick_spans(body: str) -> list[str]:
    """The command strings of every backtick substitution in an unquoted body.

    Inside backticks a backslash before ``$``, ````` or ``\\`` is removed (so
    nested escaped backticks come out as backticks for the next parse); an
    unterminated span runs to the end (bash rejects it; reading it costs nothing).
    """
    spans: list[str] = []
    i, n = 0, len(body)
    while i < n:
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if char != "`":
            i += 1
            continue
        j = i + 1
        chunk: list[str] = []
        while j < n and body[j] != "`":
            if body[j] == "\\" and j + 1 < n:
                nxt = body[j + 1]
                chunk.append(nxt if nxt in _BACKTICK_ESCAPES else "\\" + nxt)
                j += 2
                continue
            chunk.append(body[j])
            j += 1
        spans.append("".join(chunk))
        i = j + 1
    return spans


def _odd_backslashes(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def bash_body_end(body: str, delimiter: str, strip_tabs: bool) -> int | None:
    """Offset in ``body`` just after the line where bash ends the heredoc, when that
    is a line joined by backslash-newline (tree-sitter ended it later); else None.

    With ``<<-`` the leading tabs of each physical line and of the joined line are
    both tried (either reading ending the body early is reported).
    """
    pos, n = 0, len(body)
    while pos < n:
        parts: list[str] = []
        while True:
            newline = body.find("\n", pos)
            line = body[pos : newline if newline != -1 else n]
            pos = newline + 1 if newline != -1 else n
            if newline != -1 and _odd_backslashes(line):
                parts.append(line[:-1])
                continue
            parts.append(line)
            break
        if len(parts) < 2:
            continue
        readings = {"".join(parts)}
        if strip_tabs:
            readings |= {"".join(parts).lstrip("\t"), "".join(p.lstrip("\t") for p in parts)}
        if delimiter in readings:
            return pos
    return None


def bash_delimiter(word: str) -> str:
    """The delimiter bash compares lines with: the word after quote removal
    (``E''OF``, ``"EOF"``, ``\\EOF``, ``$'EOF'``, ``$"EOF"`` are all ``EOF``)."""
    out: list[str] = []
    i, n = 0, len(word)
    while i < n:
        char = word[i]
        if char == "$" and i + 1 < n and word[i + 1] in "'\"":
            close = word.find(word[i + 1], i + 2)
            close = n if close == -1 else close
            inner = word[i + 2 : close]
            out.append(decode_ansi_c(inner) if word[i + 1] == "'" else inner)
            i = close + 1
        elif char in "'\"":
            close = word.find(char, i + 1)
            close = n if close == -1 else close
            out.append(word[i + 1 : close])
            i = close + 1
        elif char == "\\" and i + 1 < n:
            out.append(word[i + 1])
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def quoted_body_end(body: str, delimiter: str, strip_tabs: bool) -> int | None:
    """Offset just after the first line of ``body`` that ends a quoted heredoc for
    bash, when that is before tree-sitter's end (which waits for the word as
    written); else None."""
    pos = 0
    for line in body.splitlines(keepends=True):
        pos += len(line)
        bare = line.rstrip("\n")
        if bare == delimiter or (strip_tabs and bare.lstrip("\t") == delimiter):
            return pos
    return None
