"""What git subcommands write or create through their operands (for ``catalog/vcs.py``).

``clone``, ``init`` and ``worktree add`` create directories (outputs: fine
inside the workdir); ``worktree remove`` deletes one; ``merge-file`` writes
its first operand, ``index-pack`` its pack and index, ``bundle create`` its
file (a write like ``> FILE``: its header holds ref names, which may carry
``$``, ``;`` and ``!``).
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Reading


def repository_name(source: str) -> str:
    """The directory ``git clone SOURCE`` creates (git's ``git_url_basename``)."""
    name = source.rstrip("/ \t")
    if name.endswith("/.git"):
        name = name[: -len("/.git")].rstrip("/")
    name = re.split(r"[/:]", name)[-1]
    for suffix in (".git", ".bundle"):
        name = name.removesuffix(suffix)
    return name


def clone(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``clone SRC [DEST]`` creates DEST (else SRC's basename, ``.git`` for a bare one)."""
    del argv
    words = parsed.words
    if len(words) >= 2:
        out.outputs.append(words[1])
    elif words:
        name = repository_name(words[0])
        if name and parsed.has("--bare", "--mirror"):
            name += ".git"
        if name not in ("", ".", ".."):
            out.outputs.append(name)


def init(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``init DIR`` creates (or reinitialises) a repository in DIR."""
    del argv
    out.outputs.extend(parsed.words[:1])


def worktree(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``worktree add PATH`` checks a tree out at PATH, ``move WT NEW`` moves one
    there, ``remove WT`` deletes one."""
    del argv
    words = parsed.words
    verb, rest = (words[0], words[1:]) if words else ("", [])
    if verb == "add":
        out.outputs.extend(rest[:1])
    elif verb == "move":
        out.outputs.extend(rest[1:2])
    elif verb == "remove":
        out.deleted.extend(rest[:1])


def merge_file_writes(parsed: Parsed) -> list[str]:
    """``merge-file CURRENT BASE OTHER`` writes the merge into CURRENT."""
    if parsed.has("-p", "--object-id"):
        return []
    return parsed.words[:1]


def index_pack_writes(parsed: Parsed) -> list[str]:
    """``index-pack --stdin PACK`` writes PACK; without ``-o`` the index lands
    beside the pack (``x.pack``: ``x.idx``)."""
    pack = parsed.words[:1]
    written = list(pack) if parsed.has("--stdin") else []
    if not parsed.values("-o"):
        written.extend(f"{name.removesuffix('.pack')}.idx" for name in pack)
    return written


def bundle(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``bundle create FILE``: a header of ref names (``$``, ``;``, ``!`` allowed)."""
    words = parsed.words
    if words[:1] == ["create"] and len(words) > 1:
        out.writes.append(words[1])
    del argv
