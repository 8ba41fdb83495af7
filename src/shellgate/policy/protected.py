"""The protected-paths layer: writes that no rule can allow.

A segment is denied when any of its ``writes`` is, or is inside, a protected path:

* shell start-up files (``.bashrc``, ``.profile``, ``.zshrc`` …) in ``$HOME`` and in
  the workspace — code there runs in every later shell;
* ``.git/hooks`` (and anything below) and ``.git/config`` of *any* repository, found
  by path components, so nested repositories and not-yet-existing hooks count, and
  a ``.git`` directory itself (moving it away and back is a rename of a hook's parent);
  the rest of what git reads as configuration or code inside it: ``config.worktree``,
  ``commondir``, ``remotes/``, ``rebase-merge/``, every submodule git dir under
  ``modules/``, and each ``worktrees/ID`` with the same files inside (see
  :func:`git_protected`). A bare repository is known by its contents, not its
  name, so its ``config`` and ``hooks`` are not (docs/analysis.md);
* in ``$HOME``: the user's git config (``.gitconfig``, ``.config/git/config``, and
  ``$XDG_CONFIG_HOME/git/config`` when set) — ``core.fsmonitor``, ``core.pager`` or
  an alias there runs in every later git command — and all of ``.ssh/``
  (``authorized_keys``, ``config``'s ``ProxyCommand``, ``rc``, keys);
* the gate's own files: its config file, its policy sets and its audit log, its
  SQLite store files with their side files and its tokens files
  (:mod:`shellgate.policy.gate_files`);
* every path in ``[policy] protected_paths``.

Both sides are compared in two spellings, lexical (``os.path.normpath``) and
physical (``os.path.realpath``, which resolves the existing prefix and keeps the
rest), so neither ``..`` nor a symlinked directory or file leads around a
protected path. The layer judges only what the analysis reports in ``writes``;
it never allows, it only vetoes or abstains.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shellgate.config import Config
from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment
from shellgate.policy import later_code
from shellgate.policy.gate_files import store_files, token_files
from shellgate.policy.physical import realpath

LAYER = "protected-paths"

#: Start-up files of the common shells, relative to a home (or workspace) directory.
SHELL_RC_FILES: tuple[str, ...] = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
    ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
    ".tcshrc", ".login", ".logout", ".inputrc", ".config/fish/config.fish",
    ".config/fish/conf.d",
)

#: Other paths under a home that no write may reach, with their rule ids. A trailing
#: ``/`` marks a directory (everything below it is protected too).
HOME_PROTECTED: tuple[str, ...] = (".gitconfig", ".config/git/config", ".ssh/")
_HOME_WHY = {".gitconfig": "user-git-config", ".config/git/config": "user-git-config",
             ".ssh/": "ssh"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Protected:
    path: str  # absolute, normalised
    why: str  # rule id shown in decisions: "shell-rc", "gate-config", …


def _spellings(path: str) -> set[str]:
    return {os.path.normpath(path), realpath(path)}


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


#: Files of a git dir that git reads as configuration: ``config``;
#: ``config.worktree`` (with ``extensions.worktreeConfig``); ``commondir``
#: (names the directory whose ``config`` and ``hooks`` git then uses).
_GIT_CONFIG_FILES = frozenset({"config", "config.worktree", "commondir"})


def git_protected(path: str) -> str | None:
    """Which git-internal path ``path`` names, by its components (``None`` if none)."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part == ".git":
            why = _in_git_dir(parts[i + 1 :])
            if why is not None:
                return why
    return None


def _in_git_dir(rest: list[str]) -> str | None:
    """What ``rest`` (components below a ``.git``) names that git reads as code.

    ``hooks/`` runs; the configuration files above (any key may name a program);
    ``remotes/NAME`` (legacy remotes: ``Push: +refs…`` force-pushes);
    ``rebase-merge/`` (its todo's ``exec`` lines run on ``rebase --continue``);
    all of ``modules/`` (each submodule's own git dir, its name may hold
    slashes, so every path below may be one); ``worktrees/ID`` itself and, inside
    it, the same as here (a worktree's own ``config.worktree``, ``commondir``).
    """
    if not rest:
        return "git-dir"
    head = rest[0]
    if head == "hooks":
        return "git-hooks"
    if (len(rest) == 1 and head in _GIT_CONFIG_FILES) or head == "remotes":
        return "git-config"
    if head == "rebase-merge":
        return "git-rebase-todo"
    if head == "modules":
        return "git-modules"
    if head == "worktrees":
        return "git-worktree" if len(rest) <= 2 else _in_git_dir(rest[2:])
    return None


