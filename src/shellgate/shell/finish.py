"""Complete a drafted segment: normalised forms, command findings, writes, ``cd``.

Runs once per simple command, right after its words are read, so the ``cd``
state it updates is the one the *next* command of the same list sees. What
depends on the argv alone (forms, command findings, payloads, write operands)
is a pure function, cached: agent commands repeat the same few argvs a lot.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from shellgate.models import Write
from shellgate.shell import catalog
from shellgate.shell.argv.spellings import resolve, resolved_operands, respellings
from shellgate.shell.catalog.entry import Reading
from shellgate.shell.catalog.environment import (
    SAFE_ASSIGNMENTS,
    check_subscript,
    is_identifier,
    is_sensitive_name,
)
from shellgate.shell.catalog.inline_code import read_code
from shellgate.shell.forms import read_argv
from shellgate.shell.reader.drafts import Argv, Draft, Nested, Sink
from shellgate.shell.reader.redirects import UNKNOWN_BODY

_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})
#: ``~+``, ``~-``, ``~N``, ``~+N``, ``~-N``: bash's directory tildes.
_DIRECTORY_TILDE = re.compile(r"~(?:[+-][0-9]*|[0-9]+)(?:/|$)")


def assignment_findings(name: str) -> list[str]:
    """The finding an assignment to ``name`` raises (none for a known-safe name)."""
    if name in SAFE_ASSIGNMENTS:
        return []
    return [f"assignment to '{name}' (not on the known-safe list)"]


def shell_variable_findings(name: str, sink: Sink) -> list[str]:
    """The finding a bare ``NAME=value`` raises. It sets a shell variable, which no
    program sees unless it is exported: none for a plain name that is not
    sensitive (``catalog/environment.py``) and not in the environment the command
    gets; ``export NAME`` later is a finding of its own (``compound.declaration``),
    as ``set -a`` is (``builtins._set``)."""
    if name in SAFE_ASSIGNMENTS:
        return []
    if not is_identifier(name) or is_sensitive_name(name):
        return assignment_findings(name)
    sink.environ_read = True
    if sink.exported(name):
        return [f"assignment to '{name}', which the environment exports (every later "
                "command gets the new value)"]  # fmt: skip
    return []


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def finish(draft: Draft, sink: Sink, stdin_texts: Sequence[str]) -> list[Nested]:
    """Fill ``draft.forms``, ``findings``, ``writes`` and ``canonical``; return the
    shell strings to parse and the programs the command runs (each its own segment)."""
    findings = draft.findings
    for name, _ in draft.assignments:
        # With no command it sets shell variables; a prefix sets the command's environment.
        bare = not draft.argv
        findings.extend(shell_variable_findings(name, sink) if bare else assignment_findings(name))
    payloads: list[Nested] = []
    for name, value in draft.assignments:
        if name in _PROMPTS and value:
            # bash expands these (substitutions included) when it prints them.
            payloads.append(("prompt string", value))
        elif "[" in value and ("$(" in value or "`" in value):
            # x='a[$(cmd)]'; $((x)): arithmetic on x later evaluates the subscript.
            later = Reading()
            check_subscript(value, f"value of {name}", later)
            findings.extend(later.findings)
            payloads.extend(later.payloads)
    operands: tuple[tuple[str, str], ...] = ()
    links: tuple[tuple[str, str, bool], ...] = ()
    if draft.argv:
        read = read_argv(draft.argv)
        forms, operands, links = read.forms, read.writes, read.links
        draft.repositories = [
            _through_links(resolve(where, place), sink.links)
            for place in (sink.places() or (sink.cwd,)) for where in read.repositories
        ]  # fmt: skip
        if read.repositories and not sink.cwd_known:
            findings.append(
                "runs git in a directory a 'cd' made unknown (its repository is not known)"
            )
        draft.forms = list(forms)
        draft.canonical = list(read.canonical)
        known = set(forms)
        for reading in draft.readings:  # `"$x"rm -rf /` while x is empty: rm
            for form in read_argv(reading).forms:
                if form not in known:
                    known.add(form)
                    draft.forms.append(form)
        findings.extend(read.findings)
        payloads.extend(read.payloads)
        payloads.extend(read.programs)
        if read.stdin_shell:
            payloads.extend(("stdin script", content.removeprefix(UNKNOWN_BODY))
                            for content in stdin_texts if content)  # fmt: skip
        draft.mentions = list(read.mentions)
        draft.reads = list(read.reads)
        if read.stdin_code is not None:
            _stdin_code(draft, read.stdin_code, stdin_texts, findings)
        draft.output = list(stdin_texts) if read.echoes_stdin and stdin_texts else None
        places = [place for place in sink.places() if place != sink.workdir]
        if places and operands:
            # After a `cd`, a relative operand names another file than the rule expects
            # (the argv's readings and the other readings of it: a glob as written).
            for form, place in [(f, p) for f in list(draft.forms) for p in places]:
                entry = catalog.lookup(form[0]) if form else None
                if entry is not None and entry.cwd_operands:
                    resolved = resolved_operands(form, place, entry.path_keys)
                    if resolved is not None:
                        homed = _home_relative(resolved)
                        for other in (resolved, *respellings(resolved), *homed):
                            if other not in draft.forms:
                                draft.forms.append(other)
    if draft.argv and read.sourced is not None:
        _source(draft, sink, read.sourced, findings)
    _writes(draft, sink, operands)
    _links(sink, links)
    draft.cwd = sink.cwd if sink.cwd_sure else ""  # before its own cd moves the shell
    _track_cd(draft, sink)
    _forget_set_names(draft, sink)
    _globbing(draft, sink)
    # Keep order, drop repeats: one construct seen through several forms is one finding.
    draft.findings = list(dict.fromkeys(findings))
    return list(dict.fromkeys(payloads))


def _source(draft: Draft, sink: Sink, file: str, findings: list[str]) -> None:
    """``source FILE`` and ``. FILE`` are one segment, ``source PATH ARGS``: PATH is
    the file resolved after any ``cd`` (relative to the workspace when inside it),
    so a rule names it (``source .venv/bin/activate``). A file the same line writes
    is not trusted; one without a ``/`` is looked up on ``PATH`` first."""
    if not file:
        findings.append(f"'{draft.argv[0]}' without a file")
        return
    if "/" not in file:
        findings.append(f"'{draft.argv[0]} {file[:40]}' looks the file up on PATH first")
        return
    expanded = _expand_tilde(file, sink.home()) if file.startswith("~") else file
    if expanded is None or (not file.startswith(("/", "~")) and not sink.cwd_sure):
        findings.append(f"'{draft.argv[0]} {file[:40]}' names a file the analysis cannot place")
        return
    path = _through_links(resolve(expanded, sink.cwd), sink.links)
    if path in sink.written:
        findings.append(f"sources '{file[:40]}', which this line writes")
    inside = sink.workspace.rstrip("/") + "/"
    shown = path[len(inside) :] if path.startswith(inside) else path
    argv = ("source", shown, *draft.argv[2:])
    if argv != draft.argv:
        draft.forms = [argv, *draft.forms]
        draft.argv = argv


def _stdin_code(
    draft: Draft, language: str, stdin_texts: Sequence[str], findings: list[str]
) -> None:
    """Code read from stdin: a known body is read as the language's code (the
    program's own, covered by its allow); an unknown one cannot be read."""
    name = draft.argv[0]
    if not stdin_texts:
        findings.append(f"'{name}' reads code from stdin the analysis cannot see")
        return
    for text in stdin_texts:
        if text.startswith(UNKNOWN_BODY):
            findings.append(
                f"'{name}' stdin code is a heredoc body bash expands ($…, backticks) into "
                "text the analysis cannot know"
            )
            text = text[len(UNKNOWN_BODY) :]
        code = read_code(language, text, f"'{name}' stdin")
        findings.extend(code.findings)
        draft.mentions.extend(code.mentions)


