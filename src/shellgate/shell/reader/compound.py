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
from typing import TYPE_CHECKING

from tree_sitter import Node

from shellgate.shell.catalog.environment import loop_variable_findings
from shellgate.shell.reader._parser import SKIP, text
from shellgate.shell.reader.drafts import UNSET, Extra, Sink, State, merge_states
from shellgate.shell.reader.redirects import REDIRECT_TYPES, read_redirect

if TYPE_CHECKING:
    from shellgate.shell.reader.walker import Walker

_WORDISH_VALUE = frozenset({"word", "string", "raw_string", "concatenation", "simple_expansion",
                            "expansion", "number", "ansi_c_string", "command_substitution",
                            "process_substitution", "arithmetic_expansion", "extglob_pattern",
                            "brace_expression"})  # fmt: skip


def _statements(walker: Walker, label: str, nodes: list[Node]) -> None:
    """Walk ``nodes`` as statements one level deeper under ``label``."""
    if not nodes:
        return

    def run(_: Node) -> None:
        for node in nodes:
            walker.statement(node)

    walker.descend(label, run, nodes[0], scoped=False)


def _data_words(walker: Walker, nodes: list[Node]) -> None:
    """Read words that are data (for lists, case patterns): only substitutions matter."""
    for node in nodes:
        walker.words.read([node], [])


def statement_list(walker: Walker, node: Node, extra: Extra | None) -> None:
    """``a && b || c``: each command after the first runs only on the status it
    follows, so what it changes (a ``cd``, an assignment) may not happen, and a
    ``cd`` that fails leaves the shell where it was. The state after the list is
    every way through it merged (``Sink.alts``: the directories it may be in)."""
    # ``a && b && c`` nests to the left without bound: flatten iteratively.
    leaves: list[Node] = []
    operators: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "list":
            stack.extend(c for c in reversed(current.children)
                         if c.is_named or c.type in ("&&", "||"))  # fmt: skip
        elif current.type in ("&&", "||"):
            operators.append(current.type)
        elif current.type not in SKIP:
            leaves.append(current)
    saved = walker.ctx
    walker.ctx = (*saved, "list")
    try:
        ok, failed = walker.outcomes(leaves[0], extra if len(leaves) == 1 else None)
        for index, leaf in enumerate(leaves[1:], start=1):
            # A list the parser could not read whole (a parse error asks anyway): any way.
            operator = operators[index - 1] if len(operators) == len(leaves) - 1 else ";"
            both = operator == "&&"
            if operator == ";":
                ok = failed = merge_states([ok, failed])
            entering, carried = (ok, failed) if both or operator == ";" else (failed, ok)
            # A command that cannot run is still read (rules see it), in any state.
            runs = entering is not None
            walker.sink.restore(entering or merge_states([ok, failed]) or walker.sink.state())
            last = extra if index == len(leaves) - 1 else None
            new_ok, new_failed = walker.outcomes(leaf, last)
            if not runs:
                continue
            if operator == ";":
                ok, failed = new_ok, new_failed
            elif both:
                ok, failed = new_ok, merge_states([new_failed, carried])
            else:
                ok, failed = merge_states([new_ok, carried]), new_failed
        merged = merge_states([ok, failed])
        if merged is not None:
            walker.sink.restore(merged)
        # The list's own status says nothing more to a list around it.
        walker.sink.cd_fail = UNSET
    finally:
        walker.ctx = saved


def pipeline(walker: Walker, node: Node, extra: Extra | None) -> None:
    parts = [c for c in node.children if c.is_named and c.type not in SKIP]
    saved = walker.ctx
    state = walker.sink.state()
    walker.ctx = (*saved, "pipeline")
    try:
        output: list[str] | None = None
        for index, part in enumerate(parts):
            # Every element of a pipeline runs in a subshell: a cd there does not last,
            # nor do its assignments -- but the last one's with `shopt -s lastpipe`.
            walker.piped, walker.last = output, None
            walker.statement(part, extra if index == len(parts) - 1 else None)
            if index < len(parts) - 1 or "lastpipe" not in state.globbing:
                walker.sink.restore(state)
            else:
                walker.sink.restore(merge_states([state, walker.sink.state()]) or state)
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
        walker.dispatch(body, own)
    else:
        walker.inherited.append(own)
        try:
            walker.dispatch(body)
        finally:
            walker.inherited.pop()
    outcome = walker.sink.cd_fail
    for later in pending:
        walker.statement(later)
    walker.sink.cd_fail = outcome


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


def _condition(walker: Walker, label: str, nodes: list[Node]) -> tuple[State | None, State | None]:
    """Walk a condition's statements; the state if it holds and if it does not."""
    if not nodes:
        state = walker.sink.state()
        return state, state
    result: list[tuple[State | None, State | None]] = []

    def run(_: Node) -> None:
        for node in nodes[:-1]:
            walker.statement(node)
        result.append(walker.outcomes(nodes[-1]))

    walker.descend(label, run, nodes[0], scoped=False)
    if not result:  # too deep: not walked
        state = walker.sink.state()
        return state, state
    return result[0]


