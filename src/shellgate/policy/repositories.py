"""The repositories layer: git run in a repository other than the workspace's asks.

A git repository's configuration runs programs (``core.fsmonitor``,
``core.pager``, aliases, hooks, filters), so which repository a git command
reads decides what it runs. The workspace's own repository is guarded (its
``.git/config`` and hooks are protected paths); any other one is not: a bare
repository the agent wrote (``sub/config``, ``sub/HEAD``), an embedded or
vendored one (``vendor/pkg.git``), a submodule, a repository outside the
workspace. So a segment that runs git (``Segment.repositories``: its
directory after every ``cd`` and ``-C``) is checked where it runs, at decision
time, the way git discovers a repository: walking up from that directory to
the first ``.git`` (a directory, or a file naming one) or bare repository
(``HEAD``, ``objects/``, ``refs/``). When that is not the repository found
from the workspace root, or the directory does not exist yet (the same line
may create it), the segment asks, whatever the rules say.
"""

from __future__ import annotations

import os

from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment

LAYER = "repositories"
_MAX_DEPTH = 256  # directories walked up at most (a path has fewer)


def _is_bare(directory: str) -> bool:
    return (
        os.path.isfile(os.path.join(directory, "HEAD"))
        and os.path.isdir(os.path.join(directory, "objects"))
        and os.path.isdir(os.path.join(directory, "refs"))
    )


def _git_file(path: str) -> str | None:
    """The directory a ``.git`` file names (``gitdir: X``), if it is one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096)
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return os.path.join(os.path.dirname(path), text[len("gitdir:") :].strip())


def discover(directory: str) -> str | None:
    """The git directory git would use from ``directory`` (canonical), or ``None``."""
    current = os.path.realpath(directory)
    for _ in range(_MAX_DEPTH):
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            return dot_git
        if os.path.isfile(dot_git):
            named = _git_file(dot_git)
            return os.path.realpath(named) if named is not None else dot_git
        if _is_bare(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


class RepositoriesLayer:
    """Ask for git run in any repository but the workspace's (see the module doc)."""

    name = LAYER

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        if not segment.repositories:
            return None
        own = discover(call.workspace)
        for directory in segment.repositories:
            if directory in (call.workdir, call.workspace) and not os.path.isdir(directory):
                continue  # the call's own directory is missing: nothing runs there at all
            if not os.path.isdir(directory):
                why = f"'{directory}' does not exist yet, so the repository git reads there " \
                    "is not known"
            else:
                found = discover(directory)
                if found == own:
                    continue
                if found is None:
                    continue  # no repository: git only fails
                why = f"the repository there is '{found}', not the workspace's own"
            return Decision(
                effect="ask",
                reason=f"runs git in '{directory}': {why}; a repository's configuration "
                "runs programs (core.fsmonitor, aliases, hooks), so a person must approve "
                "this, whatever the rules say",
                layer=LAYER,
                rule=f"{LAYER}:foreign",
            )
        return None
