"""Where tree-sitter-bash reads backslashes and blanks differently from bash.

tree-sitter-bash 0.25 treats an escaped blank (backslash-space, backslash-tab)
and a line continuation as whitespace between tokens, and lets a word that starts
a line with a backslash run on from the line before. bash does neither:

* ``ls;\\ #;rm -rf ~``: bash reads the word `` #`` and then runs ``rm``; the
  parser sees a comment from ``#`` to the end of the line.
* ``echo a\\⏎#; rm -rf /``: bash removes the continuation and reads ``a#`` (a
  ``#`` inside a word starts no comment); the parser sees a comment.
* ``cat x <<<\\ ⏎rm -rf /``: bash's here-string is a blank and ``rm`` is the
  next command; the parser makes ``rm`` the here-string.
* ``echo a⏎\\rm -rf /``: bash runs ``rm``; the parser glues ``⏎\\rm`` onto echo.
* ``'q r'#\\⇥⏎rm -rf /``: a ``#`` glued to a word is part of it in bash, the
  escaped tab too, and the newline ends the command. When an escaped tab, CR,
  VT, FF or newline follows such a ``#``, the parser reads a comment instead
  and glues ``rm`` on the next line into the word before it.
* ``echo a⟨CR⟩#;rm -rf /``: CR, VT and FF are word characters to bash, so the
  ``#`` is in a word and ``rm`` runs; the parser reads them as blanks and the
  rest of the line as a comment (and ``x=a⟨VT⟩z rm -rf /`` as running ``z``).

:func:`find` looks at every gap between two tokens and at every unquoted word,
and returns same-length patches that make the parser read the source as bash
does: an escaped blank becomes an escaped ``_`` (one word character, as in
bash), a continuation that glues two tokens becomes ``''`` (an empty quoted
string, which glues them too), a newline swallowed by a word becomes ``;``, and
a CR, VT or FF between tokens becomes ``_`` (a word character, as in bash).
In a comment bash reads as part of a word, each ``#`` of that word becomes ``_``
and each escaped blank an escaped ``_``.
The walker re-reads the patched source, so deny rules see every command, and
notes the finding, so nothing of it is allowed without asking.
"""

from __future__ import annotations

import re

from tree_sitter import Node

Patch = tuple[int, int, bytes]  # (start, end, same-length replacement)

# Token kinds whose inside is text, not shell syntax: gaps within them mean nothing.
_TEXT = frozenset({"comment", "raw_string", "ansi_c_string", "string", "translated_string",
                   "heredoc_body", "heredoc_start", "heredoc_end"})  # fmt: skip
# Shell code inside those texts: audited as sequences of their own.
_CODE = frozenset({"command_substitution", "process_substitution", "expansion",
                   "arithmetic_expansion"})  # fmt: skip
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect"})
# Tokens that can run on over an unescaped newline (in ``'q r'#$x\<CR>⏎rm`` the
# variable name swallows ``x\<CR>⏎rm``).
_NAMES = frozenset({"word", "variable_name", "special_variable_name"})
# A backslash and what it escapes in a gap (nothing: the gap's last byte).
_GAP_ESCAPE = re.compile(rb"\\(\n|.|$)", re.S)
# An odd run of backslashes before a blank: the last one escapes it.
_ESCAPED_BLANK = re.compile(rb"((?<!\\)(?:\\\\)*)\\[ \t]")
# Bytes after or before which bash ends a word (metacharacters and blanks).
_BREAKS = frozenset(b" \t\n;&|()<>")
# Escaped, these make the parser read a ``#`` glued to a word as a comment.
_SPACES = frozenset(b" \t\x0b\x0c\r")
# What the parser can misread: a backslash, a CR, VT or FF (blanks to the
# parser, word characters to bash), a ``#`` bash may read inside a word.
_SUSPECT = re.compile(rb"[\\\r\x0b\x0c]|[^ \t\n;&|()<>]#")
_CONTROL_BLANKS = frozenset(b"\r\x0b\x0c")
# Nodes whose closing ``)`` ends a word part, not a word (``$(x)#``, ``$((1))#``):
# a ``#`` right after one is in the word.
_WORD_PARTS = frozenset({"command_substitution", "process_substitution",
                         "arithmetic_expansion", "expansion"})  # fmt: skip


