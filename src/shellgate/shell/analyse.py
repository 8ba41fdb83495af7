"""``analyse``: every simple command a shell string will run, as frozen segments.

Evaluation order: parse with tree-sitter-bash → walk (segments drafted in source
order, substitutions before the command using them, nested payloads after) →
whole-command findings (control characters, parse errors, segment count) copied
onto every segment → freeze.

Invariants:

* Fail closed: whatever the analysis cannot prove is a finding on the segment it
  affects, and whole-command findings are on *every* segment, so the analysis
  layer turns them into ``ask`` wherever a rule would otherwise allow.
* Nothing is dropped to meet a bound: past ``max_segments`` every segment is still
  listed (deny rules see them all) and each carries the finding.
* A command with no simple command but a finding still yields one segment (the
  raw text), so the finding cannot vanish with an empty segment list.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Set

from tree_sitter import Node

from shellgate.models import Analysis, Segment, built
from shellgate.shell import catalog
from shellgate.shell.argv.spellings import respellings
from shellgate.shell.finish import assignment_findings, finish
from shellgate.shell.reader import _parser, misreads
from shellgate.shell.reader.drafts import Draft, Sink
from shellgate.shell.reader.heredoc_lexer import prepare
from shellgate.shell.reader.walker import PARSE_ERROR, Walker

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MAX_ERRORS_SHOWN = 3
_ROUGH_SPLIT = re.compile(r"[\n;&|()`{}]+|\$\(|<<<?-?|\bthen\b|\bdo\b")
_EMPTY_SUBSTITUTION = re.compile(r"\$\(\s*\)|`\s*`")
_COARSE_SPLIT = re.compile(r"[\n;&|]+")
_MAX_ROUGH_FORMS = 256
_MAX_ROUGH_WORDS = 256
_ESCAPED = re.compile(r"\\(.)", re.S)


def _parse_errors(
    root: Node, source: bytes, display: bytes, read: Set[int] = frozenset()
) -> list[str]:
    """Describe ERROR and MISSING nodes (iteratively: the tree can be deep), each by
    the line and column where it starts and an excerpt of what is written there
    (``source`` is what was parsed, heredoc bodies blanked; ``display`` as written).
    ERROR nodes the walker read as bash does (``read``: their offsets) are none."""
    found: list[str] = []
    stack = [root]
    while stack and len(found) < _MAX_ERRORS_SHOWN:
        node = stack.pop()
        if node.is_missing:
            where = _where(display, node.start_byte)
            found.append(f"parse error: missing '{node.type}' at {where}")
        elif node.type == "ERROR" and node.start_byte in read:
            continue
        elif node.type == "ERROR":
            start = node.start_byte
            blank = len(source[start : node.end_byte]) - len(source[start : node.end_byte].lstrip())
            start += blank  # past a blanked heredoc body: where the text is
            # A display excerpt: cut at 40 bytes, possibly mid-character, one line.
            cut = display[start : min(node.end_byte, start + 40)].split(b"\n", 1)[0]
            raw = cut.decode("utf-8", "replace")
            found.append(f"parse error at {_where(display, start)}: '{raw}'")
        elif node.has_error:
            stack.extend(reversed(node.children))
    return found if found or read else ["parse error"]


#: Builtins and tools that make no file but the writes the analysis sees (their
#: catalog entries declare every file they write; a link only `ln`/`cp -s`, which
#: the analysis follows). Any other program may make a directory a link.
_MAKE_NOTHING = frozenset(
    {"cd", "pushd", "popd", "dirs", "echo", "printf", "true", "false", ":", "test", "[",
     "[[", "pwd", "export", "unset", "set", "shopt", "local", "declare", "typeset",
     "readonly", "type", "wait", "exit", "return", "break", "continue", "shift",
     "ls", "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "nl", "grep", "egrep",
     "fgrep", "rg", "sed", "awk", "gawk", "mawk", "diff", "cmp", "file", "stat", "du", "df",
     "tree", "which", "basename", "dirname", "realpath", "readlink", "date", "uname",
     "whoami", "sleep", "jq", "touch", "mkdir", "rm", "rmdir", "chmod", "tee", "cp", "mv",
     "ln", "find"}
)  # fmt: skip


def _writes_into_unmade(drafts: list[Draft]) -> None:
    """A write into a directory that does not exist now, and that no command of
    the line visibly makes, lands where a program of the line makes it first — a
    link to anywhere, if it likes (``python mk.py; echo x > made/.bashrc``). When
    another command of the line runs a program (before it, or beside it in a
    pipeline), that is a finding; alone, the write fails as bash would report."""
    if not any(draft.unmade for draft in drafts):
        return
    for draft in drafts:
        if not draft.unmade:
            continue
        others = [d for d in drafts if d is not draft and d.argv]
        if all(d.argv[0] in _MAKE_NOTHING for d in others):
            continue
        target, directory = draft.unmade[0]
        draft.findings.append(
            f"writes '{target}' in '{directory}', which does not exist and no command of "
            "the line makes: another program of the line may make it a link to anywhere"
        )


def _globs_in_written_directories(drafts: list[Draft]) -> None:
    """A glob read in a directory another command of the line writes (``touch --
    -rf; rm *``, ``mkdir out && … && rm out/*``) cannot be known in advance: its
    words are what the directory holds when it runs. (Whatever writes it, before or
    after: a pipeline runs at once.) And where a command writes some of a glob's
    matches but not all (``cp *``: the last), which ones depends on their order,
    which is the locale's collation, not known here."""
    if not any(draft.globbed for draft in drafts):
        return
    for draft in drafts:
        if not draft.globbed:
            continue
        written = [w.path for other in drafts if other is not draft for w in other.writes]
        targets = {w.target for w in draft.writes}
        for directory, matches in draft.globbed:
            inside = directory.rstrip("/") + "/"
            if any(path == directory or path.startswith(inside) for path in written):
                draft.findings.append(
                    f"a glob is read in '{directory}', which this line writes: its matches "
                    "are not known in advance"
                )
                break
            if _order_matters(matches, targets):
                draft.findings.append(
                    f"writes some of the matches of a glob in '{directory}', and which "
                    "depends on their order, which is the locale's collation"
                )
                break


_NOT_COLLATED = re.compile(r"[\W_]+")


def _order_matters(matches: tuple[str, ...], targets: set[str]) -> bool:
    """Whether what a command writes may change with the order of a glob's matches
    (the analysis sorts them as the C locale does; bash sorts them by the locale's
    collation, which puts ``B`` after ``a`` and skips punctuation): the order is
    not the same under a case- and punctuation-blind comparison, and the command
    writes some of the matches but not all (``cp *``: the last) or a path below
    one. ``rm *``, ``sed -i … *.py`` and ``mv *`` (each match is a source, and the
    last is the directory it writes into) write them all."""
    if len(matches) < 2:
        return False
    keys = [_NOT_COLLATED.sub("", m).casefold() for m in sorted(matches)]
    if all(a < b for a, b in itertools.pairwise(keys)):
        return False  # every collation we know of sorts them the same way
    hit = targets.intersection(matches)
    into = any(t.startswith(m.rstrip("/") + "/") for t in targets for m in matches)
    return into or (bool(hit) and len(hit) < len(set(matches)))


def _where(display: bytes, offset: int) -> str:
    """``line L, column C (offset N)`` of a byte offset, for a person to find it."""
    line = display.count(b"\n", 0, offset) + 1
    column = offset - (display.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (offset {offset})"


def _rough_forms(command: str) -> tuple[list[tuple[str, ...]], bool]:
    """Whitespace-split words of every rough command piece (a parse failed), and
    whether they are all there (a bound cut none of the distinct pieces)."""
    forms: dict[tuple[str, ...], None] = {}
    # Split finely (a `{`, `(` or backtick may start a command) and coarsely
    # (`a#{` may be one word): deny rules should see either reading. Repeats are
    # dropped before the bound, so padding cannot push the last command out.
    split = [*_ROUGH_SPLIT.split(command), *_COARSE_SPLIT.split(command)]
    if "`" in command or "$(" in command:  # r``m and r$()m are rm
        split += _COARSE_SPLIT.split(_EMPTY_SUBSTITUTION.sub("", command))
    distinct = list(dict.fromkeys(piece.strip() for piece in split))
    complete = len(distinct) <= _MAX_ROUGH_FORMS
    pieces = distinct[:_MAX_ROUGH_FORMS]
    for piece in pieces:
        # Bounded per piece too: each word can have several readings.
        words = tuple(piece.replace("'", "").replace('"', "").split()[:_MAX_ROUGH_WORDS])
        if words:
            forms[words] = None
            for other in respellings(words):  # and respell those: {kill,-9,-01}
                forms[other] = None
                forms.update(dict.fromkeys(respellings(other)))
            # As bash reads backslashes: each quotes the next byte; a last one stays.
            forms[tuple(_ESCAPED.sub(r"\1", w) for w in words)] = None
        if len(forms) >= _MAX_ROUGH_FORMS:
            complete = complete and piece == pieces[-1]
            break
    for form in list(forms)[:_MAX_ROUGH_FORMS]:
        reading = catalog.read(form)  # its own deny-side spellings: kill -9 -- -1
        if reading is not None:
            forms.update(dict.fromkeys(reading.forms))
    return list(forms)[:_MAX_ROUGH_FORMS], complete


def _freeze(draft: Draft, whole: tuple[str, ...]) -> Segment:
    # Built without validation: every value here is one this package made with the
    # right type (mypy-checked); it keeps 100 KB commands inside their time budget.
    return built(
        Segment,
        text=draft.text,
        argv=draft.argv,
        forms=tuple(draft.forms) if draft.forms else ((draft.argv,) if draft.argv else ()),
        assignments=tuple(draft.assignments),
        redirects=tuple(draft.redirects),
        context=draft.context,
        findings=tuple(dict.fromkeys((*draft.findings, *whole)))
        if whole
        else tuple(draft.findings),
        writes=tuple(draft.writes),
        canonical=tuple(draft.canonical),
        cwd=draft.cwd,
        repositories=tuple(draft.repositories),
        mentions=tuple(dict.fromkeys(draft.mentions)),
        reads=tuple(draft.reads),
        via=draft.via,
        via_at=draft.via_at,
        fragment=PARSE_ERROR in draft.context,
    )


#: Commands up to this size are remembered (agents repeat `git status`, `pytest -q`).
_CACHED_CHARS = 4096


#: The environment variables the analysis expands (``PWD`` is the directory).
FIXED_VARIABLES = ("HOME", "USER", "TMPDIR", "PATH")
_CACHE_SIZE = 1024
_cache: OrderedDict[tuple[object, ...], Analysis] = OrderedDict()
_cache_lock = threading.Lock()


def analyse(
    command: str,
    *,
    workdir: str = "/",
    workspace: str | None = None,
    max_segments: int = 64,
    max_depth: int = 16,
    max_nodes: int = 10_000,
    env: Mapping[str, str] | None = None,
    exported: Callable[[str], bool] | None = None,
) -> Analysis:
    """Analyse ``command`` as bash would run it from ``workdir`` (never executes it).

    ``workspace`` (default: ``workdir``) is where ``source`` files are named from.
    A function of its arguments, of the environment the command will see (``env``,
    by default this process's: ``HOME``, ``USER``, ``TMPDIR``, ``PATH`` — ``$HOME``
    and ``~`` are expanded with them; a name missing there is unknown), of which
    names that environment exports (``exported``, by default this process's: a bare
    assignment to one is a finding) and, for a glob, of the file system. The answers for
    short commands that read no file system are kept in an LRU cache of 1,024:
    the result is a frozen model, shared as is.
    """
    source_env = os.environ if env is None else env
    fixed = tuple(source_env.get(name) for name in FIXED_VARIABLES)
    space = workspace if workspace is not None else workdir
    key = (command, workdir, space, max_segments, max_depth, max_nodes, fixed)
    if len(command) <= _CACHED_CHARS:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    analysis, cacheable = _analyse(command, workdir, space, fixed, max_segments, max_depth,
                                   max_nodes, exported)  # fmt: skip
    if cacheable and len(command) <= _CACHED_CHARS:
        with _cache_lock:
            _cache[key] = analysis
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return analysis


def _analyse(
    command: str,
    workdir: str,
    workspace: str,
    env: tuple[str | None, ...],
    max_segments: int,
    max_depth: int,
    max_nodes: int,
    exported: Callable[[str], bool] | None = None,
) -> tuple[Analysis, bool]:
    """The analysis itself (see :func:`analyse`), and whether it may be cached (it
    read no file system).

    ``max_nodes`` bounds the work: the walk costs about 7 µs per syntax node, so a
    tree larger than that is refused right after parsing (``Analysis.refused``)
    instead of being read for hundreds of milliseconds. Heredoc bodies are one
    node each, so a large file written through a heredoc stays well inside it.
    """
    sink = Sink(
        workdir=workdir, max_depth=max_depth, finish=finish,
        assignment_findings=assignment_findings, max_nodes=max_nodes, cwd=workdir,
        workspace=workspace,
        env={n: value for n, value in zip(FIXED_VARIABLES, env, strict=True) if value is not None},
    )  # fmt: skip
    if exported is not None:
        sink.exported = exported
    analysis = _read(command, sink, max_segments, max_nodes)
    return analysis, not (sink.fs or sink.environ_read)


def _read(command: str, sink: Sink, max_segments: int, max_nodes: int) -> Analysis:
    source = command.encode("utf-8", "surrogatepass")
    control = _CONTROL.search(command)
    if control is not None:
        sink.note(
            f"control character U+{ord(control.group()):04X} at offset {control.start()} "
            "(a shell may read it differently)"
        )
    source = misreads.closed(source)
    display = source
    source, heredocs = prepare(source)
    root = _parser.parse(source)
    nodes = root.descendant_count
    if nodes > max_nodes:
        why = (
            f"command has {nodes} syntax nodes, over the {max_nodes}-node analysis limit; "
            "write long scripts to a file and run the file"
        )
        raw = Segment(text=command[:200], argv=(), findings=(why,))
        return Analysis(command=command, segments=(raw,), findings=(why,), refused=why)
    try:
        Walker(source, sink, (), 0, heredocs=heredocs, display=display).run(root)
    except RecursionError:
        sink.note("command nested too deeply to analyse")
    if root.has_error:
        for finding in _parse_errors(root, source, display, sink.read_errors):
            sink.note(finding)
    if sink.refused is not None:
        why = sink.refused
        raw = Segment(text=command[:200], argv=(), findings=(why,))
        return Analysis(command=command, segments=(raw,), findings=(why,), refused=why)
    drafts = sink.drafts
    _globs_in_written_directories(drafts)
    _writes_into_unmade(drafts)
    if len(drafts) > max_segments:
        sink.note(f"command has {len(drafts)} simple commands, over the limit of {max_segments}")
    whole = tuple(sink.findings)
    frozen: dict[int, Segment] = {}  # a replayed draft is one object: freeze it once
    segments = [frozen.get(id(d)) or frozen.setdefault(id(d), _freeze(d, whole)) for d in drafts]
    if sink.unresolved:
        # A misreading the re-read could not fix can hide later commands from the
        # tree: one more segment carries every line, split at blanks and at
        # ; & | ( ) `, as forms, so deny rules still see what bash may run. Its argv
        # is the first piece (rule layers skip an empty argv); the finding asks. (A
        # line that does not parse gets no such segment: it asks, naming the error,
        # and no rule is matched against its pieces.)
        forms, complete = _rough_forms(command)
        if sink.unresolved and not complete:
            # Misread, not re-read, and too many distinct pieces for the rough
            # forms: deny rules could miss a command, so it is refused outright.
            why = (
                "command is misread by the parser in too many places to read every "
                "command in it; write long scripts to a file and run the file"
            )
            raw = Segment(text=command[:200], argv=(), findings=(why,))
            return Analysis(command=command, segments=(raw,), findings=(why,), refused=why)
        if forms:
            segments.append(
                Segment.model_construct(
                    text=command,
                    argv=forms[0],
                    forms=tuple(forms),
                    assignments=(),
                    redirects=(),
                    context=(),
                    findings=whole,
                    writes=(),
                )
            )
        elif not segments:
            segments.append(Segment(text=command, argv=(), findings=whole))
    elif not segments and whole:
        words = tuple(command.split())
        segments.append(
            Segment(text=command, argv=(), forms=((), words) if words else (), findings=whole)
        )
    # Built here from frozen segments and strings: no re-validation (a command with
    # many readings spent ~20 ms re-checking every form's type).
    return Analysis.model_construct(
        command=command, segments=tuple(segments), findings=whole, refused=None
    )
