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

import re
import shlex
from collections.abc import Callable

from tree_sitter import Node

from shellgate.shell.reader import _parser, compound, globbing, misreads
from shellgate.shell.reader._parser import SKIP, text
from shellgate.shell.reader.drafts import UNSET, Draft, Extra, Runs, Sink, State, merge_states
from shellgate.shell.reader.heredoc_lexer import Heredoc, prepare
from shellgate.shell.reader.heredocs import backtick_spans
from shellgate.shell.reader.redirects import REDIRECT_TYPES, printed, read_redirect
from shellgate.shell.reader.reread import lexical_misreads, reread
from shellgate.shell.reader.walking import GlobRead
from shellgate.shell.reader.words import WordReader, group_words, odd_gap, split_at_newlines

#: Payloads bash runs in the same shell (its variables and directory): any other
#: payload runs in another process (``bash -c``, ``sudo -s``), where none is known.
SAME_SHELL = frozenset({
    "eval payload", "trap payload", "alias value", "prompt string", "brace expansion",
    "after a heredoc bash ends early", "command substitution (heredoc body)",
    "command substitution (parameter expansion)",
})  # fmt: skip
#: The context of commands drafted from inside a parse error (``Segment.fragment``).
PARSE_ERROR = "parse error"
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


def _no_output(node: Node) -> str | None:
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
        opaque: bool = False,
    ) -> None:
        self.source = source
        #: Run by another process whose environment and directory may differ
        #: (``sudo -s``, ``bash -c``, ``su -c``): no variable is known there.
        self.opaque = opaque
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
        self.words = WordReader(
            source, self._nested, self.display,
            (lambda name, quoted: None) if opaque
            else (lambda name, quoted: sink.value(name, quoted=quoted)),
            self._printed,
        )  # fmt: skip
        #: Assignments read in the statement at hand: ``(name, literal value or None)``.
        self.assigned: list[tuple[str, str | None]] = []
        #: Directories the globs of the command at hand were read in.
        self.globbed: list[tuple[str, tuple[str, ...]]] = []
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
                f"nesting deeper than {self.sink.max_depth} levels at '{self.short(node)}'; "
                "not analysed further"
            )
            return
        saved = (self.ctx, self.depth)
        state, pending = self.sink.state(), self.sink.cd_fail
        self.ctx = (*self.ctx, label)
        self.depth += 1
        try:
            fn(node)
        finally:
            self.ctx, self.depth = saved
            if scoped:
                self.sink.restore(state)
                self.sink.cd_fail = pending

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
        state, pending = self.sink.state(), self.sink.cd_fail
        try:
            # Inside a re-read, nested payloads are not re-read again (only noted):
            # each level re-reading its children's re-reads would grow as 2^depth.
            nested = Walker(
                patched, self.sink, (*self.ctx, label), self.depth + 1, reread=self.reread,
                heredocs=heredocs, display=encoded,
                opaque=self.opaque or label not in SAME_SHELL,
            )  # fmt: skip
            nested.run(root)
        finally:
            self.sink.restore(state)
            self.sink.cd_fail = pending

    def _printed(self, node: Node) -> str | None:
        """What a command substitution prints, where that is known (``printed``)."""
        if self.opaque:
            return None
        cwd = self.sink.cwd if self.sink.cwd_sure else None
        return printed(node, self.source, self.heredocs, cwd)

    def glob_for_loop(self, value: str, mask: str, shown: str) -> GlobRead | None:
        """A glob in a ``for`` list: its matches, read as :meth:`_glob` reads them,
        its directory kept for the written-directory check (its matches are values
        one at a time, so their order decides no write)."""
        before = len(self.globbed)
        read = self._glob(value, mask, shown)
        if len(self.globbed) > before:
            directory, _ = self.globbed[-1]
            self.globbed[-1] = (directory, ())
        return read

    def _glob(self, value: str, mask: str, shown: str) -> GlobRead | None:
        """An unquoted glob read as bash reads it (``reader/globbing.py``), in the
        segment's directory now, with the globbing options the line set: its
        matches, sorted, or the word itself when none match. ``None`` (a finding)
        where the directory is unknown or the matches are too many; a match that
        begins with ``-`` would be read as an option: a finding."""
        if not self.sink.cwd_sure or self.opaque:
            return None
        self.sink.fs = True
        read = globbing.read_word(value, mask, shown, self.sink.cwd, self.sink.globbing)
        if read is None:
            return None
        self.globbed.append((read.directory, read.matched))
        return read.words, read.finding

    def _brace_command(self, node: Node) -> bool:
        """``{rm,-rf,/} x``: bash expands a brace word in command position and runs
        the result; tree-sitter-bash 0.25 reads ``{`` as a group and fails. The
        error's text is read again with the brace word quoted (its respellings,
        ``rm -rf /``, reach the deny rules: argv/spellings.py) and the word is a
        finding."""
        children = node.children
        first = next((c for c in children if c.type != "&&" and c.type != "||"), None)
        if first is None or first.type != "{":
            return False
        start = first.start_byte
        raw = self.display[start : node.end_byte].decode("utf-8", "surrogatepass")
        word, _, rest = raw.partition(" ") if " " in raw.split("\n", 1)[0] else (raw, "", "")
        head = re.match(r"\{[^\s{}'\"\\`$;&|<>()]*,[^\s{}'\"\\`$;&|<>()]*\}", word)
        if head is None:
            return False
        tail = word[head.end() :] + (" " + rest if rest else "")
        self.sink.note(f"brace expansion in command position '{head.group()[:40]}'")
        self.sink.read_errors.add(node.start_byte)
        self.payload("brace expansion", f"'{head.group()}'{tail}")
        return True

    def commit_assignments(self) -> None:
        """Assignments that outlive their statement (``X=1``, ``export X=1``): later
        words of the line expand them (not a name ``declare`` gave an attribute
        that changes what is stored: ``-l``, ``-u``, ``-i``, ``-n``, arrays)."""
        for name, value in self.assigned:
            self.sink.vars[name] = None if name in self.sink.transformed else value
        self.assigned = []

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
        nested = Walker(synthetic, self.sink, self.ctx, self.depth, reread=self.reread,
                        opaque=self.opaque)
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
            nested.words.output_of = _no_output

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

    def short(self, node: Node) -> str:
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
                    display=self.display, opaque=self.opaque,
                )  # fmt: skip
                nested.run(again.root)
        finally:
            # The reader's hooks are bound methods of this walker: a reference cycle.
            # Cut them, so the walk's objects go by reference counting; left to the
            # cyclic GC, every ~20 analyses paid a ~75 µs collection (the p99).
            self.words.on_nested = _detached
            self.words.output_of = _no_output

    # -- statements --------------------------------------------------------------

    def block(self, node: Node) -> None:
        children = node.children
        for index, child in enumerate(children):
            if child.is_named and child.type not in SKIP:
                after = children[index + 1] if index + 1 < len(children) else None
                if after is not None and after.type == "&":
                    # In the background: a subshell, whose cd and assignments do not last.
                    state = self.sink.state()
                    self.statement(child)
                    self.sink.restore(state)
                else:
                    self.statement(child)

    def statement(self, node: Node, extra: Extra | None = None) -> None:
        """Walk one statement; the next one runs whether it succeeded or not."""
        ok, failed = self.outcomes(node, extra)
        merged = merge_states([ok, failed])
        if merged is not None:
            self.sink.restore(merged)

    def outcomes(self, node: Node, extra: Extra | None = None) -> tuple[State | None, State | None]:
        """Walk one statement; return the state the shell is in if it succeeds and if
        it fails (``None``: it cannot). Only a ``cd`` tells them apart: the shell
        stays where it was when one fails (no such directory, not one, no right)."""
        self.sink.cd_fail = UNSET
        self.dispatch(node, extra)
        fail, self.sink.cd_fail = self.sink.cd_fail, UNSET
        ok = self.sink.state()
        if fail is UNSET:
            return ok, ok
        if fail is None:
            return ok, None
        assert isinstance(fail, tuple)
        cwd: str = fail[0]
        known: bool = fail[1]
        alts: tuple[str, ...] = fail[2]
        return ok, State(cwd, known, alts, ok.vars, ok.globbing)

    def dispatch(self, node: Node, extra: Extra | None = None) -> None:
        """Walk one statement, leaving ``Sink.cd_fail`` as its last ``cd`` set it."""
        kind = node.type
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, node, extra)
        elif kind == "ERROR":
            # analyse() reports the error itself; commands inside are fragments (no
            # rule meets them), unless the error is a brace word tree-sitter cannot
            # read in command position, which is read as bash reads it.
            if not self._brace_command(node):
                self.descend(PARSE_ERROR, self.block, node, scoped=False)
        elif kind not in SKIP:
            self.sink.note(f"unsupported construct {kind} at '{self.short(node)}'")
            self.scan(node, kind)

    def _command(self, node: Node, extra: Extra | None) -> None:
        # The same command text in the same place and directory drafts the same
        # segments: replay them (padding with thousands of copies stays cheap).
        # Everything a command's reading depends on is in the key: the shell's state
        # (directory, variables, globbing), and the files and links the line made.
        key: tuple[object, ...] | None = None
        if extra is None and not self.inherited and not self._holds_heredoc(node):
            raw = self.source[node.start_byte : node.end_byte]
            key = (raw, self.ctx, self.depth, self.sink.state(), len(self.sink.written),
                   len(self.sink.links))  # fmt: skip
            hit = self.sink.memo.get(key)
            if hit is not None:
                drafts, state, fail = hit
                self.sink.drafts.extend(drafts)
                self.sink.restore(state)
                self.sink.cd_fail = fail
                return
        start = len(self.sink.drafts)
        self._fresh_command(node, extra)
        if key is not None:
            self.sink.memo[key] = (self.sink.drafts[start:], self.sink.state(), self.sink.cd_fail)

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
        self.assigned = []  # prefix assignments hold for this command alone
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
        groups = group_words(self.source, word_nodes, findings)
        # A glob argument is read as its matches; one in command position stays a
        # finding (bash would run its first match).
        known = self.words.known_expansions
        words = [self.words.read(g, findings, None) for g in groups[:1]]
        # A program named by an expansion is a finding even when its value is known
        # (`x=ls; $x`): what runs is then decided by a word the rules never saw.
        if words and (words[0].dynamic or self.words.known_expansions != known):
            findings.append(
                f"variable or substitution in command position ('{words[0].value[:60]}')"
            )
        words += [self.words.read(g, findings, self._glob) for g in groups[1:]]
        span = (children[0].start_byte, children[-1].end_byte) if split else None
        readings: list[tuple[str, ...]] = []
        if any(w.dynamic for w in words):
            bare = tuple(w.value if w.bare is None else w.bare for w in words)
            readings = [bare, tuple(word for word in bare if word)]
        if any(w.matches is not None for w in words):
            # The glob as written stays a deny-side reading: rules on a directory
            # meet `rm -rf /home/*` whatever it matches today (argv/spellings.py).
            readings.append(tuple(w.value for w in words))
        argv = tuple(v for w in words for v in (w.matches if w.matches is not None else (w.value,)))
        self.add(
            node,
            argv,
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
            word = self.words.read(value_nodes, findings)
            value = word.value
            known = None if word.dynamic else value
            if any(c.type == "+=" for c in node.children):
                # NAME+=VALUE appends to what NAME holds.
                held = self.sink.vars.get(name) if name in self.sink.vars else None
                known = None if known is None or held is None else held + known
            self.assigned.append((name, known))
            return name, value
        else:
            value = ""
        self.assigned.append((name, value if not value_nodes else None))
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
        globbed, self.globbed = self.globbed, []
        draft = Draft(
            globbed=globbed,
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
        saved = (self.ctx, self.depth)
        state, pending = self.sink.state(), self.sink.cd_fail
        self.ctx, self.depth = draft.context, self.depth + 1
        try:
            self._nested_of(draft, extra)
        finally:
            self.ctx, self.depth = saved
            self.sink.restore(state)
            self.sink.cd_fail = pending

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
#: The handler of each statement type: simple commands here, the rest in
#: compound.py (which sees the walker as a ``walking.Walking``).
_HANDLERS: dict[str, Handler] = {"command": Walker._command, **compound.HANDLERS}