def if_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    """Each branch runs from where its condition left the shell (an ``elif`` or
    ``else`` from where the conditions before it failed); after the ``if`` the
    shell may be where any branch (or false conditions without ``else``) left it."""
    del extra
    clauses: list[tuple[list[Node], list[Node]]] = []
    otherwise: list[Node] | None = None
    for clause in [node, *(c for c in node.children if c.type in ("elif_clause", "else_clause"))]:
        if clause.type == "else_clause":
            otherwise = [c for c in clause.children if c.is_named and c.type != "comment"]
            continue
        before: list[Node] = []
        after: list[Node] = []
        seen = False
        for child in clause.children:
            if child.type == "then":
                seen = True
            elif child.type in ("elif_clause", "else_clause"):
                continue
            elif child.is_named and child.type != "comment":
                (after if seen else before).append(child)
        clauses.append((before, after))
    ends: list[State | None] = []
    current: State | None = walker.sink.state()
    for before, after in clauses:
        reachable = current is not None
        walker.sink.restore(current or merge_states(ends) or walker.sink.state())
        holds, fails = _condition(walker, "if condition", before)
        walker.sink.restore(holds or walker.sink.state())
        _statements(walker, "if body", after)
        if reachable:
            ends.append(walker.sink.state() if holds is not None else None)
            current = fails
    if otherwise is not None:
        reachable = current is not None
        walker.sink.restore(current or merge_states(ends) or walker.sink.state())
        _statements(walker, "if body", otherwise)
        if reachable:
            ends.append(walker.sink.state())
    else:
        ends.append(current)
    merged = merge_states(ends)
    if merged is not None:
        walker.sink.restore(merged)


def _loop(walker: Walker, walk: Callable[[], None]) -> None:
    """A loop's body may run no time, once or again from where the last round
    left the shell: walked once; when that moved the shell or changed a variable,
    walked again (its segments replacing the first round's) from every state a
    round may start in, and the shell after the loop may be in any of them."""
    before = walker.sink.state()
    start = len(walker.sink.drafts)
    walk()
    after = walker.sink.state()
    if after == before:
        return
    rounds = merge_states([before, after]) or before
    del walker.sink.drafts[start:]
    walker.sink.restore(rounds)
    walk()
    walker.sink.restore(merge_states([rounds, walker.sink.state()]) or rounds)


def while_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    del extra
    condition = [c for c in node.children if c.is_named and c.type not in ("do_group", "comment")]
    body = [c for c in node.children if c.type == "do_group"]

    def walk() -> None:
        _statements(walker, "loop condition", condition)
        for group_node in body:
            walker.descend("loop body", walker.block, group_node, scoped=False)

    _loop(walker, walk)


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
            walker.sink.vars[name] = None  # each value in turn, and the last one after
    values = _loop_values(walker, node) if keyword == "for" else None
    if keyword != "for":
        _data_words(walker, [c for c in node.children if c.type in _WORDISH_VALUE])
    sink = walker.sink

    def walk() -> None:
        # Each value in turn when they are known and few (`for f in src/*.py`: the
        # body reads "$f" as each file); else once, the variable unknown.
        passes: list[str | None] = list(values) if values else [None]
        for value in passes:
            if name:
                sink.vars[name] = value
            for child in node.children:
                if child.type == "do_group":
                    walker.descend("loop body", walker.block, child, scoped=False)

    _loop(walker, walk)


#: A loop over more values than this is walked once, its variable unknown.
_MAX_LOOP_VALUES = 16


def _loop_values(walker: Walker, node: Node) -> list[str] | None:
    """The values ``for NAME in WORDS`` assigns, in order, where every word is
    known (globs read as their matches); ``None`` otherwise (``for x; do``: the
    positional parameters; an expansion; too many)."""
    nodes = [c for c in node.children if c.type in _WORDISH_VALUE]
    if not any(c.type == "in" for c in node.children):
        _data_words(walker, nodes)
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
        if child.is_named and child is not head and child.type != "do_group":
            walker.scan(child, "arithmetic")

    def walk() -> None:
        for child in node.children:
            if child.type == "do_group":
                walker.descend("loop body", walker.block, child, scoped=False)

    _loop(walker, walk)


def case_statement(walker: Walker, node: Node, extra: Extra | None) -> None:
    """Each item's body runs from the state before the ``case`` (or, after a
    ``;&``/``;;&``, the item before it may have left); after it, the shell may be
    where any body (or no match) left it."""
    del extra
    start: State | None = None
    ends: list[State | None] = []
    previous: State | None = None
    for child in node.children:
        if child.type == "case_item":
            if start is None:
                start = walker.sink.state()
            patterns = [c for c in child.children if walker_field(child, c) == "value"]
            _data_words(walker, patterns)
            body = [
                c for c in child.children
                if c.is_named and c.type != "comment" and walker_field(child, c) != "value"
            ]  # fmt: skip
            walker.sink.restore(merge_states([start, previous]) or start)
            _statements(walker, "case body", body)
            ends.append(walker.sink.state())
            through = any(c.type in (";&", ";;&") for c in child.children)
            previous = ends[-1] if through else None
        elif child.type in _WORDISH_VALUE:
            _data_words(walker, [child])
    if start is not None:
        walker.sink.restore(merge_states([start, *ends]) or start)


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
    # `! cd d`: its status is the other way round, so the state after it is both.
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
    assigned = walker.assigned
    walker.add(node, argv, [], extra or Extra(), findings)
    walker.assigned = assigned
    names = [w.partition("=")[0].removesuffix("+") for w in argv[1:] if not w.startswith("-")]
    letters = "".join(w[1:] for w in argv[1:] if w.startswith(("-", "+")) and "=" not in w)
    if argv and argv[0] in ("declare", "typeset", "local") and set(letters) & set("lunaAciI"):
        walker.sink.transformed.update(names)
    if node.type == "unset_command":
        walker.assigned = [(name, None) for name in names]
    else:
        # A name set by a word the reader did not take for an assignment
        # (`export "X=v"`) is not known.
        taken = {name for name, _ in walker.assigned}
        for word in argv[1:]:
            name, eq, _ = word.partition("=")
            name = name.removesuffix("+")
            if eq and not word.startswith("-") and name not in taken:
                walker.assigned.append((name, None))
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
