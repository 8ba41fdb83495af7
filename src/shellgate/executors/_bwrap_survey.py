"""The file system as the profile sees it, computed once and re-checked per call.

A profile (roots, guards, masks) is a function of what exists at a few dozen
paths: every protected path, mask and root, every directory above them, the
``.git`` file of a root (its pointer), a worktree's ``commondir``, and which
placeholders are on record. Computing it canonicalises ~50 paths (``realpath``
in Python, ~2 ms a call); re-checking it is one ``lstat`` per watched path
(~0.1 ms). So :class:`Survey` computes the profile when the *signature* of those
paths changed — a protected path appearing or disappearing, a directory becoming
a file, a pointer rewritten, a placeholder filled — and otherwise returns the
one it has.

The signature holds each watched path's type (missing, file, directory) and,
where the content matters (a root's ``.git`` file, a ``commondir``, a recorded
placeholder), its inode, size and mtime, and for a placeholder directory whether
it is empty. A symbolic link anywhere among the watched paths makes the
canonical form depend on paths outside the set, so such a layout is computed
afresh on every call (never cached).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
from collections.abc import Callable, Iterable

from shellgate.executors._bwrap_argv import (
    Mask,
    PathKind,
    Profile,
    Target,
    inside,
    linked_git_targets,
    plan_guards,
    protected_targets,
)
from shellgate.executors._bwrap_state import Placeholder, intact
from shellgate.models import SandboxMode

Signature = tuple[object, ...]


class _Uncachable(Exception):
    """A symbolic link among the watched paths."""


def read_small(path: str) -> str | None:
    """The first 4 KiB of a regular file (``None``: missing, a symlink, or not regular)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, 4096).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _canonical(target: Target) -> str:
    """A target's physical path; a ``bare`` marker keeps its own name (``<root>/HEAD``
    names the root it guards even when ``HEAD`` is a symlink)."""
    if target.kind == "bare":
        head, name = os.path.split(target.path)
        return os.path.join(os.path.realpath(head), name)
    return os.path.realpath(target.path)


def _ancestors(path: str) -> Iterable[str]:
    path = os.path.normpath(path)
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


@dataclasses.dataclass(frozen=True)
class Inputs:
    """What the profile is computed from, besides the file system."""

    bwrap: str
    network: bool
    workspace: str
    writable_roots: tuple[str, ...]
    homes: tuple[str, ...]
    secrets: tuple[str, ...]  # absolute: shellgate.policy.secrets.secret_paths
    gate_paths: tuple[str, ...]  # absolute
    records: str  # the directory of gate records (its mtime: a record changed)
    #: Places that run code later (shellgate.policy.later_code): (relative path, in
    #: the home rather than each writable root); guarded where they exist.
    later: tuple[tuple[str, bool], ...] = ()


@dataclasses.dataclass
class _Entry:
    signature: Signature | None
    watched: tuple[str, ...]
    detailed: frozenset[str]
    empties: tuple[str, ...]
    profile: Profile
    placeholders: frozenset[str]


class Survey:
    """The profile of each mode, recomputed only when its signature changed."""

    def __init__(self, inputs: Inputs, recorded: Callable[[], list[Placeholder]]) -> None:
        self.inputs = inputs
        self._recorded = recorded
        self._cache: dict[SandboxMode, _Entry] = {}
        self.computed = 0  # full computations (tests and the benchmark read it)

    def profile(self, mode: SandboxMode) -> tuple[Profile, frozenset[str]]:
        """The profile for ``mode`` and the placeholder paths that exist already."""
        entry = self._cache.get(mode)
        if entry is not None and entry.signature is not None:
            try:
                now = _signature(entry.watched, entry.detailed, entry.empties)
            except _Uncachable:
                now = None
            if now == entry.signature:
                return entry.profile, entry.placeholders
        entry = self._compute(mode)
        self._cache[mode] = entry
        return entry.profile, entry.placeholders

    def _compute(self, mode: SandboxMode) -> _Entry:
        self.computed += 1
        inp = self.inputs
        watched: list[str] = [inp.records]
        detailed: set[str] = {inp.records}
        for raw in inp.writable_roots:
            watched += _ancestors(os.path.abspath(raw))
        roots = tuple(
            dict.fromkeys(os.path.realpath(r) for r in inp.writable_roots if os.path.isdir(r))
        )
        mask_paths = list(inp.secrets)
        masks: list[Mask] = []
        seen: set[str] = set()
        for path in mask_paths:
            watched += _ancestors(path)
            real = os.path.realpath(path)
            if real in seen or not os.path.lexists(real):
                continue
            seen.add(real)
            masks.append(Mask(real, os.path.isdir(real)))
        base = Profile(
            bwrap=inp.bwrap,
            mode=mode,
            network=inp.network,
            workspace=inp.workspace,
            writable_roots=roots,
            masks=tuple(masks),
        )
        placeholders: set[str] = set()
        empties: list[str] = []
        profile = base
        if mode == "workspace-write":
            records = [
                p
                for p in self._recorded()
                if any(inside(p.path, r) for r in base.roots) and intact(p)
            ]
            for p in records:
                detailed.add(p.path)
                if p.how == "empty":
                    empties.append(p.path)
            placeholders = {p.path for p in records}
            targets: list[Target] = []
            for home in inp.homes:
                targets += protected_targets(base.roots, home, inp.gate_paths, inp.later)
            for root in base.roots:
                dot_git = os.path.join(root, ".git")
                detailed.add(dot_git)
                linked = linked_git_targets(root, read_small)
                for t in linked:
                    if t.kind == "gitdir":
                        common = os.path.join(t.path, "commondir")
                        watched += _ancestors(common)
                        detailed.add(common)
                targets += linked
            canonical = [Target(_canonical(t), t.kind) for t in targets]
            for t in (*targets, *canonical):
                watched += _ancestors(t.path)
                if t.kind == "bare":
                    base_dir = os.path.dirname(t.path)
                    for name in (".git", "objects", "refs", "config", "hooks"):
                        watched.append(os.path.join(base_dir, name))

            def kind_of(path: str) -> PathKind:
                return "missing" if path in placeholders else _kind_of(path)

            profile = dataclasses.replace(base, guards=plan_guards(base.roots, canonical, kind_of))
        order = tuple(dict.fromkeys(watched))
        frozen_detailed = frozenset(detailed)
        try:
            signature: Signature | None = _signature(order, frozen_detailed, tuple(empties))
        except _Uncachable:
            signature = None
        return _Entry(
            signature, order, frozen_detailed, tuple(empties), profile, frozenset(placeholders)
        )


def _kind_of(path: str) -> PathKind:
    """What is at ``path`` without following a final symlink."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file"


def _signature(
    watched: tuple[str, ...], detailed: frozenset[str], empties: tuple[str, ...]
) -> Signature:
    out: list[object] = []
    for path in watched:
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            out.append(None)
            continue
        except OSError as exc:  # EACCES and the like: no promise about it
            raise _Uncachable from exc
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            raise _Uncachable
        if path in detailed:
            out.append((stat.S_IFMT(mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        else:
            out.append(stat.S_ISDIR(mode))
    for path in empties:
        empty = False
        with contextlib.suppress(OSError), os.scandir(path) as it:
            empty = next(it, None) is None
        out.append(empty)
    return tuple(out)