def suspect(source: bytes) -> bool:
    """Whether ``source`` may hold a misreading (:func:`find` is worth a walk)."""
    return _SUSPECT.search(source) is not None


def closed(source: bytes) -> bytes:
    """``source`` with a lone backslash at its very end doubled.

    bash keeps that backslash as a literal character of the last word; the
    parser makes it an error. Doubled, both read the same word (and the
    parser's offsets before it are unchanged).
    """
    if not source.endswith(b"\\"):
        return source
    run = len(source) - len(source.rstrip(b"\\"))
    return source + b"\\" if run % 2 else source


def escape_blanks(source: bytes) -> bytes:
    """Every escaped blank in ``source`` spelt as an escaped ``_``.

    To bash both are one word character outside quotes and literal text inside
    them, so the structure is unchanged; the parser, which mistakes an escaped
    blank for a separator, then reads the structure right. Done in one pass, so
    ``ls;\\ #;ls;\\ #;…;rm`` (each misreading hiding the next) is one re-read.
    """
    return _ESCAPED_BLANK.sub(lambda m: m.group(1) + b"\\_", source)


def find(root: Node, source: bytes) -> list[Patch]:
    """Patches for every place the parser and bash read differently (usually none)."""
    patches: list[Patch] = []
    sequences = [root]
    while sequences:
        top = sequences.pop()
        parents: dict[tuple[int, int, str], tuple[str, int]] = {}
        tokens = _tokens(top, sequences, parents)
        previous: Node | None = None
        previous_end = 0
        for token in tokens:
            # Each attribute read builds a Python object: read them once (a 100 KB
            # command has some 40,000 tokens, and this loop can run three times).
            start, end = token.start_byte, token.end_byte
            if start == end:
                continue  # a MISSING token: nothing in the source (a parse error)
            kind = token.type
            if kind in _NAMES:
                _swallowed_newlines(token, source, patches)
                _escaped_controls(token, source, patches)
            if previous is None:
                if top is root:  # before the first token: only blanks are allowed
                    _gap_bytes(0, source[:start], patches)
            elif start > previous_end:
                _gap(previous, token, previous_end, start, source, patches)
            elif start == previous_end and source[start] == 0x5C:
                _split_after_redirect(previous, token, source, patches)
            if kind == "comment" and _glued(previous, token, source, parents):
                _glued_comment(token, source, patches)
            if previous is None or end > previous_end:
                previous, previous_end = token, end
        if top is root:  # after the last token (or in a source of none), the same
            end = previous.end_byte if previous is not None else 0
            _gap_bytes(end, source[end:], patches)
    return sorted(set(patches))


#: A token's parent (type, end offset), keyed by the token's (start, end, type):
#: ``Node.parent`` searches down from the root, which on a wide tree costs a
#: scan of its children per call (9,000 glued comments took a second).
Parents = dict[tuple[int, int, str], tuple[str, int]]
#: The tokens whose parent ``_glued`` asks for: comments, and the ``)`` that
#: may close a word part right before one.
_PARENT_NEEDED = frozenset({"comment", ")"})


def _key(node: Node) -> tuple[int, int, str]:
    return (node.start_byte, node.end_byte, node.type)