def _writes(draft: Draft, sink: Sink, operands: Sequence[tuple[str, str]]) -> None:
    """Every file the draft writes, as :class:`~shellgate.models.Write` values.

    A target is read from the segment's directory; a leading ``~`` or ``$HOME``
    is read both as the home directory and as written (quoting is gone by now,
    and bash expands only an unquoted one), so protected paths and the rules see
    either. A target through a name the line made (``ln``) is what it names.
    """
    targets = [(r.target, f"redirection '{r.op}'") for r in draft.redirects if r.is_write]
    targets.extend(operands)
    if not targets:
        return
    writes: dict[str, Write] = {}
    home = sink.home()
    for target, how in dict.fromkeys(targets):
        paths: list[str] = []
        prefix = _home_prefix(target)
        if prefix and home:
            paths.append(resolve(home + target[len(prefix) :], sink.cwd))
        if _DIRECTORY_TILDE.match(target):
            # ~+ is $PWD, ~- is $OLDPWD, ~N / ~+N / ~-N the directory stack.
            if (target == "~+" or target.startswith("~+/")) and sink.cwd_sure:
                paths.append(resolve(sink.cwd + target[2:], sink.cwd))
            else:
                draft.findings.append(
                    f"write target '{target}' names a directory the shell was in "
                    "(~+, ~-, ~N: $PWD, $OLDPWD, the directory stack)"
                )
        elif target.startswith("~"):
            expanded = _expand_tilde(target, home)
            if expanded is None:
                draft.findings.append(f"write target '{target}' uses ~ where HOME is not known")
            elif expanded != target:
                paths.append(resolve(expanded, sink.cwd))
        elif not target.startswith("/") and not sink.cwd_known:
            draft.findings.append(
                f"write target '{target}' is relative to a directory a 'cd' made unknown"
            )
        paths.append(resolve(target, sink.cwd))
        if not target.startswith(("/", "~", "$")):
            # After a `cd` that may have failed or not run: wherever the shell may be.
            paths.extend(resolve(target, place) for place in sink.alts)
        for path in paths:
            path = _through_links(path, sink.links)
            writes.setdefault(path, Write(path=path, target=target, how=how))
            # (`mkdir -p a/b` makes its own parents, and makes nothing but directories.)
            unmade = None if draft.argv[:1] == ("mkdir",) else _unmade_directory(path, sink)
            if unmade is not None:
                draft.unmade.append((target, unmade))  # analyse._writes_into_unmade
    draft.writes = list(writes.values())
    sink.written.update(writes)


