"""Complete a drafted segment: normalised forms, command findings, writes, ``cd``.

Runs once per simple command, right after its words are read, so the ``cd``
state it updates is the one the *next* command of the same list sees. What
depends on the argv alone (forms, command findings, payloads, write operands)
is a pure function, cached: agent commands repeat the same few argvs a lot.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from shellgate.shell import catalog
from shellgate.shell.argv.spellings import resolve, resolved_operands, respellings
from shellgate.shell.catalog.entry import Reading
from shellgate.shell.catalog.environment import SAFE_ASSIGNMENTS, check_subscript
from shellgate.shell.forms import read_argv
from shellgate.shell.reader.drafts import Argv, Draft, Nested, Sink

_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})


def assignment_findings(name: str) -> list[str]:
    """The finding an assignment to ``name`` raises (none for a known-safe name)."""
    if name in SAFE_ASSIGNMENTS:
        return []
    return [f"assignment to '{name}' (not on the known-safe list)"]


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def finish(draft: Draft, sink: Sink, stdin_texts: Sequence[str]) -> list[Nested]:
    """Fill ``draft.forms``, ``findings``, ``writes`` and ``canonical``; return the
    shell strings to parse and the programs the command runs (each its own segment)."""
    findings = draft.findings
    for name, _ in draft.assignments:
        findings.extend(assignment_findings(name))
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
    operands: tuple[str, ...] = ()
    if draft.argv:
        read = read_argv(draft.argv)
        forms, operands, outputs = read.forms, read.writes, read.outputs
        draft.forms = list(forms)
        draft.canonical = list(read.canonical)
        known = set(forms)
        for reading in draft.readings:  # `"$x"rm -rf /` while x is empty: rm
            for form in read_argv(reading).forms:
                if form not in known:
                    known.add(form)
                    draft.forms.append(form)
        findings.extend(read.findings)
        for target in outputs:
            where = resolve(target, sink.cwd)
            if not sink.cwd_known or not _inside(where, sink.workdir):
                findings.append(f"'{draft.argv[0]}' writes '{target}' outside the workdir")
        payloads.extend(read.payloads)
        payloads.extend(read.programs)
        if read.stdin_shell:
            payloads.extend(("stdin script", content) for content in stdin_texts if content)
        if sink.cwd != sink.workdir and sink.cwd_known and operands:
            # After a `cd`, a relative operand names another file than the rule expects.
            for form in forms:
                entry = catalog.lookup(form[0]) if form else None
                if entry is not None and entry.cwd_operands:
                    resolved = resolved_operands(form, sink.cwd, entry.path_keys)
                    if resolved is not None:
                        homed = _home_relative(resolved)
                        for other in (resolved, *respellings(resolved), *homed):
                            if other not in draft.forms:
                                draft.forms.append(other)
    _writes(draft, sink, operands)
    draft.cwd = sink.cwd if sink.cwd_known else ""  # before its own cd moves the shell
    _track_cd(draft, sink)
    # Keep order, drop repeats: one construct seen through several forms is one finding.
    draft.findings = list(dict.fromkeys(findings))
    return list(dict.fromkeys(payloads))


def _writes(draft: Draft, sink: Sink, operands: Sequence[str]) -> None:
    targets = [r.target for r in draft.redirects if r.is_write]
    targets.extend(operands)
    if not targets:
        return
    writes: list[str] = []
    for target in dict.fromkeys(targets):
        home = _home_prefix(target)
        if home:
            # `"$HOME/.bashrc"`: the parameter expansion is a finding already; list
            # the file it names too, so protected paths see `~/.bashrc`.
            value = os.environ.get("HOME", "")
            if value:
                writes.append(resolve(value + target[len(home) :], sink.cwd))
        if target.startswith("~"):
            draft.findings.append(f"write target '{target}' uses tilde expansion")
            # bash expands an unquoted leading ~ (the quoting is gone by now, so
            # list both readings): `echo x >> ~/.bashrc` must meet protected paths.
            expanded = os.path.expanduser(target)
            if expanded != target:
                writes.append(resolve(expanded, sink.cwd))
        elif not target.startswith("/") and not sink.cwd_known:
            draft.findings.append(
                f"write target '{target}' is relative to a directory a 'cd' made unknown"
            )
        writes.append(resolve(target, sink.cwd))
    draft.writes = list(dict.fromkeys(writes))


def _home_prefix(target: str) -> str:
    for prefix in ("$HOME", "${HOME}"):
        if target == prefix or target.startswith(prefix + "/"):
            return prefix
    return ""


def _home() -> str:
    """This process's home directory ("" if it is unset or the root)."""
    home = os.path.expanduser("~")
    return "" if home in ("~", "/") else home.rstrip("/")


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
    if not draft.argv:
        return
    for form in draft.forms:
        reading = catalog.read(form) if form else None
        if reading is None or reading.chdir is None:
            continue  # the catalog says which commands move the shell (cd, pushd, popd)
        target = reading.chdir
        if not target or draft.findings:
            sink.cwd_known = False
            return
        home = _home()
        if home and (target == "~" or target.startswith("~/")):
            target = home + target[1:]  # bash expands ~ with HOME, as writes do here
        if target == "-" or target.startswith("~"):
            sink.cwd_known = False
            return
        sink.cwd = resolve(target, sink.cwd)
        return
