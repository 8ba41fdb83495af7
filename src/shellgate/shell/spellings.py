"""Other spellings of one argv that bash runs as the same command (deny side only).

``respellings`` returns extra argvs for the deny/ask rule layers to match, so a
rule written for the plain spelling (``rm -rf /etc``) also meets what bash runs
from ``rm -rf /etc//``, ``{rm,-rf,/}`` or ``/bin/r? -rf /``. Like every form, they
over-approximate and never reach the allow side (which matches ``argv`` only).

Invariant: the common argv (no brace, glob or odd path in it) costs one scan of
its words for the characters ``{ * ? [ /``; nothing is done per word beyond that.
"""

from __future__ import annotations

import fnmatch
import os
import re

Argv = tuple[str, ...]

#: Command names a glob in command position is tried against (deny rules name them).
DANGEROUS_NAMES = (
    "rm", "rmdir", "dd", "mkfs", "mke2fs", "wipefs", "shred", "chmod", "chown", "chgrp",
    "sh", "bash", "dash", "zsh", "ksh", "curl", "wget", "sudo", "doas", "mv", "cp",
    "kill", "killall", "reboot", "shutdown", "halt", "poweroff", "git", "nc", "ssh",
    "python", "python3", "perl", "eval", "truncate", "find", "xargs", "env",
)  # fmt: skip
_BRACE_LIST = re.compile(r"\{([^{}]*,[^{}]*)\}")
_ODD_PATH = re.compile(r"//|/\./|/\.\./|/\.$|/\.\.$|./$")


def _brace_head(argv: Argv) -> list[Argv]:
    """``{rm,-rf,/}``: a comma brace list expands to several words (one level)."""
    match = _BRACE_LIST.fullmatch(argv[0])
    return [(*match.group(1).split(","), *argv[1:])] if match else []


def _glob_head(argv: Argv) -> list[Argv]:
    """``/bin/r? -rf /``: the file name bash finds decides the command."""
    head = argv[0].rsplit("/", 1)[-1]
    if not any(c in head for c in "*?["):
        return []
    return [(name, *argv[1:]) for name in DANGEROUS_NAMES if fnmatch.fnmatchcase(name, head)]


def _normal_paths(argv: Argv) -> list[Argv]:
    """``/etc//``, ``/usr/../etc``, ``//etc``: the lexically normal absolute path."""
    changed = False
    words: list[str] = []
    for word in argv:
        if word.startswith("/") and len(word) > 1 and _ODD_PATH.search(word):
            word = "/" + os.path.normpath(word).lstrip("/")
            changed = True
        words.append(word)
    return [tuple(words)] if changed else []


def respellings(argv: Argv) -> list[Argv]:
    """Extra argvs bash may run for ``argv`` (empty for the common plain argv)."""
    if not argv:
        return []
    out: list[Argv] = []
    head = argv[0]
    if "{" in head:
        out.extend(_brace_head(argv))
    elif "," in head:
        # tree-sitter-bash reads `{rm,-rf,/}` as a group holding `rm,-rf,/`; bash
        # reads one word and brace-expands it.
        out.append((*head.split(","), *argv[1:]))
    if any(c in head for c in "*?["):
        out.extend(_glob_head(argv))
    if any("/" in word for word in argv[1:]):
        out.extend(_normal_paths(argv))
    return out


def resolved_operands(form: Argv, cwd: str) -> Argv | None:
    """``cd / && rm -rf usr``: the form with relative operands made absolute."""
    words = [form[0]]
    changed = False
    for word in form[1:]:
        if word and not word.startswith(("-", "/", "~", "$")):
            word = "/" + os.path.normpath(os.path.join(cwd, word)).lstrip("/")
            changed = True
        words.append(word)
    return tuple(words) if changed else None
