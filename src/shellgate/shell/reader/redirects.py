"""Redirections: their target after quote removal, and whether they write a file.

``is_write`` is True for every output redirection except to ``/dev/null`` (and the
standard streams' own device names) and fd duplication (``2>&1``, ``>&-``).
Here-string and heredoc contents are kept aside: when the command reading them
is a shell, the walker parses them as the script they are.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from shellgate.models import Redirect
from shellgate.shell.reader._parser import SKIP, text
from shellgate.shell.reader.drafts import Extra
from shellgate.shell.reader.heredoc_lexer import Heredoc
from shellgate.shell.reader.heredocs import (
    backtick_spans,
    bash_body_end,
    bash_delimiter,
    quoted_body_end,
)
from shellgate.shell.reader.walking import Walking
from shellgate.shell.reader.words import group_words

REDIRECT_TYPES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_NOT_FILES = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"}
)
_MAX_SPAN_FINDINGS = 16
_MAX_SPANS = 256
_HEREDOC_PARTS = frozenset({"heredoc_start", "heredoc_body", "heredoc_end"})


def _is_write(op: str, target: str) -> bool:
    if target in _NOT_FILES:
        return False
    if op in _WRITE_OPS:
        return True
    # ``>&word`` with a word that is not a descriptor sends stdout and stderr to a file.
    return op == ">&" and not (target.isdigit() or target == "-")


def read_redirect(walker: Walking, node: Node, out: Extra, pending: list[Node]) -> None:
    """Add one redirection node's :class:`Redirect` and findings to ``out``.

    Commands tree-sitter hangs inside a heredoc redirection (``cat <<EOF | sh``,
    ``<<EOF && rm x``) go to ``pending`` for the caller to walk after this command.
    """
    source = walker.source
    fd: int | None = None
    op = ""
    op_at = -1
    targets: list[Node] = []
    for child in node.children:
        kind = child.type
        if kind == "file_descriptor":
            raw = text(source, child.start_byte, child.end_byte)
            fd = int(raw) if raw.isdigit() else None
        elif not child.is_named:
            if not op:
                op, op_at = kind, child.start_byte
        elif kind == "ERROR":
            if op == "<" and text(source, child.start_byte, child.end_byte) == ">":
                op = "<>"  # tree-sitter-bash 0.25 splits `N<>` into `<` and an error
            walker.sink.note(f"parse error in redirection '{walker.short(node)}'")
        elif kind in _HEREDOC_PARTS:
            continue
        elif node.type == "heredoc_redirect" and kind in REDIRECT_TYPES:
            # tree-sitter hangs the redirections after `<<EOF` inside the heredoc
            # node (`cat <<EOF > f`): they are the command's own, as for bash.
            read_redirect(walker, child, out, pending)
        elif node.type == "heredoc_redirect":
            pending.append(child)
        else:
            targets.append(child)
    if node.type == "heredoc_redirect":
        _heredoc(walker, node, op, fd, out)
        return
    findings: list[str] = []
    groups = group_words(source, targets, findings)
    # tree-sitter hangs the words after a redirection's target on the redirection
    # (`cmd > f x y`); bash takes one word as the target and the rest are the
    # command's arguments.
    values = [walker.words.read(group, findings).value for group in groups]
    out.arguments.extend(values[1:])
    lexed = walker.heredocs.get(op_at) if op == "<" else None
    if lexed is not None:
        out.findings.extend(findings)
        _lexed_heredoc(walker, lexed, fd, out)
        return
    target = values[0] if values else ""
    if node.type == "herestring_redirect":
        # A here-string is data; its expansions matter only if a shell reads it,
        # and then the shell-on-stdin finding already asks.
        out.redirects.append(Redirect(op=op or "<<<", fd=fd, target=target))
        out.stdin_texts.append(target)
        return
    if target.startswith(("/dev/tcp/", "/dev/udp/")):
        # bash opens a socket itself for these names, in either direction, on any fd.
        findings.append(f"network access through {target[:8]} ('{target[:60]}')")
    write = _is_write(op, target)
    out.findings.extend(findings)
    out.redirects.append(Redirect(op=op, fd=fd, target=target, is_write=write))


def _heredoc(walker: Walking, node: Node, op: str, fd: int | None, out: Extra) -> None:
    source = walker.source
    start = node.child_by_field_name("start") or next(
        (c for c in node.children if c.type == "heredoc_start"), None
    )
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    delimiter = text(source, start.start_byte, start.end_byte) if start is not None else ""
    quoted = any(q in delimiter for q in "'\"\\")
    content = text(source, body.start_byte, body.end_byte) if body is not None else ""
    plain = bash_delimiter(delimiter)
    if body is not None and not quoted:
        # Unquoted delimiter: substitutions in the body run when the heredoc is read.
        walker.scan(body, "heredoc body")
        content = _unquoted_body(walker, content, plain, op == "<<-", out)
    elif body is not None:
        # bash ends the body at the first line equal to the delimiter after quote
        # removal (`E''OF`, `$'EOF'` end at `EOF`); tree-sitter waits for the
        # delimiter as written, so the lines in between would be read as data.
        end = quoted_body_end(content, plain, op == "<<-")
        if end is not None:
            why = f"heredoc delimiter {delimiter[:30]} ends the body at '{plain[:30]}' for bash"
            content = _cut_body(walker, content, end, why, out)
    out.redirects.append(Redirect(op=op or "<<", fd=fd, target=plain))
    out.stdin_texts.append(content if quoted else expanded_body(walker, content))


def _lexed_heredoc(walker: Walking, heredoc: Heredoc, fd: int | None, out: Extra) -> None:
    """A heredoc the lexer read (:mod:`heredoc_lexer`): its body is the command's
    input; an unquoted one's substitutions run when bash reads it."""
    if heredoc.joined_end:
        out.findings.append(
            f"heredoc delimiter '{heredoc.delimiter[:30]}' joined by backslash-newline ends "
            "the body early; the lines after it run as commands"
        )
    if not heredoc.quoted:
        walker.heredoc_body(heredoc.body)
        backticks(walker, heredoc.body, out)
    out.redirects.append(Redirect(op=heredoc.op, fd=fd, target=heredoc.delimiter))
    out.stdin_texts.append(heredoc.body if heredoc.quoted else expanded_body(walker, heredoc.body))


