"""Complete a drafted segment: normalised forms, command findings, writes, ``cd``.

Runs once per simple command, right after its words are read, so the ``cd``
state it updates is the one the *next* command of the same list sees. What
depends on the argv alone (forms, command findings, payloads, write operands)
is a pure function, cached: agent commands repeat the same few argvs a lot.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from shellgate.shell.buildtools import output_operands
from shellgate.shell.commands import SAFE_ASSIGNMENTS, Reading, read_forms
from shellgate.shell.reader.drafts import Argv, Draft, Sink
from shellgate.shell.spellings import resolved_operands, respellings
from shellgate.shell.tools import check_subscript
from shellgate.shell.wrappers import MAX_FORMS, unwrap
from shellgate.shell.writes import resolve, write_operands

#: Most readings kept for one argv, respellings included (wrappers alone: MAX_FORMS).
MAX_READINGS = 2 * MAX_FORMS
_CD_FLAGS = frozenset({"-L", "-P", "-e", "-@", "--"})
_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})
_RESOLVED_NAMES = frozenset({"rm", "rmdir", "shred", "chmod", "chown", "chgrp", "truncate", "dd"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
#: Commands whose whole purpose is to change files: an admin who writes an allow
#: rule for one knows it writes, so its operands are write targets (protected
#: paths still deny them) but not findings. Every other writer — a tool that
#: mostly reads and writes through an operand or option the rule author may not
#: know (`uniq IN OUT`, `tree -o F`, `sort -o F`, `sed -i`, `file -C`) — cannot be
#: auto-allowed by a rule matching its name.
_OBVIOUS_WRITERS = frozenset(
    {"cp", "mv", "rm", "rmdir", "touch", "mkdir", "tee", "ln", "install", "truncate",
     "dd", "chmod", "chown", "chgrp", "shred", "unlink", "mktemp", "rsync", "mkfifo",
     "mknod"}
)  # fmt: skip


@lru_cache(maxsize=4096)
def _read_argv(
    argv: Argv,
) -> tuple[
    tuple[Argv, ...],
    tuple[str, ...],
    tuple[tuple[str, str], ...],
    bool,
    tuple[str, ...],
    tuple[str, ...],
]:
    """(forms, findings, payloads, reads stdin as a shell, write operands, outputs) of
    one argv. Outputs: files a build tool writes through an option (a report, a
    log), fine inside the working directory (see :func:`finish`)."""
    unwrapped = unwrap(argv)
    # Respell the argv and every command it runs (`sudo kill -9 -01` respells as
    # kill), and peel each respelling (`{sudo,rm,-rf,/}`). What a respelling with a
    # new command name runs is respelled in turn (`{kill,-9,-01}`); an operand
    # reading is not, or the readings of several words would multiply.
    pending = list(unwrapped.forms)
    done: set[Argv] = set()
    seen = set(unwrapped.forms)
    while pending and len(done) < MAX_FORMS:
        form = pending.pop(0)
        if form in done:
            continue
        done.add(form)
        for other in respellings(form):
            extra = [f for f in unwrap(other).forms if f not in seen]
            room = MAX_READINGS - len(unwrapped.forms)
            if len(extra) > room:
                # Globs in names and operands multiply readings (`/**/ /[^a]* …`):
                # past the bound the rest is not read, and the segment asks.
                extra = extra[: max(room, 0)]
                unwrapped.truncated = True
            seen.update(extra)
            unwrapped.forms.extend(extra)
            if other[0] != form[0]:
                pending.extend(extra)
            if unwrapped.truncated:
                pending.clear()
                break
    reading = read_forms(unwrapped.forms)
    unwrapped.forms.extend(f for f in dict.fromkeys(reading.forms) if f not in unwrapped.forms)
    findings = list(reading.findings)
    if unwrapped.truncated:
        findings.append(
            f"too many wrapper readings (over {MAX_FORMS}; globs multiply them too); "
            "not all were checked"
        )
    operands: list[str] = []
    surprising: list[str] = []
    outputs: list[str] = []
    for form in unwrapped.forms:
        targets = write_operands(form)
        operands.extend(targets)
        if targets and os.path.basename(form[0]) not in _OBVIOUS_WRITERS:
            surprising.extend(targets)
        files, wiped = output_operands(form)
        operands.extend((*files, *wiped))
        outputs.extend(files)
        findings.extend(f"'{form[0]}' empties or deletes '{target}'" for target in wiped)
    findings.extend(
        f"writes '{target}' via its operand"
        for target in dict.fromkeys(surprising)
        if target not in _HARMLESS_TARGETS
    )
    return (
        tuple(unwrapped.forms),
        tuple(findings),
        (*unwrapped.payloads, *reading.payloads),
        reading.stdin_shell,
        tuple(operands),
        tuple(dict.fromkeys(outputs)),
    )


def assignment_findings(name: str) -> list[str]:
    """The finding an assignment to ``name`` raises (none for a known-safe name)."""
    if name in SAFE_ASSIGNMENTS:
        return []
    return [f"assignment to '{name}' (not on the known-safe list)"]


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def finish(draft: Draft, sink: Sink, stdin_texts: Sequence[str]) -> list[tuple[str, str]]:
    """Fill ``draft.forms``, ``findings`` and ``writes``; return shell strings to parse."""
    findings = draft.findings
    for name, _ in draft.assignments:
        findings.extend(assignment_findings(name))
    payloads: list[tuple[str, str]] = []
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
        forms, found, given, stdin_shell, operands, outputs = _read_argv(draft.argv)
        draft.forms = list(forms)
        known = set(forms)
        for reading in draft.readings:  # `"$x"rm -rf /` while x is empty: rm
            for form in _read_argv(reading)[0]:
                if form not in known:
                    known.add(form)
                    draft.forms.append(form)
        findings.extend(found)
        for target in outputs:
            where = resolve(target, sink.cwd)
            if not sink.cwd_known or not _inside(where, sink.workdir):
                findings.append(f"'{draft.argv[0]}' writes '{target}' outside the workdir")
        payloads.extend(given)
        if stdin_shell:
            payloads.extend(("stdin script", content) for content in stdin_texts if content)
        if sink.cwd != sink.workdir and sink.cwd_known and operands:
            # After a `cd`, a relative operand names another file than the rule expects.
            for form in forms:
                if form and form[0] in _RESOLVED_NAMES:
                    resolved = resolved_operands(form, sink.cwd)
                    if resolved is not None:
                        homed = _home_relative(resolved)
                        for other in (resolved, *respellings(resolved), *homed):
                            if other not in draft.forms:
                                draft.forms.append(other)
    _writes(draft, sink, operands)
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
        if not form or form[0] not in ("cd", "pushd", "popd"):
            continue
        operands = [word for word in form[1:] if word not in _CD_FLAGS]
        if form[0] == "cd" and not operands and not draft.findings and _home():
            operands = ["~"]  # a bare cd goes home
        if form[0] == "popd" or len(operands) != 1 or draft.findings:
            sink.cwd_known = False
            return
        target = operands[0]
        home = _home()
        if home and (target == "~" or target.startswith("~/")):
            target = home + target[1:]  # bash expands ~ with HOME, as writes do here
        if target == "-" or target.startswith("~"):
            sink.cwd_known = False
            return
        sink.cwd = resolve(target, sink.cwd)
        return
