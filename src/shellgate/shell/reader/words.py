"""Quote removal for words of tree-sitter-bash, and the findings words raise.

A *word* is a run of adjacent nodes with no blank between them (tree-sitter
sometimes splits what bash reads as one word, e.g. ``$"x"`` or ``r\\<newline>m``,
so the caller groups nodes by adjacency before asking for a value).

Invariants:

* ``Word.value`` is what bash would pass after quote removal *when the word is
  static*; for a dynamic part (``$VAR``, ``$(…)``…) the literal source text stands
  in, and a finding says the value is unknown.
* ``Word.mask`` has the value's unquoted literal characters and ``_`` for every
  quoted, escaped or expanded one, so glob and brace detection look only at
  characters bash would really treat as special.
* Every command substitution and process substitution met inside a word is
  handed to ``on_nested`` so its commands become segments of their own; nothing
  inside a word is skipped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from tree_sitter import Node

from shellgate.shell.reader._parser import text

#: Called with a node holding commands (a substitution, an expansion to scan) and
#: the context label its commands get.
NestedHook = Callable[[Node, str], None]
#: The value of ``$NAME`` where the analysis knows it (``quoted``: inside double
#: quotes, where bash neither splits nor globs it), else ``None``.
Resolver = Callable[[str, bool], "str | None"]
#: What a command substitution prints where the analysis knows it, else ``None``.
OutputOf = Callable[[Node], "str | None"]
#: A glob's words (value, mask, as written) and a finding about them, or ``None``
#: when they cannot be known (the word then is a finding of its own).
Globber = Callable[[str, str, str], "tuple[tuple[str, ...], str | None] | None"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Special parameters that expand to a number (status, pids, argument count).
_NUMERIC = frozenset({"?", "$", "!", "#"})


def _never(*_: object) -> None:
    return None

_GLOB = re.compile(r"[*?]|\[.*\]")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_PLAIN_SPECIAL = re.compile(r"[\\*?\[{ \t\n]")
_SPLITS = re.compile(r"[ \t\n]")  # unquoted, bash ends a word here
_LINE_JOIN = re.compile(rb"(?:\\\n)+")
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_DQ_ESCAPABLE = frozenset('$`"\\')
_LITERAL_TYPES = frozenset(
    {"word", "extglob_pattern", "test_operator", "regex", "variable_name", "file_descriptor"}
)


@dataclass(frozen=True)
class Word:
    value: str
    mask: str
    dynamic: bool  # holds an expansion or substitution: the value is not known
    #: A dynamic word's value with every expansion and substitution empty (what
    #: bash makes of `"$x"rm` while x is unset); None for a static word.
    bare: str | None = None
    #: The words a glob became (its matches, or itself when none matched), read
    #: in the file system at decision time; None for a word that is no glob.
    matches: tuple[str, ...] | None = None


def joined_by_continuation(source: bytes, left: Node, right: Node) -> bool:
    """True when only backslash-newlines separate two nodes: bash reads one word."""
    gap = source[left.end_byte : right.start_byte]
    return bool(gap) and _LINE_JOIN.fullmatch(gap) is not None


def group_words(source: bytes, nodes: Sequence[Node], findings: list[str]) -> list[list[Node]]:
    """Group word nodes into bash words: adjacent or joined by backslash-newline."""
    groups: list[list[Node]] = []
    for node in _ungapped(nodes, findings):
        if groups:
            last = groups[-1][-1]
            if last.end_byte == node.start_byte:
                groups[-1].append(node)
                continue
            if source[last.end_byte : last.end_byte + 1] == b"\\" and joined_by_continuation(
                source, last, node
            ):
                findings.append("backslash-newline inside a word (bash joins the two halves)")
                groups[-1].append(node)
                continue
        groups.append([node])
    return groups


#: Operators that end a simple command.
_ENDS = frozenset({b";", b"&", b"|", b"&&", b"||", b";;", b"|&"})


def split_at_newlines(source: bytes, children: list[Node]) -> list[list[Node]]:
    """``children`` of one command cut where an unquoted newline ends it in bash,
    or an operator the parser could only read as an error (``aa{ ==;aa``: bash
    runs ``aa`` after the ``;``; the line asks for its parse error anyway)."""
    chunks: list[list[Node]] = [[]]
    for child in children:
        if child.type == "ERROR" and source[child.start_byte : child.end_byte].strip() in _ENDS:
            chunks.append([])
            continue
        current = chunks[-1]
        if current:
            gap = source[current[-1].end_byte : child.start_byte]
            if b"\n" in gap.replace(b"\\\n", b""):
                chunks.append([])
        chunks[-1].append(child)
    return [c for c in chunks if c]


def odd_gap(source: bytes, left: Node, right: Node) -> bool:
    """A backslash outside every word (not a line continuation) is text misread."""
    gap = source[left.end_byte : right.start_byte]
    return b"\\" in gap and b"\\" in gap.replace(b"\\\n", b"")


def _ungapped(nodes: Sequence[Node], findings: list[str]) -> Sequence[Node]:
    """``nodes`` with each concatenation that spans a blank replaced by its parts.

    tree-sitter-bash reads ``aa ``aa`` as one concatenation across the blank;
    bash reads two words. Its parts are then grouped by adjacency, as bash does.
    """
    if not any(n.type == "concatenation" for n in nodes):
        return nodes
    out: list[Node] = []
    for node in nodes:
        parts = node.children if node.type == "concatenation" else ()
        if any(b.start_byte > a.end_byte for a, b in pairwise(parts)):
            findings.append("the parser joined words across a blank; read as bash splits them")
            out.extend(parts)
        else:
            out.append(node)
    return out


def ansi_c_end(source: bytes, start: int) -> int | None:
    """Where bash ends the ``$'…'`` string starting at ``start`` (None: unterminated).

    tree-sitter-bash 0.25 can run past the closing quote after an escaped
    backslash (``$'\\\\'``), swallowing the commands that follow into the string.
    """
    i, n = start + 2, len(source)
    while i < n:
        byte = source[i]
        if byte == 0x5C:  # backslash: the next byte is escaped
            i += 2
        elif byte == 0x27:  # the closing quote
            return i + 1
        else:
            i += 1
    return None


def decode_ansi_c(body: str) -> str:
    """Best-effort value of the body of a ``$'…'`` string (it is a finding anyway)."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        try:
            if head in "xuU" and len(esc) > 1:
                return chr(int(esc[1:], 16))
            if head.isdigit():
                return chr(int(esc, 8))
        except (ValueError, OverflowError):
            return match.group(0)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_SIMPLE.get(esc, match.group(0))

    return _ANSI_ESCAPE.sub(one, body)


def _unquoted(raw: str) -> tuple[str, str]:
    """Value and mask of unquoted word text: a backslash quotes the next character."""
    if "\\" not in raw:
        return raw, raw
    value: list[str] = []
    mask: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            i += 2
            if nxt != "\n":  # backslash-newline vanishes
                value.append(nxt)
                mask.append("_")
            continue
        value.append(char)
        mask.append(char)
        i += 1
    return "".join(value), "".join(mask)


def _double_quoted(raw: str) -> str:
    """Value of literal text inside double quotes (only ``$ ` " \\`` and newline escape)."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char == "\\" and i + 1 < n and (raw[i + 1] in _DQ_ESCAPABLE or raw[i + 1] == "\n"):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _empty_substitution(raw: str) -> bool:
    inner = raw[2:-1] if raw.startswith("$(") else raw[1:-1]
    return not inner.strip(" \t\n")


class WordReader:
    """Reads word nodes of one source; findings go to the list passed per call."""

    def __init__(
        self,
        source: bytes,
        on_nested: NestedHook,
        display: bytes | None = None,
        resolve: Resolver = _never,
        output_of: OutputOf = _never,
    ) -> None:
        self.source = source
        self.resolve = resolve
        self.output_of = output_of
        #: The source as written, for the texts findings quote (same length).
        self.display = display if display is not None else source
        self.on_nested = on_nested
        #: (start, end) byte spans of ``$'…'`` strings tree-sitter read too long.
        self.misread: list[tuple[int, int]] = []
        #: Unquoted words tree-sitter read across a blank (bash splits them there).
        self.split: list[str] = []
        #: Expansions read with a known value so far (a program name made of one is
        #: a finding all the same: Walker._command_from).
        self.known_expansions = 0

    def read(
        self, nodes: Sequence[Node], findings: list[str], glob: Globber | None = None
    ) -> Word:
        """The value of one bash word made of ``nodes`` (adjacent, in order); with
        ``glob``, an unquoted glob is read as the words it becomes."""
        if len(nodes) == 1 and nodes[0].type == "word":
            # Fast path for the common plain word: nothing to remove, nothing to expand.
            raw = text(self.source, nodes[0].start_byte, nodes[0].end_byte)
            if _PLAIN_SPECIAL.search(raw) is None:
                return Word(raw, raw, False)
        values: list[str] = []
        masks: list[str] = []
        bares: list[str] = []
        dynamic = self._parts(nodes, values, masks, findings, bares)
        value, mask = "".join(values), "".join(masks)
        shown = text(self.display, nodes[0].start_byte, nodes[-1].end_byte)
        braces = _BRACE.search(mask) is not None
        if braces:
            findings.append(f"brace expansion in '{shown}'")
        if _GLOB.search(mask):
            read = glob(value, mask, shown) if glob is not None and not (dynamic or braces) \
                else None
            if read is None:
                findings.append(f"glob pattern in '{shown}' (file names decide the words)")
            else:
                matches, finding = read
                if finding is not None:
                    findings.append(finding)
                return Word(value, mask, dynamic, None, matches)
        return Word(value, mask, dynamic, "".join(bares) if dynamic else None)

    def _parts(
        self,
        nodes: Sequence[Node],
        values: list[str],
        masks: list[str],
        findings: list[str],
        bares: list[str],
    ) -> bool:
        dynamic = False
        for index, node in enumerate(nodes):
            kind = node.type
            raw = text(self.source, node.start_byte, node.end_byte)
            bare: str | None = None  # the value with expansions empty, if it differs
            if kind == "``" or (kind == "command_substitution" and _empty_substitution(raw)):
                value = mask = ""  # `` and $( ) expand to nothing: r``m is rm
            elif kind in _LITERAL_TYPES or kind == "number" or not (node.is_named or kind == "$"):
                value, mask = _unquoted(raw)
                if kind == "word" and _SPLITS.search(mask):
                    self.split.append(raw)  # tree-sitter reads `<<<{ }` as one word
            elif kind == "raw_string":
                value = raw[1:-1]
                mask = "_" * len(value)
            elif kind == "string":
                value, is_dynamic, bare = self._string(node, findings)
                mask = "_" * len(value)
                dynamic |= is_dynamic
            elif kind == "concatenation":
                dynamic |= self._parts(node.children, values, masks, findings, bares)
                continue
            elif kind == "translated_string":
                # $"rm" in command position: bash runs the (untranslated) string.
                findings.append('locale string $"…" (bash may translate it at run time)')
                inner = [c for c in node.children if c.type != "$"]
                dynamic |= self._parts(inner, values, masks, findings, bares)
                continue
            elif kind == "$":
                following = nodes[index + 1] if index + 1 < len(nodes) else None
                if raw != "$":  # tree-sitter's `$` token can be an escaped `\$`: literal
                    value, mask = "$", "_"
                elif following is not None and following.type == "string":
                    findings.append('locale string $"…" (bash may translate it at run time)')
                    value = mask = ""
                else:
                    value, mask = "$", "_"
            elif kind == "ansi_c_string":
                findings.append(f"ANSI-C string {raw[:40]} (escapes can hide characters)")
                end = ansi_c_end(self.source, node.start_byte)
                if end != node.end_byte:
                    findings.append("ANSI-C string the parser may misread (bash ends it elsewhere)")
                    if end is not None:
                        self.misread.append((node.start_byte, end))
                value = decode_ansi_c(raw[2:-1])
                mask = "_" * len(value)
            else:
                known = self._known(node, raw, quoted=False)
                if known is not None:
                    value, mask = known, "_" * len(known)
                else:
                    value, mask = raw, "_" * len(raw)
                    dynamic = True
                    bare = ""
                    self._dynamic(node, raw, findings)
            values.append(value)
            masks.append(mask)
            bares.append(value if bare is None else bare)
        return dynamic

    def _string(self, node: Node, findings: list[str]) -> tuple[str, bool, str]:
        """(value, dynamic, value with expansions empty) of a double-quoted string;
        gaps between children are literal."""
        values: list[str] = []
        bares: list[str] = []
        dynamic = False
        pos = node.start_byte + 1
        end = node.end_byte - 1
        for child in node.children:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                literal = _double_quoted(text(self.source, pos, child.start_byte))
                values.append(literal)
                bares.append(literal)
            raw = text(self.source, child.start_byte, child.end_byte)
            known = None if child.type == "string_content" else self._known(child, raw, quoted=True)
            if child.type == "string_content":
                values.append(_double_quoted(raw))
                bares.append(values[-1])
            elif known is not None:
                values.append(known)
                bares.append(known)
            else:
                values.append(raw)
                dynamic = True
                self._dynamic(child, raw, findings)
            pos = child.end_byte
        if end > pos:
            values.append(_double_quoted(text(self.source, pos, end)))
            bares.append(values[-1])
        return "".join(values), dynamic, "".join(bares)

    def _known(self, node: Node, raw: str, *, quoted: bool) -> str | None:
        """The value of an expansion or substitution the analysis knows: a variable
        the call's environment or the line fixes (``$HOME``, ``${PWD}``, ``X=1;
        … $X``), a numeric special parameter (``$?``, kept as written), or what a
        substitution prints (``$(pwd)``, ``$(cat <<'EOF' …)``). Its commands still
        run and are walked; unquoted, a value bash would split or glob is unknown."""
        value = self._known_value(node, raw, quoted=quoted)
        if value is not None:
            self.known_expansions += 1
        return value

    def _known_value(self, node: Node, raw: str, *, quoted: bool) -> str | None:
        kind = node.type
        if kind == "simple_expansion" or (kind == "expansion" and raw.startswith("${")):
            name = raw[1:] if kind == "simple_expansion" else raw[2:-1]
            if name in _NUMERIC:
                return raw
            return self.resolve(name, quoted) if _NAME.fullmatch(name) else None
        if kind == "command_substitution":
            printed = self.output_of(node)
            if printed is None:
                return None
            value = printed.rstrip("\n")  # bash drops the trailing newlines
            if not quoted and (not value or re.search(r"[\s*?\[\]]", value)):
                return None
            self.on_nested(node, "command substitution")
            return value
        return None

    def _dynamic(self, node: Node, raw: str, findings: list[str]) -> None:
        """Findings for one expansion or substitution, and hand its commands on."""
        kind = node.type
        raw = text(self.display, node.start_byte, node.end_byte)  # as written, for the text
        short = raw if len(raw) <= 60 else raw[:57] + "..."
        if kind in ("simple_expansion", "expansion"):
            if "IFS" in raw:
                findings.append(f"'{short}': $IFS changes how bash splits words")
            else:
                findings.append(f"parameter expansion '{short}' (value unknown)")
            if kind == "expansion":
                self.on_nested(node, "parameter expansion")
        elif kind == "arithmetic_expansion":
            findings.append(f"arithmetic expansion '{short}' (can run code via array subscripts)")
            self.on_nested(node, "arithmetic expansion")
        elif kind == "command_substitution":
            findings.append(f"command substitution '{short}' in a word (its output is unknown)")
            self.on_nested(node, "command substitution")
        elif kind == "process_substitution":
            findings.append(f"process substitution '{short}'")
            self.on_nested(node, "process substitution")
        elif kind == "brace_expression":
            findings.append(f"brace expansion in '{short}'")
        else:
            findings.append(f"unsupported word construct {kind} '{short}'")
            self.on_nested(node, kind)