#: ``shellgate`` sub-commands that answer the approval queue or change the policy in
#: force: an agent running them through the gate would approve or widen itself.
GATE_ADMIN: frozenset[tuple[str, str]] = frozenset({
    ("approvals", "approve"), ("approvals", "deny"), ("policy", "push"),
    ("policy", "rollback"),
})  # fmt: skip


def gate_admin(argv: Sequence[str]) -> str | None:
    """``shellgate approvals approve …`` (also ``python -m shellgate …``), or ``None``."""
    words = list(argv)
    if words and os.path.basename(words[0]).startswith("python") and len(words) > 1:
        if words[1] == "-m" and len(words) > 2:
            words = words[2:]
        elif words[1].startswith("-m"):
            words = [words[1][2:], *words[2:]]
    if not words or os.path.basename(words[0]) != "shellgate":
        return None
    rest = [w for w in words[1:] if not w.startswith("-")]
    if "serve" in rest[:2]:  # a console of its own (its own tokens file) answers the queue
        return "shellgate serve"
    for first, second in itertools.pairwise(rest):
        if (first, second) in GATE_ADMIN:
            return f"shellgate {first} {second}"
    return None


#: The gate's store and tokens files: a write naming a directory that holds one
#: (copying a tree over it, moving it away and another into its place) is denied
#: too. (Not its config, policy sets or audit file, which a project often keeps in
#: its workspace: there ``cp x .`` must stay possible; docs/fleet.md.)
GATE_FILES = frozenset({"gate-store", "gate-tokens"})


