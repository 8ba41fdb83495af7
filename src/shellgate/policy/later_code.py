"""Places that run code later: files another program runs code from when a
person or the host next touches the repository.

A ``write:**`` rule opens the workspace to the agent. These paths stay closed
inside it, because writing them is not a change to the project but an
instruction to some other program, run later with a person's rights:

* the agent hosts' own settings, hooks and commands: Claude Code reads
  ``.claude/settings*.json`` (whose hooks could remove shellgate's own hook),
  starts the servers of ``.mcp.json`` and loads ``.claude/commands``,
  ``agents`` and ``skills``; Gemini CLI reads ``.gemini/settings.json`` and
  ``.gemini/commands``; Cursor ``.cursor/`` (``mcp.json``); OpenCode
  ``opencode.json`` and ``.opencode/``; Codex ``.codex/``; and their twins in
  the home directory (``~/.claude.json`` holds Claude Code's user-level MCP
  servers);
* editors: VS Code runs ``.vscode/tasks.json`` on folder open, JetBrains IDEs
  ``.idea/`` run configurations;
* direnv runs ``.envrc`` on ``cd``; git reads ``.gitmodules`` (submodule URLs
  and update commands) and a ``.gitconfig`` that an include names; ripgrep
  reads ``.ripgreprc`` (its ``--pre`` runs a program);

and, as a second tier that asks rather than denies (a person may well want
them changed, but should see it): ``.pre-commit-config.yaml``,
``.devcontainer/`` and the CI workflow files (``.github/workflows``,
``.github/actions``, ``.gitlab-ci.yml``, ``.circleci/``, …), which run code on
the next commit, container build or push.

Anthropic's sandbox-runtime denies the same kind of list inside allowed write
paths. Entries are matched by path components at any depth below the workspace
(``sub/.vscode/tasks.json`` is a folder someone may open too), a trailing ``/``
making a directory of everything below it; ``~/`` entries are matched in the
home directory. Both lists are configuration (``[policy] run_later_paths`` and
``run_later_ask_paths``): the defaults below, replaced as a whole when set. The
bwrap executor also keeps the ones at each writable root read-only (placeholders
for missing ones), so a sandboxed command cannot write them either.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellgate.config import PolicyConfig

#: Denied whatever the rules say.
RUN_LATER_PATHS: tuple[str, ...] = (
    ".claude/settings.json", ".claude/settings.local.json", ".claude/commands/",
    ".claude/agents/", ".claude/skills/", ".claude/hooks/", ".mcp.json",
    ".gemini/settings.json", ".gemini/commands/", ".cursor/", ".opencode/", "opencode.json",
    "opencode.jsonc", ".codex/", ".vscode/", ".idea/", ".envrc", ".gitmodules", ".gitconfig",
    ".ripgreprc",
    "~/.claude.json", "~/.claude/", "~/.gemini/", "~/.cursor/", "~/.codex/",
    "~/.config/opencode/", "~/.config/Code/User/", "~/.config/direnv/", "~/.ripgreprc",
)  # fmt: skip

#: Asked about whatever the rules say.
RUN_LATER_ASK_PATHS: tuple[str, ...] = (
    ".pre-commit-config.yaml", ".devcontainer/", ".github/workflows/", ".github/actions/",
    ".gitlab-ci.yml", ".circleci/", ".buildkite/", ".travis.yml", "azure-pipelines.yml",
    "bitbucket-pipelines.yml", ".woodpecker/", ".woodpecker.yml", ".drone.yml",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Place:
    """One entry: its components, whether it is a directory, whether in the home."""

    entry: str
    parts: tuple[str, ...]
    directory: bool
    home: bool


def places(entries: Sequence[str]) -> tuple[Place, ...]:
    out: list[Place] = []
    for entry in entries:
        home = entry.startswith("~/")
        body = entry[2:] if home else entry
        parts = tuple(p for p in body.split("/") if p and p != ".")
        if parts:
            out.append(Place(entry, parts, body.endswith("/"), home))
    return tuple(out)


def _matches_at(parts: Sequence[str], at: int, place: Place) -> bool:
    """``place`` at component ``at`` of ``parts``: the path is it, lies below it (a
    directory entry), or names a directory on the way to it (``mv x .claude``
    replaces ``.claude/settings.json`` too)."""
    rest = tuple(parts[at:])
    want = place.parts
    if len(rest) <= len(want):
        return bool(rest) and want[: len(rest)] == rest
    return place.directory and rest[: len(want)] == want


def hit(path: str, workspace: str, home: str, entries: Sequence[Place]) -> Place | None:
    """The entry ``path`` (absolute, normalised) is, lies below or leads to;
    ``None`` if none. Workspace entries match at any depth below the workspace,
    ``~/`` entries in ``home``."""
    inside = workspace.rstrip("/") + "/"
    if path.startswith(inside):
        parts = path[len(inside) :].split("/")
        heads = {place.parts[0] for place in entries if not place.home}
        if heads.isdisjoint(parts):
            parts = []  # no component an entry starts with: nothing to match
        for place in entries if parts else ():
            if not place.home and any(_matches_at(parts, at, place) for at in range(len(parts))):
                return place
    if home and home != "/":
        under = home.rstrip("/") + "/"
        if path.startswith(under):
            parts = path[len(under) :].split("/")
            for place in entries:
                if place.home and _matches_at(parts, 0, place):
                    return place
    return None


def configured(policy: PolicyConfig) -> tuple[tuple[Place, ...], tuple[Place, ...]]:
    """The deny and the ask tier as ``[policy]`` has them (unset: the built-in lists)."""
    deny = RUN_LATER_PATHS if policy.run_later_paths is None else policy.run_later_paths
    ask = RUN_LATER_ASK_PATHS if policy.run_later_ask_paths is None else policy.run_later_ask_paths
    return places(deny), places(ask)


def sandbox_entries(policy: PolicyConfig) -> list[tuple[str, bool]]:
    """Both tiers for the sandbox's guards: ``(relative path, in the home)``. The
    sandbox keeps the ones that exist read-only at each writable root (and in the
    home when it is inside one); a missing one gets no placeholder, since an empty
    ``.claude/settings.json`` or ``.mcp.json`` on the host would break the tool that
    reads it while the gate runs (docs/sandbox.md)."""
    deny, ask = configured(policy)
    return [(os.path.join(*p.parts), p.home) for p in (*deny, *ask)]