def _tokens(top: Node, sequences: list[Node], parents: Parents) -> list[Node]:
    """The leaves under ``top`` in source order, text kinds kept whole.

    Code inside a text kind (``"$(…)"``, a heredoc's substitutions) is queued on
    ``sequences``. Sorted by offset: a heredoc's body comes after the rest of its
    line in the source, but sits under its redirection in the tree. ``parents``
    gets each token's parent, for :func:`_glued`.
    """
    out: list[Node] = []
    stack = list(reversed(top.children))
    for child in stack:
        if child.type in _PARENT_NEEDED:
            parents[_key(child)] = (top.type, top.end_byte)
    while stack:
        node = stack.pop()
        if node.type in _TEXT:
            out.append(node)
            inner = list(node.children)
            while inner:
                child = inner.pop()
                if child.type in _CODE:
                    sequences.append(child)
                else:
                    inner.extend(child.children)
        elif node.child_count == 0:
            out.append(node)
        else:
            children = node.children
            for child in children:
                if child.type in _PARENT_NEEDED:
                    parents[_key(child)] = (node.type, node.end_byte)
            stack.extend(reversed(children))
    out.sort(key=lambda n: n.start_byte)
    return out


def _gap(
    left: Node, right: Node, start: int, stop: int, source: bytes, patches: list[Patch]
) -> None:
    """The bytes between two tokens (``start`` to ``stop``, their offsets)."""
    gap = source[start:stop]
    if b"\\" not in gap:
        _control_blanks(start, gap, patches)
        return
    continuations = _gap_bytes(start, gap, patches)
    if continuations is None:
        return
    # Only continuations: bash glues the two tokens unless one ends a word anyway.
    # Two word parts are glued by the walker already (``r\⏎m``); a comment, a
    # keyword or punctuation is where the parser goes wrong.
    if left.is_named and right.is_named and right.type != "comment":
        return
    before, after = source[start - 1], source[stop]
    if before not in _BREAKS and after not in _BREAKS:
        patches.extend((at, at + 2, b"''") for at in continuations)


def _gap_bytes(start: int, gap: bytes, patches: list[Patch]) -> list[int] | None:
    """Patch the escaped characters in a gap that starts at ``start``.

    Returns the offsets of its line continuations if the gap holds nothing
    else (bash then glues its neighbours), else None.
    """
    _control_blanks(start, gap, patches)
    continuations: list[int] = []
    escaped = False
    for match in _GAP_ESCAPE.finditer(gap):  # left to right: `\\` pairs stay pairs
        at, after = start + match.start(), match.group(1)
        if after == b"\n":
            continuations.append(at)  # a line continuation: bash removes it
        elif not after:  # it escapes the next token's first byte: glued
            patches.append((at, at + 1, b"_"))
            escaped = True
        else:  # an escaped character: to bash part of a word, to the parser a blank
            patches.append((at, at + 2, b"\\_"))
            escaped = True
    if escaped or not continuations or len(gap) != 2 * len(continuations):
        return None  # a blank or an escape in it: bash splits there too
    return continuations


def _control_blanks(start: int, gap: bytes, patches: list[Patch]) -> None:
    """Each unescaped CR, VT or FF in a gap becomes ``_``.

    The parser skips them as blanks; bash reads them as word characters, so
    ``x=a⟨VT⟩z rm -rf /`` runs ``rm`` (the parser runs ``z``). ``_`` is a word
    character to both. (An escaped one is the escapes' patch.)
    """
    if b"\r" not in gap and b"\x0b" not in gap and b"\x0c" not in gap:
        return  # the common case, at C speed
    i = 0
    while i < len(gap):
        if gap[i] == 0x5C:
            i += 2
            continue
        if gap[i] in _CONTROL_BLANKS:
            patches.append((start + i, start + i + 1, b"_"))
        i += 1


def _escaped_controls(word: Node, source: bytes, patches: list[Patch]) -> None:
    """An escaped CR, VT or FF inside a word becomes an escaped ``_``.

    One word character to bash either way; the parser, which takes them for
    blanks, can run the word on over operators (``\\⟨CR⟩\\||bb`` is one word
    to it, a pipe into ``bb`` to bash).
    """
    raw = source[word.start_byte : word.end_byte]
    if b"\r" not in raw and b"\x0b" not in raw and b"\x0c" not in raw:
        return
    i = 0
    while i < len(raw) - 1:
        if raw[i] == 0x5C:
            if raw[i + 1] in _CONTROL_BLANKS:
                at = word.start_byte + i
                patches.append((at, at + 2, b"\\_"))
            i += 2
        else:
            i += 1


