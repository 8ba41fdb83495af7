"""Codex ``.rules`` files (``prefix_rule``) → shellgate rules, read without running them.

The format (https://developers.openai.com/codex/rules and the execpolicy README,
https://github.com/openai/codex/blob/main/codex-rs/execpolicy/README.md) is
Starlark::

    prefix_rule(
        pattern = ["git", ["push", "fetch"]],   # argv prefix; a list is alternatives
        decision = "prompt",                    # allow | prompt | forbidden (default allow)
        justification = "…",
        match = [["git", "push", "origin"], "git fetch"],   # must match this rule
        not_match = ["git status"],                         # must not match it
    )

A rule matches a command whose argv starts with the pattern's tokens, and the
strictest matching decision wins (forbidden > prompt > allow): shellgate's
``git push *`` and strictest-wins say the same, so ``allow``/``prompt``/
``forbidden`` map to ``allow``/``ask``/``deny``, alternatives expand into one
pattern each (a regex past :data:`~.common.MAX_EXPANSION`), and the examples
become ``tests.csv`` rows.

Nothing in the file is executed. It is parsed with :func:`ast.parse` (Starlark's
call syntax is Python's) and only top-level ``prefix_rule(…)`` calls whose
arguments are literals are read, with :func:`ast.literal_eval`; any other
statement (``load``, an assignment, ``host_executable``, a call built from
variables) is a warning naming its line, and is not imported.
"""

from __future__ import annotations

import ast
import itertools
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shellgate.models import Effect
from shellgate.policy.importers.common import (
    MAX_EXPANSION,
    Example,
    Imported,
    SourceError,
    SourceRule,
    has_space,
    literal_regex,
    words_pattern,
)

DECISIONS: dict[str, Effect] = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
ARGUMENTS = ("pattern", "decision", "justification", "match", "not_match")
#: How many expansions of a rule's alternatives become derived test rows.
MAX_DERIVED = 8


#: Calls that define no decision (``host_executable`` names paths for a command).
HARMLESS_CALLS = ("host_executable", "load")


def read(file: Path, text: str) -> Imported:
    out = Imported("codex", file)
    try:
        module = ast.parse(text, filename=str(file))
    except SyntaxError as exc:
        raise SourceError(f"not a rules file this reader understands: {exc.msg}",
                          exc.lineno) from None
    unread: list[int] = []  # lines that may define a prompt or forbidden rule
    for stmt in module.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        name = (call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                else None)
        if name == "prefix_rule":
            assert isinstance(call, ast.Call)
            if not _prefix_rule(call, out):
                unread.append(stmt.lineno)
        elif name is not None:
            out.warn(stmt.lineno, f"{name}(…) is not imported: only prefix_rule is a command "
                     "rule shellgate can express")
            if name not in HARMLESS_CALLS:
                unread.append(stmt.lineno)
        else:
            out.warn(stmt.lineno, "not a prefix_rule(…) call with literal arguments: not read "
                     "(shellgate never runs a rules file), so any rule it defines is not "
                     "imported")
            if _may_add_rules(stmt):
                unread.append(stmt.lineno)
    if unread:
        _no_allows(out, unread)
    if not any(r.shell for r in out.rules):
        out.warn(None, "no prefix_rule in this file")
    return out


