"""Other spellings of one argv that bash runs as the same command (deny side only).

``respellings`` returns extra argvs for the deny/ask rule layers to match, so a
rule written for the plain spelling (``rm -rf /etc``) also meets what bash runs
from ``rm -rf /etc//``, ``{rm,-rf,/}`` or ``/bin/r? -rf /``. Like every form, they
over-approximate and never reach the allow side (which matches ``argv`` only).

One canonical spelling per operand reaches the rules:

* paths: ``//``, ``/./``, ``..`` and a trailing ``/`` collapse lexically, and the
  ``/proc/self/root``, ``/proc/thread-self/root`` and ``/proc/<pid>/root`` links
  (each the root directory) become ``/``; also the path after ``KEY=`` in
  ``dd of=//dev/sda`` or ``--opt=/x``;
* tilde: ``~root`` is ``/root``; ``~user`` (another user's home) reads as ``~``;
* globs (see ``_glob_readings``): a trailing all-wildcard component names its
  directory (``/home/*`` empties ``/home``), and a glob in the first component of
  an absolute path is expanded against the fixed list ``TOP_LEVEL``, never the
  file system (``/u*`` → ``/usr``).

Command-specific spellings (``kill -9 -01`` is ``kill -9 -- -1``, ``systemctl
--force reboot`` is ``systemctl reboot``) are the catalog's: ``catalog/system.py``.

Invariant: the common argv (no brace, glob or odd path in it) costs one scan of
its words for the characters ``{ * ? [ / ~``; nothing is done per word beyond that.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence

Argv = tuple[str, ...]

#: The shells (the catalog's interpreters family reads them; deny rules name each).
SHELL_NAMES = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish",
     "csh", "tcsh", "ksh93", "rksh", "lksh", "oksh", "loksh", "pdksh", "rzsh"}
)  # fmt: skip
#: Command names a glob in command position is tried against (deny rules name them).
DANGEROUS_NAMES = (
    *sorted(SHELL_NAMES),
    "rm", "rmdir", "dd", "mkfs", "mke2fs", "wipefs", "shred", "chmod", "chown", "chgrp",
    "curl", "wget", "sudo", "doas", "mv", "cp", "kill", "killall", "reboot", "shutdown",
    "halt", "poweroff", "systemctl", "loginctl", "git", "nc", "ssh", "python", "python3",
    "perl", "eval", "truncate", "find", "xargs", "env",
)  # fmt: skip
#: Top-level directories a glob in the first component of an absolute path may name
#: (the FHS list plus common extras). Fixed: the file system is never read.
TOP_LEVEL = (
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media",
    "mnt", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "tmp", "usr", "var",
)  # fmt: skip
_BRACE_LIST = re.compile(r"\{([^{}]*,[^{}]*)\}")
_GLOB = frozenset("*?[")
#: A path word worth normalising: a repeated slash, a ``.``/``..`` component, a
#: trailing slash, a /proc path (the root links) or a glob.
_ODD_PATH = re.compile(r"//|/\.\.?(?:/|$)|./$|^/proc/|[*?\[]")
#: ``of=/x``, ``--target=/x``: a path after a key (dd operands, long options).
_KEYED_PATH = re.compile(r"((?:--?)?[A-Za-z_][\w-]*=)(/.*)", re.DOTALL)
_TILDE = re.compile(r"~([A-Za-z_][\w.-]*)?(/.*)?", re.DOTALL)
#: ``/proc/self/root`` and friends: a magic link to the root directory.
_PROC_ROOT = re.compile(r"proc/(?:self|thread-self|\d+)(?:/task/\d+)?/root")
#: A component that matches every (non-hidden) name: ``*``, ``**``, ``?*``.
_ANY_NAME = re.compile(r"\?*\*[*?]*")
_STARS = re.compile(r"\*{2,}")


def _min_length(pattern: str, enough: int) -> int:
    """Fewest characters a name matching the glob ``pattern`` has (counting stops
    past ``enough``): ``*`` none, ``?``, a ``[…]`` expression or a character one."""
    count, i, n = 0, 0, len(pattern)
    while i < n and count <= enough:
        if pattern[i] == "*":
            i += 1
            continue
        if pattern[i] == "[":
            j = i + 1 + (pattern[i + 1 : i + 2] in ("!", "^"))
            j += pattern[j : j + 1] == "]"  # a leading ] is a member, not the end
            close = pattern.find("]", j)
            i = close + 1 if close != -1 else i + 1
        else:
            i += 1
        count += 1
    return count


def glob_names(pattern: str, names: Sequence[str]) -> list[str]:
    """The ``names`` bash's glob ``pattern`` matches, without a cost in its length.

    A pattern needing more characters than the longest name matches none, and
    runs of ``*`` are one ``*``, so fnmatch never sees a long pattern with many stars.
    """
    longest = max(map(len, names), default=0)
    if _min_length(pattern, longest) > longest:
        return []
    # bash takes [^…] as [!…]; fnmatch would read the ^ literally.
    pattern = _STARS.sub("*", pattern).replace("[^", "[!")
    return [name for name in names if fnmatch.fnmatchcase(name, pattern)]


def canonical_path(path: str) -> str:
    """The absolute path ``path`` names, spelled one way (lexically, no file access).

    ``..`` is applied component by component after the ``/proc/…/root`` links are
    taken as ``/`` (so ``/proc/self/root/..`` is ``/``, as the kernel has it).
    """
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
        if part == "root" and len(parts) in (3, 5) and _PROC_ROOT.fullmatch("/".join(parts)):
            parts.clear()
    return "/" + "/".join(parts)


def _collapse_any(path: str) -> str:
    """``/home/*`` → ``/home``, ``/*/*`` → ``/``: the directory a glob empties."""
    parts = path.split("/")
    while len(parts) > 1 and _ANY_NAME.fullmatch(parts[-1]):
        parts.pop()
    return "/".join(parts) or "/"


def _first_component(path: str) -> list[str]:
    """``/u*/x`` → ``/usr/x``: a glob in the first component against ``TOP_LEVEL``."""
    first, _, rest = path[1:].partition("/")
    if not _GLOB.intersection(first):
        return []
    tail = "/" + rest if rest else ""
    return [f"/{name}{tail}" for name in glob_names(first, TOP_LEVEL)]


def _glob_readings(path: str) -> list[str]:
    """What an absolute glob may expand to, as far as deny rules care.

    Sound for rules on whole directories: ``D/*`` (every name in ``D``) removes,
    chmods… what ``D`` would, bar ``D`` itself and its hidden files; and a glob in
    the first component may match any top-level directory whose name fits it
    (hidden names aside, as bash's ``*`` skips them).
    """
    out: list[str] = []
    collapsed = _collapse_any(path)
    if collapsed != path:
        out.append(collapsed)
    for candidate in dict.fromkeys((path, collapsed)):
        if collapsed == "/" and _ANY_NAME.fullmatch(candidate[1:]):
            continue  # `/*` is `/` already: no need to list every top-level name
        out.extend(_first_component(candidate))
    return list(dict.fromkeys(out))


def _tilde_reading(word: str) -> str | None:
    """``~root/x`` → ``/root/x``; ``~alice`` → ``~``; ``~/./`` → ``~/``."""
    match = _TILDE.fullmatch(word)
    if match is None:
        return None
    user, rest = match.group(1), match.group(2) or ""
    if user == "root":
        return canonical_path("/root" + rest)
    if not rest:
        return "~"
    inside = os.path.normpath(rest.lstrip("/")) if rest.strip("/") else ""
    if inside.startswith(".."):
        return "~"  # above a home: a superset of one
    return "~/" + ("" if inside == "." else inside)


def _word_readings(word: str) -> tuple[str | None, list[str]]:
    """(the canonical spelling if it differs, other readings) of one operand."""
    if word.startswith("/"):
        if not _ODD_PATH.search(word):
            return None, []
        canonical = canonical_path(word)
        globbed = _glob_readings(canonical) if _GLOB.intersection(canonical) else []
        return (canonical if canonical != word else None), globbed
    if word.startswith("~"):
        reading = _tilde_reading(word)
        if reading is None:
            return None, []
        collapsed = _collapse_any(reading)
        extra = [collapsed] if collapsed != reading else []
        return (reading if reading != word else None), extra
    keyed = _KEYED_PATH.fullmatch(word)
    if keyed is not None and _ODD_PATH.search(keyed.group(2)):
        canonical = keyed.group(1) + canonical_path(keyed.group(2))
        return (canonical if canonical != word else None), []
    return None, []


def _operand_readings(argv: Argv) -> list[Argv]:
    """The argv with each operand canonical, then the other readings of its words.

    Form ``k`` holds the ``k``-th other reading of every word that has one, so each
    reading of each word is in some form and their number stays that of the word
    with the most readings (``rm /u* /e*`` is one form, not the product of two).
    """
    words = list(argv)
    others: dict[int, list[str]] = {}
    for i, word in enumerate(argv[1:], start=1):
        if "/" not in word and not word.startswith("~"):
            continue
        canonical, extra = _word_readings(word)
        if canonical is not None:
            words[i] = canonical
        if extra:
            others[i] = extra
    out: list[Argv] = []
    normal = tuple(words)
    if normal != argv:
        out.append(normal)
    for k in range(max((len(extra) for extra in others.values()), default=0)):
        form = list(normal)
        for i, extra in others.items():
            form[i] = extra[min(k, len(extra) - 1)]
        out.append(tuple(form))
    return out


def _brace_head(argv: Argv) -> list[Argv]:
    """``{rm,-rf,/}``: a comma brace list expands to several words (one level)."""
    match = _BRACE_LIST.fullmatch(argv[0])
    return [(*match.group(1).split(","), *argv[1:])] if match else []


def _glob_head(argv: Argv) -> list[Argv]:
    """``/bin/r? -rf /``: the file name bash finds decides the command."""
    head = argv[0].rsplit("/", 1)[-1]
    if not _GLOB.intersection(head):
        return []
    return [(name, *argv[1:]) for name in glob_names(head, DANGEROUS_NAMES)]


#: A parameter expansion or an inline substitution in a word.
_EXPANSION = re.compile(
    r"\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(?:(?::?[-=+?])([^}]*))?\}|\$\{[^}]*\}"
    r"|\$[A-Za-z_][A-Za-z0-9_]*|\$[@*#?$!0-9-]|\$\([^()]*\)|`[^`]*`"
)


def _expansion_readings(argv: Argv) -> list[Argv]:
    """``rm$x -rf /``, ``r${x:-m} -rf /``: what bash runs when the expansions are
    empty, and when a ``${x:-WORD}`` takes its WORD. The values are unknown (the
    segment asks anyway); these readings let deny rules meet the likely ones."""
    empty = tuple(_EXPANSION.sub("", word) for word in argv)
    default = tuple(_EXPANSION.sub(lambda m: m.group(1) or "", word) for word in argv)
    # An unquoted expansion that is empty takes its word away (`$x rm -rf /`).
    dropped = tuple(word for word in empty if word)
    readings = dict.fromkeys((empty, dropped, default))
    return [form for form in readings if form and form != argv and form[0]]


def respellings(argv: Argv, *, expanded: bool = False) -> list[Argv]:
    """Extra argvs bash may run for ``argv`` (empty for the common plain argv)."""
    if not argv:
        return []
    out: list[Argv] = []
    if not expanded and any("$" in word or "`" in word for word in argv):
        for form in _expansion_readings(argv):
            out.extend(f for f in (form, *respellings(form, expanded=True)) if f not in out)
    head = argv[0]
    if "{" in head:
        out.extend(_brace_head(argv))
    elif "," in head:
        # tree-sitter-bash reads `{rm,-rf,/}` as a group holding `rm,-rf,/`; bash
        # reads one word and brace-expands it.
        out.append((*head.split(","), *argv[1:]))
    if _GLOB.intersection(head):
        out.extend(_glob_head(argv))
    if any("/" in word or word.startswith("~") for word in argv[1:]):
        out.extend(_operand_readings(argv))
    return out


def resolved_operands(form: Argv, cwd: str, keys: Sequence[str] = ()) -> Argv | None:
    """``cd / && rm -rf usr``: the form with relative operands made absolute.

    With ``keys``, only ``KEY=PATH`` operands name files, their paths resolved
    (dd's ``if=``/``of=``: ``cd /dev && dd of=sda``).
    """
    words = [form[0]]
    changed = False
    for word in form[1:]:
        key = ""
        if keys:
            name, eq, value = word.partition("=")
            if not eq or name not in keys:
                words.append(word)
                continue
            key, word = name + "=", value
        if word and not word.startswith(("-", "/", "~", "$")):
            word = canonical_path(os.path.join(cwd, word))
            changed = True
        words.append(key + word)
    return tuple(words) if changed else None


def resolve(path: str, cwd: str) -> str:
    """Absolute, lexically normalised ``path`` as seen from ``cwd``."""
    joined = path if path.startswith("/") else os.path.join(cwd, path)
    normal = os.path.normpath(joined)
    # POSIX lets "//x" differ from "/x"; no Linux path does, and rules expect one slash.
    return "/" + normal.lstrip("/")
