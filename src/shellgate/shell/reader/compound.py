"""Statement handlers for lists, pipelines, redirected statements, compound
commands, declarations and tests (every statement but a simple command).

Each handler labels where the commands inside sit (``if condition``, ``loop
body``, ``function body``…) and goes one nesting level deeper. Words that are
only data to the construct (a ``for`` list, ``case`` patterns) are read for the
substitutions inside them, whose commands do run; their other findings are
dropped because the loop body's own use of the variable is a finding already.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from tree_sitter import Node

from shellgate.shell.catalog.environment import loop_variable_findings
from shellgate.shell.reader._parser import SKIP, text
from shellgate.shell.reader.drafts import Extra, Sink, Where, merged
from shellgate.shell.reader.redirects import REDIRECT_TYPES, read_redirect

if TYPE_CHECKING:
    from shellgate.shell.reader.walker import Walker

_WORDISH_VALUE = frozenset({"word", "string", "raw_string", "concatenation", "simple_expansion",
                            "expansion", "number", "ansi_c_string", "command_substitution",
                            "process_substitution", "arithmetic_expansion", "extglob_pattern",
                            "brace_expression"})  # fmt: skip


def _statements(walker: Walker, label: str, nodes: list[Node], *, maybe: bool = False) -> None:
    """Walk ``nodes`` as statements one level deeper under ``label``; ``maybe``: a
    region bash may skip (:meth:`Walker.maybe`)."""
    if not nodes:
        return

    def run(_: Node) -> None:
        for node in nodes:
            walker.statement(node)
            walker.sink.settle()

    if maybe:
        walker.maybe(lambda: walker.descend(label, run, nodes[0], scoped=False))
    else:
        walker.descend(label, run, nodes[0], scoped=False)


def _data_words(walker: Walker, nodes: list[Node]) -> None:
    """Read words that are data (for lists, case patterns): only substitutions matter."""
    for node in nodes:
        walker.words.read([node], [])


def statement_list(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``a && b || c``: the first command always runs, each later one only as the
    list so far ended — ``&&`` after a success, ``||`` after a failure. The
    directories the shell may be in are followed for both endings (a ``cd`` that
    may fail ends in its directory or where it was: ``cd a && cd b || cd ..`` runs
    ``cd ..`` from ``a`` or from where it started); the variables the later
    commands assign are not known after the list."""
    # ``a && b && c`` nests to the left without bound: flatten iteratively.
    leaves: list[tuple[str, Node]] = []
    stack: list[tuple[str, Node]] = [("", node)]
    while stack:
        op, current = stack.pop()
        if current.type == "list":
            # Each named child with the operator before it (the list's own for the first).
            pairs: list[tuple[str, Node]] = []
            join = op
            for child in current.children:
                if not child.is_named:
                    join = child.type if child.type in ("&&", "||") else "?"
                elif child.type not in SKIP:
                    pairs.append((join, child))
                    join = "?"  # two named children in a row: read as a sequence
            stack.extend(reversed(pairs))
        elif current.type not in SKIP:
            leaves.append((op, current))
    saved = walker.ctx
    walker.ctx = (*saved, "list")
    sink = walker.sink
    last = len(leaves) - 1

    def ending(index: int, leaf: Node, start: Where) -> tuple[Where, Where]:
        """Where the shell is when ``leaf``, run from ``start``, succeeds and fails."""
        sink.place(start)
        sink.cd_pending, sink.cd_before = False, None
        walker.statement(leaf, extra if index == last else None)
        after = sink.where()
        failed = sink.cd_before if sink.cd_pending else after
        sink.cd_pending, sink.cd_before = False, None
        return after, failed

    try:
        sink.settle()
        ok, failed = ending(0, leaves[0][1], sink.where())
        variables = dict(sink.vars)
        for index, (op, leaf) in enumerate(leaves[1:], start=1):
            start = ok if op == "&&" else failed if op == "||" else merged(ok, failed)
            if start == ():
                start = merged(ok, failed)  # never reached: still read, from anywhere
            leaf_ok, leaf_failed = ending(index, leaf, start)
            if op == "&&":
                ok, failed = leaf_ok, merged(failed, leaf_failed)
            elif op == "||":
                ok, failed = merged(ok, leaf_ok), leaf_failed
            else:
                ok, failed = leaf_ok, leaf_failed
        sink.place(merged(ok, failed))
        for name, value in sink.vars.items():
            if name not in variables or variables[name] != value:
                sink.vars[name] = None  # assigned by a command that may not have run
    finally:
        walker.ctx = saved