class ProtectedPathsLayer:
    """Deny writes to protected paths, whatever the rules say."""

    name = LAYER

    def __init__(
        self,
        config: Config,
        *,
        home: str | None = None,
        config_file: str | None = None,
        extra: Iterable[str] = (),
    ) -> None:
        self.home = home if home is not None else os.path.expanduser("~")
        entries: list[Protected] = []
        for rc in SHELL_RC_FILES:
            entries.append(Protected(os.path.join(self.home, rc), "shell-rc"))
        for name in HOME_PROTECTED:
            path = os.path.join(self.home, name.rstrip("/"))
            entries.append(Protected(path, _HOME_WHY[name]))
        xdg = os.environ.get("XDG_CONFIG_HOME")
        if xdg and os.path.isabs(xdg):  # git ignores a relative XDG_CONFIG_HOME
            entries.append(Protected(os.path.join(xdg, "git", "config"), "user-git-config"))
        workspace = os.path.abspath(config.executor.workspace)
        for rc in SHELL_RC_FILES:
            entries.append(Protected(os.path.join(workspace, rc), "shell-rc"))
        for policy_path in config.policy.paths:
            entries.append(Protected(os.path.abspath(policy_path), "gate-policy"))
        chosen = config_file or os.environ.get("SHELLGATE_CONFIG")
        if chosen:
            entries.append(Protected(os.path.abspath(chosen), "gate-config"))
        if config.audit.path is not None:
            entries.append(Protected(os.path.abspath(config.audit.path), "gate-audit"))
        entries.extend(Protected(path, "gate-store") for path in store_files(config))
        entries.extend(Protected(path, "gate-tokens") for path in token_files(config))
        for extra_path in (*config.policy.protected_paths, *extra):
            expanded = os.path.expanduser(extra_path)
            entries.append(Protected(os.path.join(workspace, expanded), "configured"))
        self._fixed = self._expand(entries)
        self._rc_names = SHELL_RC_FILES
        self._by_workspace: dict[str, tuple[Protected, ...]] = {}
        self.run_later, self.run_later_ask = later_code.configured(config.policy)

    @staticmethod
    def _expand(entries: Sequence[Protected]) -> tuple[Protected, ...]:
        out: list[Protected] = []
        for entry in entries:
            for spelled in sorted(_spellings(entry.path)):
                out.append(Protected(spelled, entry.why))
        return tuple(out)

    def _workspace_entries(self, workspace: str) -> tuple[Protected, ...]:
        """The workspace's start-up files in both spellings (kept per workspace: a
        gate has one, and the realpath of each costs a call a millisecond)."""
        found = self._by_workspace.get(workspace)
        if found is None:
            found = self._expand(
                [Protected(os.path.join(workspace, rc), "shell-rc") for rc in self._rc_names]
            )
            if len(self._by_workspace) < 64:  # a bound, not an eviction policy
                self._by_workspace[workspace] = found
        return found

    def protects(self, target: str, call: CallInfo) -> Protected | None:
        """The protected path ``target`` hits, if any (``target`` relative to the workdir)."""
        absolute = os.path.join(call.workdir, target)
        entries = self._fixed + self._workspace_entries(call.workspace)
        for spelled in _spellings(absolute):
            why = git_protected(spelled)
            if why is not None:
                return Protected(spelled, why)
            for entry in entries:
                if _inside(spelled, entry.path):
                    return entry
            for entry in self._fixed:  # a directory holding one: `cp -r x/. DIR`, `mv x DIR`
                if entry.why in GATE_FILES and spelled != "/" and _inside(entry.path, spelled):
                    return Protected(entry.path, f"{entry.why}-directory")
        return None

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        for form in segment.forms or (segment.argv,):
            admin = gate_admin(form)
            if admin is not None:
                return Decision(
                    effect="deny",
                    reason=f"runs '{admin}', which answers approvals or changes the policy "
                    "of the gate itself; an agent cannot do that through the gate",
                    layer=LAYER,
                    rule=f"{LAYER}:gate-admin",
                )
        for target in segment.write_paths:
            hit = self.protects(target, call)
            if hit is not None:
                shown = target if target == hit.path else f"{target}' (that is '{hit.path}"
                return Decision(
                    effect="deny",
                    reason=f"writes to protected path '{shown}' ({hit.why}); protected paths "
                    "cannot be written through the gate, whatever the rules say",
                    layer=LAYER,
                    rule=f"{LAYER}:{hit.why}",
                )
        return self._run_later(call, segment) or self._mentioned(call, segment)

    def _mentioned(self, call: CallInfo, segment: Segment) -> Decision | None:
        """A protected path (or a place that runs code later) named inside code the
        segment runs (``python -c 'open(".git/hooks/x", "w")'``): it may write it."""
        for word in segment.mentions:
            base = segment.cwd or call.workdir
            target = os.path.join(base, os.path.expanduser(word))
            hit = self.protects(target, call)
            place = None
            if hit is None:
                for spelled in _spellings(target):
                    place = later_code.hit(spelled, call.workspace, self.home, self.run_later)
                    if place is not None:
                        break
            if hit is None and place is None:
                continue
            what = f"the protected path '{hit.path}'" if hit is not None else \
                f"'{word}', a place that runs code later"
            return Decision(
                effect="ask",
                reason=f"code it runs names {what}, which it may write; a person must "
                "approve this, whatever the rules say",
                layer=LAYER,
                rule=f"{LAYER}:mentioned",
            )
        return None

    def _run_later(self, call: CallInfo, segment: Segment) -> Decision | None:
        """Deny (or ask) writes to places that run code later (:mod:`.later_code`)."""
        asked: Decision | None = None
        for target in segment.write_paths:
            for spelled in _spellings(os.path.join(call.workdir, target)):
                for places, effect in ((self.run_later, "deny"), (self.run_later_ask, "ask")):
                    place = later_code.hit(spelled, call.workspace, self.home, places)
                    if place is None:
                        continue
                    decision = Decision(
                        effect="deny" if effect == "deny" else "ask",
                        reason=f"writes '{target}', a place that runs code later "
                        f"('{place.entry}': another program runs what is written there when "
                        "a person or the host next touches the repository); "
                        + ("it cannot be written through the gate, whatever the rules say"
                           if effect == "deny"
                           else "writing it needs a person's approval, whatever the rules say"),
                        layer=LAYER,
                        rule=f"{LAYER}:run-later" if effect == "deny" else f"{LAYER}:run-later-ask",
                    )
                    if effect == "deny":
                        return decision
                    asked = asked or decision
        return asked