def _unmade_directory(path: str, sink: Sink) -> str | None:
    """The directory above ``path`` that does not exist now and that no earlier
    command of the line visibly makes (``mkdir``, ``cp``, ``ln``…), or ``None``.
    Writing there works only if a program the analysis cannot see into makes it
    first — as a link to anywhere, if it likes: where the write lands is then not
    known. (Not checked when the analysis's own workdir does not exist: a
    hypothetical directory, as ``shellgate check --workdir`` may name.)"""
    missing = None
    directory = os.path.dirname(path)
    sink.fs = True
    while directory not in ("", "/") and not os.path.lexists(directory):
        missing, directory = directory, os.path.dirname(directory)
    if missing is None or not os.path.isdir(sink.workdir):
        return None
    inside = missing + "/"
    if any(w == missing or w.startswith(inside) for w in sink.written):
        return None
    return missing


#: Links followed one after another before a path is taken as it stands.
_MAX_LINK_HOPS = 16


def _through_links(path: str, links: dict[str, str]) -> str:
    """``path`` read through the names the line made (``ln -s ~ h``: ``h/x`` is ``~/x``)."""
    for _ in range(_MAX_LINK_HOPS):
        for link, named in links.items():
            if _inside(path, link):
                path = named + path[len(link) :]
                break
        else:
            return path
    return path


def _links(sink: Sink, links: Sequence[tuple[str, str, bool]]) -> None:
    """Remember the names a command made, for the writes of later commands."""
    for (link, target, symbolic), place in [
        (item, place) for item in links for place in (sink.places() or (sink.cwd,))
    ]:
        where = resolve(link, place)
        # bash expands an unquoted leading ~ before ln sees it; a quoted one is rare
        # and the expanded reading is the stricter one for later writes.
        target = os.path.expanduser(target)
        if symbolic and not target.startswith("/"):
            # A symlink's relative target is read from the link's own directory.
            named = resolve(target, os.path.dirname(where))
        else:
            named = resolve(target, place)
        if named != where:
            sink.links[where] = _through_links(named, sink.links)


def _home_prefix(target: str) -> str:
    for prefix in ("$HOME", "${HOME}"):
        if target == prefix or target.startswith(prefix + "/"):
            return prefix
    return ""


def _home() -> str:
    """This process's home directory ("" if it is unset or the root)."""
    home = os.path.expanduser("~")
    return "" if home in ("~", "/") else home.rstrip("/")


def _expand_tilde(word: str, home: str | None) -> str | None:
    """``~`` and ``~/…`` with the line's ``HOME`` (``None``: it changed to something
    unknown), ``~user/…`` with the password database, as bash expands them."""
    if word == "~" or word.startswith("~/"):
        return None if home is None else home + word[1:]
    return os.path.expanduser(word)


def _home_relative(form: Argv) -> list[Argv]:
    """``rm -rf /home/agent`` (after ``cd``) also as ``rm -rf ~``: rules name ``~``."""
    home = _home()
    if not home:
        return []
    words = [
        "~" + word[len(home) :] if word == home or word.startswith(home + "/") else word
        for word in form
    ]
    return [tuple(words)] if tuple(words) != form else []