#: Marks a heredoc body bash expands into text the analysis cannot know (a NUL,
#: which the input guard never admits in a command): a program that runs it as
#: code runs what no one read.
UNKNOWN_BODY = "\x00"
_NAMED = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def expanded_body(walker: Walking, body: str) -> str:
    """An unquoted heredoc's body as bash hands it to the command: ``\\``,
    ``\\$``, ``\\``` and backslash-newline unescaped, ``$NAME``/``${NAME}`` of a
    variable the analysis knows expanded. Any other expansion (``$(…)``,
    backticks, ``${X:-…}``, an unknown variable) makes it :data:`UNKNOWN_BODY`
    followed by the body as written (``os.sys${X}tem`` is ``os.system`` when X
    is empty)."""
    if "$" not in body and "`" not in body and "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and body[i + 1 : i + 2] in ("$", "`", "\\", "\n"):
            out.append("" if body[i + 1] == "\n" else body[i + 1])
            i += 2
            continue
        if char == "`":
            return UNKNOWN_BODY + body
        if char == "$":
            named = _NAMED.match(body, i)
            if named is not None:
                name = named.group(1) or named.group(2)
                value = None if walker.opaque else walker.sink.value(name, quoted=True)
                if value is None:
                    return UNKNOWN_BODY + body
                out.append(value)
                i = named.end()
                continue
            after = body[i + 1 : i + 2]
            if after and (after in "({[_@*#?-$!" or after.isalnum()):
                return UNKNOWN_BODY + body
        out.append(char)
        i += 1
    return "".join(out)


def _cut_body(walker: Walking, content: str, end: int, why: str, out: Extra) -> str:
    """The body bash reads (up to ``end``); what follows is read as commands."""
    out.findings.append(f"{why}; the lines after it run as commands")
    walker.payload("after a heredoc bash ends early", content[end:])
    return content[:end]


def _unquoted_body(walker: Walking, content: str, delimiter: str, dash: bool, out: Extra) -> str:
    """What tree-sitter misses in an unquoted body; returns the body bash really reads."""
    end = bash_body_end(content, delimiter, dash)
    if end is not None:
        why = f"heredoc delimiter '{delimiter}' joined by backslash-newline ends the body early"
        content = _cut_body(walker, content, end, why, out)
    backticks(walker, content, out)
    return content


def backticks(walker: Walking, content: str, out: Extra) -> None:
    """Backtick substitutions in an unquoted heredoc body (tree-sitter leaves them as
    text; bash runs them): each a finding and a payload parsed as commands."""
    if "`" in content:
        spans = list(dict.fromkeys(backtick_spans(content)))
        for span in spans[:_MAX_SPAN_FINDINGS]:
            out.findings.append(f"command substitution `{span[:40]}` in a heredoc body")
        # Many spans are read as one script (one parse, every command still seen).
        if len(spans) > _MAX_SPANS:
            # Past this, walking them would outrun the time budget: ask, do not read.
            walker.sink.note(
                f"{len(spans)} backtick substitutions in a heredoc body; only the first "
                f"{_MAX_SPANS} were read"
            )
            spans = spans[:_MAX_SPANS]
        sources = spans if len(spans) <= _MAX_SPAN_FINDINGS else ["\n".join(spans)]
        for source in sources:
            walker.payload("command substitution (heredoc body)", source)


def printed(
    node: Node, source: bytes, heredocs: dict[int, Heredoc], cwd: str | None
) -> str | None:
    """What the command substitution ``node`` prints, where that is known: ``$(pwd)``
    the current directory (``cwd``, ``None`` when unsure), ``$(cat <<'EOF' … EOF)``
    a quoted heredoc's body; ``None`` for anything else."""
    inner = [c for c in node.children if c.is_named and c.type not in SKIP]
    if len(inner) != 1:
        return None
    statement = inner[0]
    command = statement if statement.type == "command" else None
    redirects: list[Node] = []
    if statement.type == "redirected_statement":
        command = statement.child_by_field_name("body")
        redirects = [c for c in statement.children if c.type in REDIRECT_TYPES]
    if command is None or command.type != "command":
        return None
    words = [text(source, c.start_byte, c.end_byte) for c in command.children]
    if words == ["pwd"] and not redirects:
        return cwd
    if words == ["cat"] and len(redirects) == 1:
        op = next((c for c in redirects[0].children if c.type == "<"), None)
        heredoc = heredocs.get(op.start_byte) if op is not None else None
        if heredoc is not None and heredoc.quoted and len(redirects[0].children) == 2:
            return heredoc.body
    return None
