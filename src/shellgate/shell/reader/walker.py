"""Walk a tree-sitter-bash tree and draft one segment per simple command.

Invariants:

* Every node is either understood or reported: an unknown statement type, an
  ``ERROR`` node or a construct too deep to follow becomes a whole-command finding,
  and the walker still looks inside it for commands (deny rules must see them).
* Nesting that Python would recurse on is bounded by ``max_depth`` (one level per
  subshell, group, substitution, body or payload); unbounded *width* (long ``&&``
  chains, long pipelines, deep test expressions) is walked iteratively.
* Shell strings that will be run again (``bash -c``, ``eval``, ``watch``, a
  here-string fed to ``sh``) are parsed with the same walker and sink, one level
  deeper, so their commands are segments like any other.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from tree_sitter import Node

from shellgate.shell.reader import _parser, misreads
from shellgate.shell.reader._parser import text
from shellgate.shell.reader.drafts import Draft, Extra, Runs, Sink
from shellgate.shell.reader.heredocs import backtick_spans
from shellgate.shell.reader.redirects import REDIRECT_TYPES, read_redirect
from shellgate.shell.reader.words import WordReader, group_words

_SUBSTITUTIONS = {"command_substitution": "command substitution",
                  "process_substitution": "process substitution"}  # fmt: skip
_MAX_PATCHES = 4096  # misreadings in one source past which it is not re-read
_REREADS = 2  # rounds of patching before the re-read is walked as it stands
#: A misread source larger than this is not re-read (its rough forms are read).
_MAX_REREAD_BYTES = 32 * 1024
_SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end"})
_WORDISH = frozenset({"word", "string", "raw_string", "concatenation", "simple_expansion",
                      "expansion", "number", "ansi_c_string", "command_substitution",
                      "process_substitution", "arithmetic_expansion", "extglob_pattern",
                      "regex", "test_operator", "brace_expression", "variable_name"})  # fmt: skip


def _detached(node: Node, label: str) -> None:
    raise RuntimeError("a finished walker's word reader was used again")


class Walker:
    """Drafts segments from one source (a command or a nested payload) into ``sink``."""

    def __init__(
        self,
        source: bytes,
        sink: Sink,
        context: tuple[str, ...],
        depth: int,
        *,
        reread: bool = False,
        lexical: list[misreads.Patch] | None = None,
    ) -> None:
        self.source = source
        self.reread = reread  # this source is already a patched re-read
        self.lexical = lexical  # misreads.find of this source, if already known
        self.sink = sink
        self.ctx = context
        self.depth = depth
        self.words = WordReader(source, self._nested)
        self.inherited: list[Extra] = []

    # -- nesting -----------------------------------------------------------------

    def descend(self, label: str, fn: Callable[[Node], None], node: Node, scoped: bool) -> None:
        """Run ``fn(node)`` one level deeper; ``scoped`` keeps a ``cd`` inside from leaking."""
        if self.depth >= self.sink.max_depth:
            self.sink.note(
                f"nesting deeper than {self.sink.max_depth} levels at '{self._short(node)}'; "
                "not analysed further"
            )
            return
        saved = (self.ctx, self.depth, self.sink.cwd, self.sink.cwd_known)
        self.ctx = (*self.ctx, label)
        self.depth += 1
        try:
            fn(node)
        finally:
            self.ctx, self.depth = saved[0], saved[1]
            if scoped:
                self.sink.cwd, self.sink.cwd_known = saved[2], saved[3]

    def payload(self, label: str, source: str) -> None:
        """Parse a shell string that will be run (``bash -c``…) as nested commands."""
        if self.depth >= self.sink.max_depth:
            self.sink.note(f"nesting deeper than {self.sink.max_depth} levels in a {label}")
            return
        encoded = misreads.closed(source.encode("utf-8", "surrogatepass"))
        root = _parser.parse(encoded)
        if root.has_error:
            self.sink.note(f"parse error in {label} '{source[:60]}'")
        saved = (self.sink.cwd, self.sink.cwd_known)
        try:
            # Inside a re-read, nested payloads are not re-read again (only noted):
            # each level re-reading its children's re-reads would grow as 2^depth.
            nested = Walker(
                encoded, self.sink, (*self.ctx, label), self.depth + 1, reread=self.reread
            )
            nested.run(root)
        finally:
            self.sink.cwd, self.sink.cwd_known = saved

    def _nested(self, node: Node, label: str) -> None:
        if node.type in _SUBSTITUTIONS:
            self.descend(label, self.block, node, scoped=True)
            self._escaped_backticks(node, label)
            return
        self.scan(node, label)
        if node.type == "expansion" and b"`" in self.source[node.start_byte : node.end_byte]:
            # tree-sitter-bash 0.25 leaves backticks inside ${…} as text; bash runs them.
            raw = text(self.source, node.start_byte, node.end_byte)
            for span in backtick_spans(raw):
                self.payload(f"command substitution ({label})", span)

    def _escaped_backticks(self, node: Node, label: str) -> None:
        """Backslash-escaped backticks inside backticks (echo, backslash-backtick, cmd,
        backslash-backtick): tree-sitter reads the inner pair as words; bash removes the
        backslashes and runs cmd. Re-read the span as bash does."""
        raw = self.source[node.start_byte : node.end_byte]
        if raw.startswith(b"`") and b"\\`" in raw:
            for span in backtick_spans(raw.decode("utf-8", "surrogatepass")):
                self.payload(label, span)

    def scan(self, node: Node, label: str) -> None:
        """Find commands anywhere under ``node`` (iteratively: width is unbounded)."""
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            kind = child.type
            if kind in _SUBSTITUTIONS:
                where = _SUBSTITUTIONS[kind]
                self.descend(f"{where} ({label})", self.block, child, scoped=True)
                self._escaped_backticks(child, f"{where} ({label})")
            elif kind in ("command", "redirected_statement", "pipeline", "list", "subshell"):
                self.descend(label, self.statement, child, scoped=True)
            else:
                stack.extend(reversed(child.children))

    def _short(self, node: Node) -> str:
        raw = text(self.source, node.start_byte, min(node.end_byte, node.start_byte + 60))
        return raw.replace("\n", " ")

    def run(self, root: Node) -> None:
        """Walk a parsed source; re-read it once if tree-sitter misread it.

        Two kinds of misreading are known: a ``$'…'`` that tree-sitter ends
        elsewhere than bash, and lexical ones (see :mod:`misreads`): backslashes
        before blanks and newlines, CR, VT and FF, a ``#`` inside a word. The
        re-read patches each place with same-length text that tree-sitter reads
        as bash does, so the commands it had swallowed become segments (deny
        rules see them) while every offset stays valid; the finding makes the
        whole command ask.
        """
        try:
            if self.lexical is not None:
                lexical = self.lexical  # the re-read loop found them already
            elif misreads.suspect(self.source):
                lexical = misreads.find(root, self.source)
            else:
                lexical = []
            self.block(root)
            patches = [
                (start, end, b"'" + b"x" * (end - start - 2) + b"'")
                for start, end in self.words.misread
            ]
            if patches:
                self.sink.note("ANSI-C string the parser misread; the command was re-read")
            for word in self.words.split[:1]:
                self.sink.note(f"the parser read '{word[:40]}' as one word; bash splits it")
            if any(self.source[p[0] : p[1]] == p[2] for p in lexical):
                # No same-length spelling fixes it (`<<<}\x`): reported, not re-read.
                self.sink.note("the parser ends a word where bash does not")
            lexical = [p for p in lexical if self.source[p[0] : p[1]] != p[2]]
            if lexical:
                self.sink.note(
                    "the parser misread a backslash before a blank or newline or at the "
                    "start of a line, a CR, VT or FF, or a '#' inside a word; the command "
                    "was re-read as bash reads it"
                )
            if self.reread and lexical:
                self.sink.unresolved = True  # deny rules get the rough forms too
            if self.reread or not (patches or lexical):
                return
            if len(lexical) > _MAX_PATCHES or len(self.source) > _MAX_REREAD_BYTES:
                # Not worth a second parse (each re-read round reads every token
                # again: a 100 KB command took 250 ms): ask, and let deny rules see
                # the rough forms.
                self.sink.unresolved = True
                return
            fixed = misreads.escape_blanks(self.source) if lexical else self.source
            for _ in range(_REREADS):  # a patch can uncover another misreading
                patched = bytearray(fixed)
                for start, end, replacement in sorted({*patches, *lexical}):
                    patched[start:end] = replacement
                fixed = bytes(patched)
                root = _parser.parse(fixed)
                if root.descendant_count > self.sink.max_nodes:
                    # Read right, it is too large to walk: refused, as an input that
                    # large is at the first parse (the input guard denies it).
                    self.sink.refused = (
                        f"command has {root.descendant_count} syntax nodes once read as bash "
                        f"reads it, over the {self.sink.max_nodes}-node analysis limit; "
                        "write long scripts to a file and run the file"
                    )
                    return
                patches = []
                found = misreads.find(root, fixed)
                lexical = [p for p in found if fixed[p[0] : p[1]] != p[2]]
                if not lexical:
                    break
            again = Walker(
                fixed, self.sink, (*self.ctx, "re-read"), self.depth, reread=True, lexical=found
            )
            again.run(root)
        finally:
            # The reader's hook is a bound method of this walker: a reference cycle.
            # Cut it, so the walk's objects go by reference counting; left to the
            # cyclic GC, every ~20 analyses paid a ~75 µs collection (the p99).
            self.words.on_nested = _detached

    # -- statements --------------------------------------------------------------

    def block(self, node: Node) -> None:
        for child in node.children:
            if child.is_named and child.type not in _SKIP:
                self.statement(child)

    def statement(self, node: Node, extra: Extra | None = None) -> None:
        kind = node.type
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, node, extra)
        elif kind == "ERROR":
            # analyse() reports the error itself; commands inside still get checked.
            self.descend("parse error", self.block, node, scoped=False)
        elif kind not in _SKIP:
            self.sink.note(f"unsupported construct {kind} at '{self._short(node)}'")
            self.scan(node, kind)

    def _list(self, node: Node, extra: Extra | None) -> None:
        # ``a && b && c`` nests to the left without bound: flatten iteratively.
        leaves: list[Node] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "list":
                stack.extend(c for c in reversed(current.children) if c.is_named)
            elif current.type not in _SKIP:
                leaves.append(current)
        saved = self.ctx
        self.ctx = (*saved, "list")
        try:
            for index, leaf in enumerate(leaves):
                self.statement(leaf, extra if index == len(leaves) - 1 else None)
        finally:
            self.ctx = saved

    def _pipeline(self, node: Node, extra: Extra | None) -> None:
        parts = [c for c in node.children if c.is_named and c.type not in _SKIP]
        saved = (self.ctx, self.sink.cwd, self.sink.cwd_known)
        self.ctx = (*saved[0], "pipeline")
        try:
            for index, part in enumerate(parts):
                # Every element of a pipeline runs in a subshell: a cd there does not last.
                self.statement(part, extra if index == len(parts) - 1 else None)
                self.sink.cwd, self.sink.cwd_known = saved[1], saved[2]
        finally:
            self.ctx = saved[0]

    def _redirected(self, node: Node, extra: Extra | None) -> None:
        body = node.child_by_field_name("body")
        own = Extra()
        pending: list[Node] = []
        for child in node.children:
            if child.type in REDIRECT_TYPES:
                read_redirect(self, child, own, pending)
        own = own.merged(extra)
        if body is None:
            self.add(node, (), [], own, [])
        elif body.type in ("command", "pipeline", "list", "redirected_statement"):
            self.statement(body, own)
        else:
            self.inherited.append(own)
            try:
                self.statement(body)
            finally:
                self.inherited.pop()
        for later in pending:
            self.statement(later)

    def _command(self, node: Node, extra: Extra | None) -> None:
        # The same command text in the same place and directory drafts the same
        # segments: replay them (padding with thousands of copies stays cheap).
        key: tuple[object, ...] | None = None
        if extra is None and not self.inherited:
            raw = self.source[node.start_byte : node.end_byte]
            key = (raw, self.ctx, self.depth, self.sink.cwd, self.sink.cwd_known)
            hit = self.sink.memo.get(key)
            if hit is not None:
                self.sink.drafts.extend(hit[0])
                self.sink.cwd, self.sink.cwd_known = hit[1], hit[2]
                return
        start = len(self.sink.drafts)
        self._fresh_command(node, extra)
        if key is not None:
            self.sink.memo[key] = (self.sink.drafts[start:], self.sink.cwd, self.sink.cwd_known)

    def _fresh_command(self, node: Node, extra: Extra | None) -> None:
        # tree-sitter-bash 0.25 can run a command's words across an unquoted newline
        # (`a | b | c⏎rm -rf / && d` parses `c rm -rf /` as one command, no ERROR
        # node); bash ends a simple command there. Split where bash would.
        chunks = self._split_at_newlines(list(node.children))
        for index, children in enumerate(chunks):
            self._command_from(node, children, extra if index == 0 else None, split=len(chunks) > 1)

    def _split_at_newlines(self, children: list[Node]) -> list[list[Node]]:
        chunks: list[list[Node]] = [[]]
        for child in children:
            current = chunks[-1]
            if current:
                gap = self.source[current[-1].end_byte : child.start_byte]
                if b"\n" in gap.replace(b"\\\n", b""):
                    chunks.append([])
            chunks[-1].append(child)
        return [c for c in chunks if c]

    def _command_from(
        self, node: Node, children: list[Node], extra: Extra | None, *, split: bool
    ) -> None:
        findings: list[str] = []
        if split:
            findings.append(
                "the parser joined words across a newline; read as separate commands, as bash does"
            )
        assignments: list[tuple[str, str]] = []
        own = Extra()
        pending: list[Node] = []
        word_nodes: list[Node] = []
        previous: Node | None = None
        for child in children:
            if previous is not None and self._odd_gap(previous, child):
                findings.append(
                    "backslash before a blank between words (tree-sitter and bash may "
                    "split this differently)"
                )
            previous = child
            kind = child.type
            if kind == "variable_assignment" and not word_nodes:
                assignments.append(self.assignment(child, findings))
            elif kind == "command_name":
                word_nodes.extend(child.children)
            elif kind in REDIRECT_TYPES:
                read_redirect(self, child, own, pending)
            elif not child.is_named or kind not in _SKIP:
                # Anonymous tokens here are words tree-sitter lexed as operators ($, ==).
                word_nodes.append(child)
        words = [
            self.words.read(g, findings) for g in group_words(self.source, word_nodes, findings)
        ]
        if words and words[0].dynamic:
            findings.append(
                f"variable or substitution in command position ('{words[0].value[:60]}')"
            )
        span = (children[0].start_byte, children[-1].end_byte) if split else None
        readings: list[tuple[str, ...]] = []
        if any(w.dynamic for w in words):
            bare = tuple(w.value if w.bare is None else w.bare for w in words)
            readings = [bare, tuple(word for word in bare if word)]
        self.add(
            node,
            tuple(w.value for w in words),
            assignments,
            own.merged(extra),
            findings,
            span,
            readings,
        )
        for later in pending:
            self.statement(later)

    def _odd_gap(self, left: Node, right: Node) -> bool:
        """A backslash outside every word (not a line continuation) is text misread."""
        gap = self.source[left.end_byte : right.start_byte]
        return b"\\" in gap and b"\\" in gap.replace(b"\\\n", b"")

    def assignment(self, node: Node, findings: list[str]) -> tuple[str, str]:
        name_node = node.child_by_field_name("name")
        name = text(self.source, name_node.start_byte, name_node.end_byte) if name_node else ""
        after = name_node.end_byte if name_node is not None else node.start_byte
        if name_node is not None and name_node.type == "subscript":
            # bash evaluates the subscript as arithmetic: substitutions in it run.
            findings.append(f"array subscript in assignment to '{name[:40]}' is evaluated")
            self.scan(name_node, "array subscript")
        value_nodes = [c for c in node.children if c.is_named and c.start_byte >= after]
        if value_nodes and value_nodes[0].type == "array":
            value = text(self.source, value_nodes[0].start_byte, value_nodes[0].end_byte)
            self.scan(value_nodes[0], "array value")
        elif value_nodes:
            value = self.words.read(value_nodes, findings).value
        else:
            value = ""
        return name, value

    def add(
        self,
        node: Node,
        argv: tuple[str, ...],
        assignments: list[tuple[str, str]],
        extra: Extra,
        findings: list[str],
        span: tuple[int, int] | None = None,
        readings: list[tuple[str, ...]] | None = None,
    ) -> None:
        for inherited in self.inherited:
            extra = extra.merged(inherited)
        start, end = span if span is not None else (node.start_byte, node.end_byte)
        draft = Draft(
            text=text(self.source, start, end),
            argv=argv,
            context=self.ctx,
            assignments=assignments,
            redirects=list(extra.redirects),
            findings=findings + extra.findings,
            readings=[r for r in dict.fromkeys(readings or ()) if r and r[0] and r != argv],
        )
        self.sink.drafts.append(draft)
        self._nested_of(draft, extra)

    def _nested_of(self, draft: Draft, extra: Extra) -> None:
        for item in self.sink.finish(draft, self.sink, extra.stdin_texts):
            if isinstance(item, tuple):
                self.payload(*item)
            else:
                self.program(item, extra)

    def program(self, runs: Runs, extra: Extra) -> None:
        """A program a command runs (``env CMD``, ``find -exec CMD ;``): its own
        segment, one level deeper, with the command's redirections (its output
        goes where the command's does) and the environment it is given."""
        if self.depth >= self.sink.max_depth:
            self.sink.note(f"nesting deeper than {self.sink.max_depth} levels in a {runs.label}")
            return
        draft = Draft(
            text=shlex.join(runs.argv),
            argv=runs.argv,
            context=(*self.ctx, runs.label),
            assignments=list(runs.assignments),
            redirects=list(extra.redirects),
            findings=list(extra.findings),
        )
        self.sink.drafts.append(draft)
        # A program runs in a child process: a `cd` it names changes nothing here.
        saved = (self.ctx, self.depth, self.sink.cwd, self.sink.cwd_known)
        self.ctx, self.depth = draft.context, self.depth + 1
        try:
            self._nested_of(draft, extra)
        finally:
            self.ctx, self.depth = saved[0], saved[1]
            self.sink.cwd, self.sink.cwd_known = saved[2], saved[3]

    def words_of(self, node: Node, findings: list[str]) -> list[str]:
        """Quote-removed words of a test or declaration, operators kept as written."""
        out: list[str] = []
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in _WORDISH:
                out.append(self.words.read([child], findings).value)
            elif child.type == "variable_assignment":
                name, value = self.assignment(child, findings)
                out.append(f"{name}={value}")
                findings.extend(self.sink.assignment_findings(name))
            elif child.is_named or child.child_count:
                stack.extend(reversed(child.children))
            else:
                out.append(text(self.source, child.start_byte, child.end_byte))
        return out


Handler = Callable[[Walker, Node, "Extra | None"], None]
_HANDLERS: dict[str, Handler] = {}


def _register() -> None:
    from shellgate.shell.reader import compound

    _HANDLERS.update(
        {
            "command": Walker._command,
            "list": Walker._list,
            "pipeline": Walker._pipeline,
            "redirected_statement": Walker._redirected,
        }
    )
    _HANDLERS.update(compound.HANDLERS)


_register()