def _may_add_rules(stmt: ast.stmt) -> bool:
    """Whether running ``stmt`` could register a rule: it calls something (a def does not)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    return any(isinstance(node, ast.Call) for node in ast.walk(stmt))


def _no_allows(out: Imported, unread: list[int]) -> None:
    """Codex takes the strictest matching rule: a prompt or forbidden rule this reader
    could not read may refuse what a written allow would let through, so none is."""
    where = ", ".join(str(line) for line in unread)
    for rule in out.rules:
        if rule.shell and rule.write and rule.effect == "allow":
            rule.write = False
            rule.why_not = (f"the file has rules that cannot be read (line {where}) and may "
                            "forbid or prompt for what this allows")
            out.warn(rule.line, f"allow not imported: {rule.why_not}; Codex's strictest-wins "
                     "would refuse those commands, this allow alone would let them through")


def _arguments(call: ast.Call, out: Imported) -> dict[str, Any] | None:
    line = call.lineno
    if len(call.args) > 1 or any(isinstance(a, ast.Starred) for a in call.args):
        raise SourceError("prefix_rule takes its arguments by name", line)
    named: list[tuple[str | None, ast.expr]] = [(None, a) for a in call.args]
    named[:1] = [("pattern", a) for _, a in named[:1]]
    named += [(k.arg, k.value) for k in call.keywords]
    args: dict[str, Any] = {}
    for key, node in named:
        if key is None:
            out.warn(line, "prefix_rule(**…) is not literal: rule not imported")
            return None
        if key not in ARGUMENTS:
            raise SourceError(f"prefix_rule has no argument {key!r} (expected one of "
                              f"{', '.join(ARGUMENTS)})", line)
        try:
            args[key] = ast.literal_eval(node)
        except ValueError:
            out.warn(line, f"prefix_rule argument {key} is not a literal: rule not imported "
                     "(shellgate never runs a rules file)")
            return None
    return args


def _tokens(value: object, what: str, line: int) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise SourceError(f"{what} {value!r}: {exc}", line) from None
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise SourceError(f"{what} must be a string or a non-empty list of strings", line)


def _alternatives(pattern: object, line: int) -> list[tuple[str, ...]]:
    if not isinstance(pattern, list | tuple) or not pattern:
        raise SourceError("pattern must be a non-empty list of tokens", line)
    out: list[tuple[str, ...]] = []
    for element in pattern:
        if isinstance(element, str):
            out.append((element,))
        elif (isinstance(element, list | tuple) and element
              and all(isinstance(e, str) for e in element)):
            out.append(tuple(element))
        else:
            raise SourceError("each pattern element is a token or a non-empty list of "
                              "alternative tokens", line)
    return out


def _patterns(alts: list[tuple[str, ...]]) -> tuple[str, ...]:
    count = 1
    for options in alts:
        count *= len(options)
    if count <= MAX_EXPANSION:
        return tuple(words_pattern(words, prefix=True) for words in itertools.product(*alts))
    source = " ".join(literal_regex(options[0]) if len(options) == 1 else
                      "(?:" + "|".join(literal_regex(o) for o in options) + ")"
                      for options in alts)
    return ("re:" + source + "(?: .*)?",)


def _literal_allow(call: ast.Call) -> bool:
    """Whether a prefix_rule's decision is ``allow``, literally or by default."""
    for keyword in call.keywords:
        if keyword.arg == "decision":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value == "allow"
        if keyword.arg is None:  # **kwargs may carry any decision
            return False
    return True


def _prefix_rule(call: ast.Call, out: Imported) -> bool:
    """Read one prefix_rule; ``False`` when it is unread and may prompt or forbid."""
    line = call.lineno
    args = _arguments(call, out)
    if args is None:
        out.rules.append(SourceRule(line, "prefix_rule(…)", "deny", lambda _a: False,
                                    write=False, why_not="arguments are not literals",
                                    shell=False))
        return _literal_allow(call)
    if "pattern" not in args:
        raise SourceError("prefix_rule needs a pattern", line)
    alts = _alternatives(args["pattern"], line)
    decision = args.get("decision", "allow")
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise SourceError(f"decision {decision!r} must be allow, prompt or forbidden", line)
    effect = DECISIONS[decision]
    justification = args.get("justification", "")
    if not isinstance(justification, str):
        raise SourceError("justification must be a string", line)

    def matches(argv: Sequence[str]) -> bool:
        return len(argv) >= len(alts) and all(a in o for a, o in zip(argv, alts, strict=False))

    label = f"prefix_rule(pattern={args['pattern']!r}, decision={decision!r})"
    derived = tuple(itertools.islice(itertools.product(*alts), MAX_DERIVED))
    rule = SourceRule(line, label, effect, matches, patterns=_patterns(alts),
                      reason=justification, derived=derived)
    if any(has_space(t) for options in alts for t in options):
        problem = ("a token holds a space: shellgate matches the words after quote removal, "
                   "so the pattern also matches them as separate arguments")
        if effect == "allow":
            rule.write, rule.why_not = False, problem
            out.warn(line, f"{problem}; an allow that may match more than the source is not "
                     "imported")
        else:
            out.warn(line, problem)
    out.rules.append(rule)
    for key, must in (("match", True), ("not_match", False)):
        examples = args.get(key, [])
        if not isinstance(examples, list | tuple):
            raise SourceError(f"{key} must be a list of examples", line)
        for example in examples:
            argv = _tokens(example, f"{key} example", line)
            if matches(argv) != must:
                verb = "does not match" if must else "matches"
                raise SourceError(f"{key} example {example!r} {verb} the rule's pattern (Codex "
                                  "refuses this file too)", line)
            out.examples.append(Example(line, argv, f"{key} example of line {line}"))
    return True


__all__ = ["DECISIONS", "read"]