def _glued(previous: Node | None, comment: Node, source: bytes, parents: Parents) -> bool:
    """True when bash reads the ``#`` starting ``comment`` as part of a word.

    bash starts a comment only where a word starts: after a blank (space or
    tab), a newline or an operator. Right after a word part (``'q r'#``,
    ``$x#``, ``$(x)#``) or a CR, VT or FF (blanks to the parser, word
    characters to bash: ``echo a⟨CR⟩#;rm -rf /`` runs ``rm``) the ``#`` is a
    character of a word.
    """
    at = comment.start_byte
    if at == 0:
        return False
    if source[at - 1] not in _BREAKS:
        return True
    parent = parents.get(_key(comment))
    if parent is not None and parent[0] == "concatenation":
        return True  # the parser itself put the comment inside a word
    if previous is None or previous.end_byte != at:
        return False
    closer = parents.get(_key(previous))  # `)` of `$(…)`, `<(…)`, `$((…))`: a word part ends
    return closer is not None and closer[0] in _WORD_PARTS and closer[1] == at


def _glued_comment(comment: Node, source: bytes, patches: list[Patch]) -> None:
    """Patch a comment the parser read where bash continues a word.

    bash reads the comment's text as the rest of that word, up to an unquoted
    blank or operator. In that stretch every ``#`` becomes ``_`` (no comment
    for the parser to start: after ``a_`` first on a line, ``#`` would start
    one again), every escaped space character an escaped ``_`` (one word
    character to bash, as the escaped blank was) and a line continuation at the
    end ``''`` (which glues, as the continuation did). The parser then reads
    the word as bash does, and what follows it as the commands bash runs.
    """
    i, end = comment.start_byte, comment.end_byte
    quote = 0  # the open quote character, or 0
    while i < end:
        byte = source[i]
        if quote:  # quoted text: nothing in it ends the word
            if byte == quote:
                quote = 0
            elif byte == 0x5C and quote == 0x22:  # `\"` inside "…"
                i += 1
        elif byte == 0x5C:
            escaped = source[i + 1] if i + 1 < len(source) else None
            if escaped is not None and escaped in _SPACES:
                patches.append((i, i + 2, b"\\_"))
            elif escaped == 0x0A:  # `#…\⏎`: bash removes the continuation
                patches.append((i, i + 2, b"''"))
            i += 1
        elif byte in _BREAKS:
            return
        elif byte in (0x22, 0x27):
            quote = byte
        elif byte == 0x23:
            patches.append((i, i + 1, b"_"))
        i += 1


def _split_after_redirect(left: Node, right: Node, source: bytes, patches: list[Patch]) -> None:
    """``<<<}\\x``: the parser ends the redirection's word before the backslash
    and starts another word; bash reads one. No same-length spelling fixes the
    parse, so the place is reported unchanged (the command asks)."""
    node: Node | None = left
    for _ in range(3):
        node = node.parent if node is not None else None
        if node is None:
            return
        if node.type in _REDIRECTS:
            if right.start_byte >= node.end_byte:
                patches.append((right.start_byte, right.start_byte + 1, b"\\"))
            return


def _swallowed_newlines(word: Node, source: bytes, patches: list[Patch]) -> None:
    """An unescaped newline inside an unquoted word (one that starts a line with
    a backslash) or a variable name (one after an escaped CR): bash ends the
    command there, so it becomes ``;``."""
    raw = source[word.start_byte : word.end_byte]
    if b"\n" not in raw:
        return
    escaped = False
    for i, byte in enumerate(raw):
        if escaped:
            escaped = False
        elif byte == 0x5C:
            escaped = True
        elif byte == 0x0A:
            patches.append((word.start_byte + i, word.start_byte + i + 1, b";"))
