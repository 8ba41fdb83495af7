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

from shellgate.shell.commands import SAFE_ASSIGNMENTS, read_forms
from shellgate.shell.drafts import Argv, Draft, Sink
from shellgate.shell.wrappers import MAX_FORMS, unwrap
from shellgate.shell.writes import resolve, write_operands

_CD_FLAGS = frozenset({"-L", "-P", "-e", "-@", "--"})


@lru_cache(maxsize=4096)
def _read_argv(
    argv: Argv,
) -> tuple[tuple[Argv, ...], tuple[str, ...], tuple[tuple[str, str], ...], bool, tuple[str, ...]]:
    """(forms, findings, payloads, reads stdin as a shell, write operands) of one argv."""
    unwrapped = unwrap(argv)
    reading = read_forms(unwrapped.forms)
    findings = list(reading.findings)
    if unwrapped.truncated:
        findings.append(f"more than {MAX_FORMS} wrapper readings; not all were checked")
    operands = [target for form in unwrapped.forms for target in write_operands(form)]
    return (
        tuple(unwrapped.forms),
        tuple(findings),
        (*unwrapped.payloads, *reading.payloads),
        reading.stdin_shell,
        tuple(operands),
    )


def finish(draft: Draft, sink: Sink, stdin_texts: Sequence[str]) -> list[tuple[str, str]]:
    """Fill ``draft.forms``, ``findings`` and ``writes``; return shell strings to parse."""
    findings = draft.findings
    for name, _ in draft.assignments:
        if name not in SAFE_ASSIGNMENTS:
            findings.append(f"assignment to '{name}' (not on the known-safe list)")
    payloads: list[tuple[str, str]] = []
    operands: tuple[str, ...] = ()
    if draft.argv:
        forms, found, given, stdin_shell, operands = _read_argv(draft.argv)
        draft.forms = list(forms)
        findings.extend(found)
        payloads.extend(given)
        if stdin_shell:
            payloads.extend(("stdin script", content) for content in stdin_texts if content)
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


def _track_cd(draft: Draft, sink: Sink) -> None:
    if not draft.argv:
        return
    for form in draft.forms:
        if not form or form[0] not in ("cd", "pushd", "popd"):
            continue
        operands = [word for word in form[1:] if word not in _CD_FLAGS]
        if form[0] == "popd" or len(operands) != 1 or draft.findings:
            sink.cwd_known = False
            return
        target = operands[0]
        if target == "-" or target.startswith("~"):
            sink.cwd_known = False
            return
        sink.cwd = resolve(target, sink.cwd)
        return