def pipeline(walker: Walker, node: Node, extra: Extra | None) -> None:
    parts = [c for c in node.children if c.is_named and c.type not in SKIP]
    saved, place = walker.ctx, walker.sink.snapshot()
    variables = dict(walker.sink.vars)
    walker.ctx = (*saved, "pipeline")
    try:
        output: list[str] | None = None
        for index, part in enumerate(parts):
            # Every element of a pipeline runs in a subshell: a cd there does not last.
            walker.piped, walker.last = output, None
            walker.statement(part, extra if index == len(parts) - 1 else None)
            walker.sink.restore(place)
            walker.sink.vars = dict(variables)  # a subshell's assignments do not last
            # What a plain command printed, when known, is the next one's stdin.
            simple = part.type in ("command", "redirected_statement")
            output = walker.last.output if simple and walker.last is not None else None
        walker.piped = None
    finally:
        walker.ctx = saved


#: A gap between a command and its redirections holding only blanks and continuations.
_BLANK_GAP = re.compile(rb"(?:[ \t]|\\\n)*")
#: What tree-sitter-bash 0.25 drops there: a lone ``-`` before ``2>f`` or ``<<EOF``.
_DROPPED = re.compile(rb"(?:[ \t]|\\\n)*(-)(?:[ \t]|\\\n)*")


def _dropped_word(walker: Walker, previous: Node | None, child: Node, own: Extra) -> None:
    """A word tree-sitter left out of every node (``cmd - 2>&1`` reads ``cmd``): a
    lone ``-`` is the argument bash sees; anything else is a finding."""
    if previous is None or child.start_byte <= previous.end_byte:
        return
    gap = walker.source[previous.end_byte : child.start_byte]
    if _BLANK_GAP.fullmatch(gap):
        return
    if _DROPPED.fullmatch(gap) is not None:
        own.arguments.append("-")
    else:
        skipped = gap.decode("utf-8", "replace").strip()[:40]
        own.findings.append(
            f"the parser skipped '{skipped}' between a command and its redirections"
        )


def redirected(walker: Walker, node: Node, extra: Extra | None) -> None:
    body = node.child_by_field_name("body")
    own = Extra()
    pending: list[Node] = []
    previous: Node | None = None
    for child in node.children:
        _dropped_word(walker, previous, child, own)
        previous = child
        if child.type in REDIRECT_TYPES:
            read_redirect(walker, child, own, pending)
    own = own.merged(extra)
    if body is None:
        walker.add(node, (), [], own, [])
    elif body.type in ("command", "pipeline", "list", "redirected_statement"):
        walker.statement(body, own)
    else:
        walker.inherited.append(own)
        try:
            walker.statement(body)
        finally:
            walker.inherited.pop()
    for later in pending:
        walker.statement(later)


