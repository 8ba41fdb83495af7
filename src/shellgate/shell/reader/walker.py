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
from shellgate.shell.reader._parser import SKIP, text
from shellgate.shell.reader.drafts import Draft, Extra, Runs, Sink
from shellgate.shell.reader.heredoc_lexer import Heredoc, prepare
from shellgate.shell.reader.heredocs import backtick_spans
from shellgate.shell.reader.redirects import REDIRECT_TYPES, read_redirect
from shellgate.shell.reader.reread import lexical_misreads, reread
from shellgate.shell.reader.words import WordReader, group_words, odd_gap, split_at_newlines

#: Redirections that give a command its stdin (a pipe's output is then not it).
_STDIN_OPS = frozenset({"<", "<<", "<<-", "<<<", "<>"})
_SUBSTITUTIONS = {"command_substitution": "command substitution",
                  "process_substitution": "process substitution"}  # fmt: skip
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
        heredocs: dict[int, Heredoc] | None = None,
        display: bytes | None = None,
    ) -> None:
        self.source = source
        #: The heredocs the lexer read, by the offset of their operator (the
        #: source has each as `<` and a placeholder word, its body blanked).
        self.heredocs: dict[int, Heredoc] = heredocs if heredocs is not None else {}
        #: The source as written (same length): segment texts are cut from it.
        self.display = display if display is not None else source
        self.reread = reread  # this source is already a patched re-read
        self.lexical = lexical  # misreads.find of this source, if already known
        self.sink = sink
        self.ctx = context
        self.depth = depth
        self.words = WordReader(source, self._nested, self.display)
        self.inherited: list[Extra] = []
        #: What the command before this one in a pipeline printed, when known
        #: (``cat <<EOF | python -``): the next simple command's stdin.
        self.piped: list[str] | None = None
        #: The last simple command drafted here (the pipeline reads its output).
        self.last: Draft | None = None

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
        patched, heredocs = prepare(encoded)
        root = _parser.parse(patched)
        if root.has_error:
            self.sink.note(f"parse error in {label} '{source[:60]}'")
        saved = (self.sink.cwd, self.sink.cwd_known)
        try:
            # Inside a re-read, nested payloads are not re-read again (only noted):
            # each level re-reading its children's re-reads would grow as 2^depth.
            nested = Walker(
                patched, self.sink, (*self.ctx, label), self.depth + 1, reread=self.reread,
                heredocs=heredocs, display=encoded,
            )  # fmt: skip
            nested.run(root)
        finally:
            self.sink.cwd, self.sink.cwd_known = saved

    def heredoc_body(self, body: str) -> None:
        """An unquoted heredoc's body: the substitutions in it run when bash reads it
        (read by tree-sitter as the body of a heredoc that ends its line, which it
        reads right); backticks are the caller's (tree-sitter leaves them as text)."""
        if "$" not in body:
            return
        end = "SG_EOF"
        while end in body:
            end += "_"
        newline = "" if not body or body.endswith("\n") else "\n"
        synthetic = f": <<{end}\n{body}{newline}{end}\n".encode("utf-8", "surrogatepass")
        root = _parser.parse(synthetic)
        if root.has_error:
            self.sink.note(f"parse error in an unquoted heredoc body '{body[:60]}'")
        nested = Walker(synthetic, self.sink, self.ctx, self.depth, reread=self.reread)
        stack = [root]
        bodies: list[Node] = []
        while stack:
            node = stack.pop()
            if node.type == "heredoc_body":
                bodies.append(node)
            else:
                stack.extend(node.children)
        try:
            for found in bodies:
                nested.scan(found, "heredoc body")
        finally:
            nested.words.on_nested = _detached

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
        raw = text(self.display, node.start_byte, min(node.end_byte, node.start_byte + 60))
        return raw.replace("\n", " ")

    def run(self, root: Node) -> None:
        """Walk a parsed source; re-read it once if tree-sitter misread it (see :mod:`reread`)."""
        try:
            lexical = lexical_misreads(root, self.source, self.lexical)
            self.block(root)
            again = reread(
                self.source, self.sink, self.words.misread, self.words.split, lexical,
                already=self.reread,
            )  # fmt: skip
            if again is not None:
                nested = Walker(
                    again.source, self.sink, (*self.ctx, "re-read"), self.depth,
                    reread=True, lexical=again.lexical, heredocs=self.heredocs,
                    display=self.display,
                )  # fmt: skip
                nested.run(again.root)
        finally:
            # The reader's hook is a bound method of this walker: a reference cycle.
            # Cut it, so the walk's objects go by reference counting; left to the
            # cyclic GC, every ~20 analyses paid a ~75 µs collection (the p99).
            self.words.on_nested = _detached

    # -- statements --------------------------------------------------------------

    def block(self, node: Node) -> None:
        for child in node.children:
            if child.is_named and child.type not in SKIP:
                self.statement(child)

    def statement(self, node: Node, extra: Extra | None = None) -> None:
        kind = node.type
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, node, extra)
        elif kind == "ERROR":
            # analyse() reports the error itself; commands inside still get checked.
            self.descend("parse error", self.block, node, scoped=False)
        elif kind not in SKIP:
            self.sink.note(f"unsupported construct {kind} at '{self._short(node)}'")
            self.scan(node, kind)

    def _command(self, node: Node, extra: Extra | None) -> None:
        # The same command text in the same place and directory drafts the same
        # segments: replay them (padding with thousands of copies stays cheap).
        key: tuple[object, ...] | None = None
        if extra is None and not self.inherited and not self._holds_heredoc(node):
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

    def _holds_heredoc(self, node: Node) -> bool:
        """Whether a lexed heredoc's operator lies in ``node`` (its text, with the
        body blanked, would not tell two of them apart)."""
        start, end = node.start_byte, node.end_byte
        return any(start <= at < end for at in self.heredocs)

    def _fresh_command(self, node: Node, extra: Extra | None) -> None:
        # tree-sitter-bash 0.25 can run a command's words across an unquoted newline
        # (`a | b | c⏎rm -rf / && d` parses `c rm -rf /` as one command, no ERROR
        # node); bash ends a simple command there. Split where bash would.
        chunks = split_at_newlines(self.source, list(node.children))
        for index, children in enumerate(chunks):
            self._command_from(node, children, extra if index == 0 else None, split=len(chunks) > 1)

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
            if previous is not None and odd_gap(self.source, previous, child):
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
            elif not child.is_named or kind not in SKIP:
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
        if extra.arguments:
            argv = (*argv, *extra.arguments)
        piped, self.piped = self.piped, None
        if piped and not any(
            r.op in _STDIN_OPS and r.fd in (None, 0) for r in extra.redirects
        ):
            extra = Extra(extra.redirects, extra.findings, [*piped, *extra.stdin_texts],
                          extra.arguments)
        start, end = span if span is not None else (node.start_byte, node.end_byte)
        draft = Draft(
            text=text(self.display, start, end),
            argv=argv,
            context=self.ctx,
            assignments=assignments,
            redirects=list(extra.redirects),
            findings=findings + extra.findings,
            readings=[r for r in dict.fromkeys(readings or ()) if r and r[0] and r != argv],
        )
        self.sink.drafts.append(draft)
        self.last = draft
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
            via=runs.via,
            via_at=runs.via_at,
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
            **compound.HANDLERS,
        }
    )


_register()