def _track_cd(draft: Draft, sink: Sink) -> None:
    """Move the shell where a ``cd`` (``pushd``, ``popd``) goes, and tell the walker
    how it may end (``Sink.cd_fail``): it surely succeeds only into a directory
    that is there now, searchable, and that nothing earlier in the line wrote
    (made, moved, removed); otherwise bash stays where it was, and the commands
    after it that run either way may run there."""
    if not draft.argv:
        return
    for form in draft.forms:
        reading = catalog.read(form) if form else None
        if reading is None or reading.chdir is None:
            continue  # the catalog says which commands move the shell (cd, pushd, popd)
        before = (sink.cwd, sink.cwd_known, sink.alts)
        sink.cd_fail = before
        target = reading.chdir
        if not target or draft.findings:
            sink.cwd_known, sink.alts = False, ()
            return
        home = sink.home()
        if home and (target == "~" or target.startswith("~/")):
            target = home + target[1:]  # bash expands ~ with HOME, as writes do here
        if target == "-" or target.startswith("~"):
            sink.cwd_known, sink.alts = False, ()
            return
        places = [resolve(target, place) for place in sink.places() or (sink.cwd,)]
        sink.cwd = places[0]
        sink.alts = tuple(dict.fromkeys(p for p in places[1:] if p != places[0]))
        if sink.cwd_known and all(_surely_enters(place, sink) for place in places):
            sink.cd_fail = None
        return


#: Builtins that set the variables they name (``read X``, ``printf -v X``…).
_SETTERS = frozenset({"read", "mapfile", "readarray", "getopts", "wait", "let", "export",
                      "readonly", "declare", "typeset", "local", "unset"})  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _forget_set_names(draft: Draft, sink: Sink) -> None:
    """A variable a builtin sets (``read X``, ``printf -v X``, ``getopts o X``,
    ``let X=1``, ``X=v export X``, which keeps ``v``) holds what the line cannot
    know: later words that expand it are findings. (A literal ``export X=v`` is
    committed after this, by the walker.)"""
    for form in draft.forms[:4]:
        if not form:
            continue
        words: list[str] = []
        if form[0] == "printf":
            words = [w[2:] or (form[i + 2] if i + 2 < len(form) else "")
                     for i, w in enumerate(form[1:]) if w.startswith("-v")]  # fmt: skip
        elif form[0] in _SETTERS:
            words = list(form[1:])
            words.extend(name for name, _ in draft.assignments)
        for word in words:
            name = word.partition("=")[0].removesuffix("+").partition("[")[0]
            if _NAME.fullmatch(name):
                sink.vars[name] = None


#: Shell options later globs (and a pipeline's last command) are read with.
_GLOBBING = frozenset({"nocaseglob", "globstar", "nullglob", "dotglob", "lastpipe"})


def _globbing(draft: Draft, sink: Sink) -> None:
    """``shopt -s|-u nocaseglob …`` and ``set -f``/``+f`` (``-o noglob``): the
    options the line's later globs are expanded with."""
    form = draft.argv
    if not form or form[0] not in ("shopt", "set"):
        return
    options = set(sink.globbing)
    if form[0] == "shopt":
        flags = "".join(w[1:] for w in form[1:] if w.startswith("-"))
        names = (frozenset({"noglob"}) if "o" in flags else _GLOBBING) & set(form[1:])
        if "s" in flags:
            options |= names
        elif "u" in flags:
            options -= names
    else:
        words = list(form[1:])
        for i, word in enumerate(words):
            if word in ("-", "--") or word[:1] not in ("-", "+"):
                break
            on = word[0] == "-"
            letters = word[1:]
            named = "o" in letters and i + 1 < len(words) and words[i + 1] == "noglob"
            if "f" in letters or named:
                options = options | {"noglob"} if on else options - {"noglob"}
    sink.globbing = frozenset(options)


def _surely_enters(path: str, sink: Sink) -> bool:
    """``cd PATH`` cannot fail: a searchable directory now, which nothing earlier in
    the line wrote (a directory it made may not be made; one it moved is gone)."""
    sink.fs = True  # the answer depends on the file system: not cached
    real = _through_links(path, sink.links)
    if real != path or any(_inside(real, written) for written in sink.written):
        return False
    return os.path.isdir(path) and os.access(path, os.X_OK)