def subshell(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    walker.descend("subshell", walker.block, node, scoped=True)


def group(walker: Walker, node: Node, extra: Extra | None) -> None:
    first = node.children[0].type if node.children else ""
    if first == "((":
        arithmetic(walker, node, extra)
        return
    walker.descend("group", walker.block, node, scoped=False)


def arithmetic(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``(( … ))``: a segment of its own; variables in it can run code via subscripts."""
    inner = text(walker.source, node.start_byte, node.end_byte).strip()[2:-2].strip()
    findings = [f"arithmetic command '(( {inner[:40]} ))' (can run code via array subscripts)"]
    walker.scan(node, "arithmetic")
    walker.add(node, ("((", inner, "))"), [], extra or Extra(), findings)


def if_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    _conditional(walker, node, "if condition", "if body", "then")


def _conditional(walker: Walker, node: Node, cond: str, body: str, keyword: str) -> None:
    """Statements before ``keyword`` are the condition (it runs), after it the body
    (it may not); an ``elif`` and an ``else`` may not run at all."""
    before: list[Node] = []
    after: list[Node] = []
    seen = False
    for child in node.children:
        if child.type == keyword:
            seen = True
        elif child.type in ("elif_clause", "else_clause"):
            if child.type == "elif_clause":
                walker.maybe(partial(_conditional, walker, child, cond, body, "then"))
            else:
                _statements(walker, body, [c for c in child.children if c.is_named], maybe=True)
        elif child.is_named and child.type != "comment":
            (after if seen else before).append(child)
    _statements(walker, cond, before)
    _statements(walker, body, after, maybe=True)


def while_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    condition = [c for c in node.children if c.is_named and c.type not in ("do_group", "comment")]
    body = [c for c in node.children if c.type == "do_group"]

    def loop() -> None:  # the condition runs again after each pass
        _statements(walker, "loop condition", condition)
        for group_node in body:
            walker.descend("loop body", walker.block, group_node, scoped=False)

    walker.maybe(loop)


def for_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``for NAME in …`` and ``select NAME in …``: NAME is assigned each value, so
    a loop over ``PATH`` or ``IFS`` changes what the body runs (a finding)."""
    del extra
    keyword = node.children[0].type
    name = ""
    for child in node.children:
        if child.type == "variable_name":
            name = text(walker.source, child.start_byte, child.end_byte)
            for finding in loop_variable_findings(keyword, name):
                walker.sink.note(finding)
    values = _loop_values(walker, node) if keyword == "for" else None
    if keyword != "for":
        _data_words(walker, [c for c in node.children if c.type in _WORDISH_VALUE])
    bodies = [c for c in node.children if c.type == "do_group"]
    sink = walker.sink

    def loop() -> None:
        # Each value in turn when they are known and few (`for f in src/*.py`: the
        # body reads "$f" as each file); else once, the variable unknown.
        passes: list[str | None] = list(values) if values else [None]
        for value in passes:
            if name:
                sink.vars[name] = value
            for body in bodies:
                walker.descend("loop body", walker.block, body, scoped=False)

    walker.maybe(loop)


#: A loop over more values than this is walked once, its variable unknown.
_MAX_LOOP_VALUES = 16


def _loop_values(walker: Walker, node: Node) -> list[str] | None:
    """The values ``for NAME in WORDS`` assigns, in order, where every word is
    known (globs read as their matches); ``None`` otherwise (``for x; do``:
    the positional parameters; an expansion; too many)."""
    nodes = [c for c in node.children if c.type in _WORDISH_VALUE]
    if not any(c.type == "in" for c in node.children):
        return None
    found: list[str] = []
    known = True
    for child in nodes:
        findings: list[str] = []
        word = walker.words.read([child], findings, walker.glob_for_loop)
        if findings or word.dynamic:
            known = False
        found.extend(word.matches if word.matches is not None else (word.value,))
    if not known or len(found) > _MAX_LOOP_VALUES:
        return None
    return found


def c_style_for(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    head = next((c for c in node.children if c.type == "do_group"), None)
    walker.sink.note("arithmetic for-loop header (can run code via array subscripts)")
    for child in node.children:
        if child.type == "do_group":
            walker.maybe(partial(walker.descend, "loop body", walker.block, child, scoped=False))
        elif child.is_named and child is not head:
            walker.scan(child, "arithmetic")


def case_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    for child in node.children:
        if child.type == "case_item":
            patterns = [c for c in child.children if walker_field(child, c) == "value"]
            _data_words(walker, patterns)
            body = [
                c for c in child.children
                if c.is_named and c.type != "comment" and walker_field(child, c) != "value"
            ]  # fmt: skip
            _statements(walker, "case body", body, maybe=True)
        elif child.type in _WORDISH_VALUE:
            _data_words(walker, [child])


def walker_field(parent: Node, child: Node) -> str | None:
    for index, candidate in enumerate(parent.children):
        if candidate == child:
            return parent.field_name_for_child(index)
    return None


def function_definition(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    name_node = node.child_by_field_name("name")
    name = text(walker.source, name_node.start_byte, name_node.end_byte) if name_node else "?"
    walker.sink.note(f"defines a function '{name}' (it can shadow any command)")
    body = node.child_by_field_name("body")
    if body is not None:
        walker.descend("function body", walker.statement, body, scoped=True)


def negated(walker: Walker, node: Node, extra: Extra | None) -> None:
    for child in node.children:
        if child.is_named and child.type != "comment":
            walker.statement(child, extra)


def declaration(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``: a segment;
    what it assigns a literal holds for later words of the line, what it unsets is
    unknown to them."""
    findings: list[str] = []
    walker.assigned = []
    argv = tuple(walker.words_of(node, findings))
    findings.extend(_exported_shell_variables(argv, walker.sink))
    walker.add(node, argv, [], extra or Extra(), findings)
    if node.type == "unset_command":
        walker.assigned = [(name, None) for name in argv[1:] if not name.startswith("-")]
    walker.commit_assignments()


def _exported_shell_variables(argv: tuple[str, ...], sink: Sink) -> list[str]:
    """``X=…; export X`` (or ``declare -x X``): a shell variable the line assigned
    becomes the environment of every later command, as ``export X=…`` would make it;
    the same finding as that assignment."""
    if not argv:
        return []
    options = [w for w in argv[1:] if w.startswith(("-", "+")) and "=" not in w]
    exporting = argv[0] == "export" or (
        argv[0] in ("declare", "typeset", "local") and any("x" in w[1:] for w in options)
    )
    if not exporting:
        return []
    names = [w for w in argv[1:] if not w.startswith(("-", "+")) and "=" not in w]
    return [f for name in names if name in sink.vars for f in sink.assignment_findings(name)]


def test_command(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``[ … ]`` and ``[[ … ]]``: a segment whose argv is the test's words."""
    findings: list[str] = []
    argv = tuple(walker.words_of(node, findings))
    walker.add(node, argv, [], extra or Extra(), findings)


def bare_assignment(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``NAME=value`` with no command: a segment with assignments and no argv."""
    findings: list[str] = []
    nodes = [node] if node.type == "variable_assignment" else [
        c for c in node.children if c.type == "variable_assignment"
    ]  # fmt: skip
    walker.assigned = []
    pairs = [walker.assignment(n, findings) for n in nodes]
    walker.add(node, (), pairs, extra or Extra(), findings)
    walker.commit_assignments()


Handler = Callable[["Walker", Node, "Extra | None"], None]
HANDLERS: dict[str, Handler] = {
    "list": statement_list,
    "pipeline": pipeline,
    "redirected_statement": redirected,
    "subshell": subshell,
    "compound_statement": group,
    "if_statement": if_statement,
    "while_statement": while_statement,
    "for_statement": for_statement,
    "c_style_for_statement": c_style_for,
    "case_statement": case_statement,
    "function_definition": function_definition,
    "negated_command": negated,
    "declaration_command": declaration,
    "unset_command": declaration,
    "test_command": test_command,
    "variable_assignment": bare_assignment,
    "variable_assignments": bare_assignment,
    "do_group": lambda w, n, e: w.descend("group", w.block, n, scoped=False),
}
