"""Re-read a source tree-sitter misread, patched so it reads as bash does.

Two kinds of misreading are known: a ``$'…'`` that tree-sitter ends elsewhere
than bash, and lexical ones (see :mod:`misreads`): backslashes before blanks and
newlines, CR, VT and FF, a ``#`` inside a word. The re-read patches each place
with same-length text that tree-sitter reads as bash does, so the commands it had
swallowed become segments (deny rules see them) while every offset stays valid;
the finding makes the whole command ask. The walker walks what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from shellgate.shell.reader import _parser, misreads
from shellgate.shell.reader.drafts import Sink

_MAX_PATCHES = 4096  # misreadings in one source past which it is not re-read
_REREADS = 2  # rounds of patching before the re-read is walked as it stands
#: A misread source larger than this is not re-read (its rough forms are read).
_MAX_REREAD_BYTES = 32 * 1024


@dataclass(frozen=True)
class Reread:
    """A patched source to walk in place of a misread one."""

    source: bytes
    root: Node
    lexical: list[misreads.Patch]  # misreads.find of ``source``


def lexical_misreads(
    root: Node, source: bytes, known: list[misreads.Patch] | None
) -> list[misreads.Patch]:
    """The lexical misreadings of ``source`` (``known`` if the re-read loop found them)."""
    if known is not None:
        return known
    if misreads.suspect(source):
        return misreads.find(root, source)
    return []


def reread(
    source: bytes,
    sink: Sink,
    ansi_c: list[tuple[int, int]],
    split: list[str],
    lexical: list[misreads.Patch],
    *,
    already: bool,
) -> Reread | None:
    """Note what tree-sitter misread in ``source`` and return the re-read to walk.

    ``ansi_c`` are the ``$'…'`` spans the word reader found misread, ``split`` the
    words it found bash splits, ``lexical`` what :func:`lexical_misreads` found;
    ``already`` says ``source`` is itself a re-read (then nothing is re-read again).
    ``None`` when there is nothing (more) to walk.
    """
    patches = [(start, end, b"'" + b"x" * (end - start - 2) + b"'") for start, end in ansi_c]
    if patches:
        sink.note("ANSI-C string the parser misread; the command was re-read")
    for word in split[:1]:
        sink.note(f"the parser read '{word[:40]}' as one word; bash splits it")
    if any(source[p[0] : p[1]] == p[2] for p in lexical):
        # No same-length spelling fixes it (`<<<}\x`): reported, not re-read.
        sink.note("the parser ends a word where bash does not")
    lexical = [p for p in lexical if source[p[0] : p[1]] != p[2]]
    if lexical:
        sink.note(
            "the parser misread a backslash before a blank or newline or at the "
            "start of a line, a CR, VT or FF, or a '#' inside a word; the command "
            "was re-read as bash reads it"
        )
    if already and lexical:
        sink.unresolved = True  # deny rules get the rough forms too
    if already or not (patches or lexical):
        return None
    if len(lexical) > _MAX_PATCHES or len(source) > _MAX_REREAD_BYTES:
        # Not worth a second parse (each re-read round reads every token
        # again: a 100 KB command took 250 ms): ask, and let deny rules see
        # the rough forms.
        sink.unresolved = True
        return None
    fixed = misreads.escape_blanks(source) if lexical else source
    found: list[misreads.Patch] = []
    for _ in range(_REREADS):  # a patch can uncover another misreading
        patched = bytearray(fixed)
        for start, end, replacement in sorted({*patches, *lexical}):
            patched[start:end] = replacement
        fixed = bytes(patched)
        root = _parser.parse(fixed)
        if root.descendant_count > sink.max_nodes:
            # Read right, it is too large to walk: refused, as an input that
            # large is at the first parse (the input guard denies it).
            sink.refused = (
                f"command has {root.descendant_count} syntax nodes once read as bash "
                f"reads it, over the {sink.max_nodes}-node analysis limit; "
                "write long scripts to a file and run the file"
            )
            return None
        patches = []
        found = misreads.find(root, fixed)
        lexical = [p for p in found if fixed[p[0] : p[1]] != p[2]]
        if not lexical:
            break
    return Reread(fixed, root, found)
