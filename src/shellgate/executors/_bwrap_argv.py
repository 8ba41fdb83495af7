"""The bwrap argv, built by pure functions (no file system, no processes).

Two steps, both pure so both are unit-tested on their own:

1. :func:`plan_guards` turns the protected paths that lie inside writable roots
   into mounts, given a ``kind_of`` oracle that says what exists. The executor
   passes a real ``lstat``; tests pass a dict.
2. :func:`build_argv` turns a :class:`Profile` (mode, roots, guards, masks) and one
   command into the argv.

Mount order is the security argument, so it is fixed here and nowhere else:
host root (read-only, or read-write in ``full-access``) → ``/dev`` → ``/proc`` →
private ``/tmp`` → the workspace (read-only in read-only mode) or the writable
roots → guards, shallowest first (a pinned ``.git`` before the read-only
``.git/hooks`` inside it) → secret masks last, so nothing mounted later can
uncover a secret.

How a protected path inside a writable root is guarded:

* an existing file or directory → ``--ro-bind P P``; a mount point cannot be
  unlinked or renamed (``EBUSY``), so the name itself is fixed too;
* every existing directory between the root and the path → ``--bind D D``
  ("pinned"): renaming a protected path's parent (``mv .git .git2``) would carry
  the read-only mount away and free the old name, and a mount point cannot be
  renamed;
* a ``.git`` directory → pinned (``git`` must still write objects and refs);
* a missing path → a read-only placeholder on its first missing component: an
  empty read-only tmpfs for directories, ``/dev/null`` for files. bwrap has to
  create that mount point in the host directory, so a placeholder is visible on
  the host while the call runs; :attr:`Guard.placeholder` marks it for removal
  afterwards (see ``bwrap.py``).

A root without ``.git`` is guarded against becoming a git dir itself: git treats
any directory with a valid ``HEAD``, an ``objects/`` and a ``refs/`` directory as
a (bare) repository, and the host's next ``git`` there would obey a planted
``core.fsmonitor``. A :data:`TargetKind` ``"bare"`` target (``<root>/HEAD``)
becomes, only while ``<root>/.git`` is missing:

* ``HEAD`` missing → a ``/dev/null`` placeholder (an empty ``HEAD`` is invalid, and
  a mount point cannot be replaced), and nothing else: ``config/`` and ``hooks/``
  stay free for the project (see docs/sandbox.md);
* ``HEAD`` present → ``--ro-bind`` it; a missing ``objects``/``refs`` gets a
  ``/dev/null`` placeholder (not a directory, so git refuses) and one that is a
  file is fixed read-only; if both are directories the root already *is* a bare
  repository, so its ``config`` and ``hooks`` are guarded like ``.git``'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from shellgate.models import SandboxMode

PathKind = Literal["dir", "file", "missing"]
TargetKind = Literal["file", "dir", "gitdir", "bare", "existing", "present"]

#: Files of a git dir that git reads as configuration besides ``config``, as
#: target kinds: ``config.worktree`` (read under ``extensions.worktreeConfig``,
#: which only ``config`` can turn on) gets an empty placeholder when missing, which
#: git reads as an empty config; ``commondir`` (it names the directory whose
#: ``config`` and ``hooks`` git then uses) is kept read-only while it exists, but
#: a missing one gets no placeholder: git refuses an empty ``commondir``
#: ("failed to read"), so a placeholder would break every repository. The
#: analysis layer denies commands that write it (docs/sandbox.md).
GIT_CONFIG_EXTRA: tuple[tuple[str, TargetKind], ...] = (
    ("config.worktree", "file"), ("commondir", "existing"))
GuardHow = Literal["pin", "ro", "null", "empty"]

#: Start-up files guarded directly in every writable root. Each missing one costs a
#: placeholder mount per call (~0.3 ms), so this is the set shells read on their own
#: (zsh reads ``.zshenv`` even non-interactively); a root that is $HOME gets the full
#: list of :data:`shellgate.policy.protected.SHELL_RC_FILES`.
ROOT_RC_FILES: tuple[str, ...] = (
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
)  # fmt: skip

@dataclass(frozen=True, slots=True)
class Target:
    """A protected path (absolute, canonical) and what it is when it exists."""

    path: str
    kind: TargetKind


@dataclass(frozen=True, slots=True)
class Guard:
    """One mount that keeps a protected path (or its parent) from changing."""

    path: str
    how: GuardHow  # pin: --bind P P; ro: --ro-bind P P; null: /dev/null; empty: ro tmpfs
    placeholder: bool = False  # bwrap creates the mount point on the host


@dataclass(frozen=True, slots=True)
class Mask:
    """A secret hidden from every mode: a read-only tmpfs or ``/dev/null`` over it."""

    path: str
    is_dir: bool


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything but the command: what one executor configuration mounts."""

    bwrap: str
    mode: SandboxMode
    network: bool
    workspace: str
    writable_roots: tuple[str, ...] = ()
    guards: tuple[Guard, ...] = ()
    masks: tuple[Mask, ...] = ()

    @property
    def roots(self) -> tuple[str, ...]:
        """The writable roots of this mode, workspace first (none in read-only)."""
        if self.mode != "workspace-write":
            return ()
        rest = tuple(r for r in self.writable_roots if r != self.workspace)
        return (self.workspace, *rest)


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected_targets(
    roots: Sequence[str],
    home: str,
    extra: Iterable[str] = (),
    later: Sequence[tuple[str, bool]] = (),
) -> list[Target]:
    """The protected paths to consider: git internals, the bare-repository marker
    (``<root>/HEAD``, kind ``bare``) and rc files of every root, the full rc list,
    git config and ``.ssh`` of ``home``, ``extra`` (gate config, policies, audit log,
    configured paths), and the places that run code later (``later``: relative
    path, in the home rather than each root) — these as ``present`` targets,
    guarded only where they exist. Callers canonicalise; :func:`plan_guards`
    drops outsiders."""
    from shellgate.policy.protected import HOME_PROTECTED, SHELL_RC_FILES

    out: list[Target] = []
    for root in roots:
        out.append(Target(os.path.join(root, ".git"), "gitdir"))
        out.append(Target(os.path.join(root, ".git", "hooks"), "dir"))
        out.append(Target(os.path.join(root, ".git", "config"), "file"))
        for name, git_kind in GIT_CONFIG_EXTRA:  # read as config too
            out.append(Target(os.path.join(root, ".git", name), git_kind))
        out.append(Target(os.path.join(root, "HEAD"), "bare"))
        out.extend(Target(os.path.join(root, rc), "file") for rc in ROOT_RC_FILES)
    for rc in SHELL_RC_FILES:
        kind: TargetKind = "dir" if rc.endswith("conf.d") else "file"
        out.append(Target(os.path.join(home, rc), kind))
    for name in HOME_PROTECTED:  # git config and ~/.ssh, when $HOME is writable
        is_dir = name.endswith("/")
        out.append(Target(os.path.join(home, name.rstrip("/")), "dir" if is_dir else "file"))
    out.extend(Target(p, "file") for p in extra)
    for relative, in_home in later:
        for base in (home,) if in_home else roots:
            out.append(Target(os.path.join(base, relative), "present"))
    return out


def linked_git_targets(root: str, read: Callable[[str], str | None]) -> list[Target]:
    """The git dir a ``<root>/.git`` *file* (``gitdir: X``, a worktree or submodule)
    points to, and for a worktree the common dir its ``commondir`` names: each as a
    gitdir with its ``hooks`` and ``config``. ``read`` returns a regular file's text
    (``None`` when it is missing, not a regular file, or a symlink). Callers
    canonicalise; targets outside every root are dropped by :func:`plan_guards`."""
    out: list[Target] = []
    text = read(os.path.join(root, ".git"))
    if text is None or not text.startswith("gitdir:"):
        return out
    gitdir = os.path.normpath(os.path.join(root, text[len("gitdir:") :].strip()))
    dirs = [gitdir]
    common = read(os.path.join(gitdir, "commondir"))
    if common is not None and common.strip():
        dirs.append(os.path.normpath(os.path.join(gitdir, common.strip())))
    for directory in dirs:
        out.append(Target(directory, "gitdir"))
        out.append(Target(os.path.join(directory, "hooks"), "dir"))
        out.append(Target(os.path.join(directory, "config"), "file"))
    return out


def plan_guards(
    roots: Sequence[str], targets: Iterable[Target], kind_of: Callable[[str], PathKind]
) -> tuple[Guard, ...]:
    """Mounts that keep every target inside a root unwritable and its name fixed.

    Targets outside every root are skipped (they are read-only already). The
    result is ordered shallowest first and has one guard per path.
    """
    chosen: dict[str, Guard] = {}

    def add(guard: Guard) -> None:
        # A stronger guard on the same path wins: ro/null/empty over a pin.
        if guard.path not in chosen or chosen[guard.path].how == "pin":
            chosen[guard.path] = guard

    for target in targets:
        root = max((r for r in roots if inside(target.path, r)), key=len, default=None)
        if root is None or target.path == root:
            continue
        if target.kind == "bare":
            for guard in _bare_repo_guards(os.path.dirname(target.path), kind_of):
                add(guard)
            continue
        if target.kind == "existing":
            if kind_of(target.path) == "file":
                add(Guard(target.path, "ro"))
            continue
        if target.kind == "present" and kind_of(target.path) == "missing":
            continue  # no placeholder: an empty config file on the host breaks its tool
        parts = target.path[len(root.rstrip("/")) + 1 :].split("/")
        current = root.rstrip("/")
        for depth, part in enumerate(parts):
            current = f"{current}/{part}"
            last = depth == len(parts) - 1
            kind = kind_of(current)
            if kind == "missing":
                is_file = last and target.kind == "file"
                add(Guard(current, "null" if is_file else "empty", placeholder=True))
                break
            if kind == "file":
                # A file where the path needs a directory: fix it so it cannot be
                # swapped for a directory that holds the target.
                add(Guard(current, "ro"))
                break
            if last:
                add(Guard(current, "pin" if target.kind == "gitdir" else "ro"))
            else:
                add(Guard(current, "pin"))
    return tuple(sorted(chosen.values(), key=lambda g: (g.path.count("/"), g.path)))


def _bare_repo_guards(directory: str, kind_of: Callable[[str], PathKind]) -> list[Guard]:
    """Guards that keep ``directory`` (a root without ``.git``) from being a git dir."""
    base = directory.rstrip("/")
    if kind_of(f"{base}/.git") != "missing":
        return []  # a real .git wins discovery; it is guarded as a gitdir target
    head = f"{base}/HEAD"
    head_kind = kind_of(head)
    if head_kind == "missing":
        return [Guard(head, "null", placeholder=True)]
    out = [Guard(head, "ro")]
    if head_kind == "dir":
        return out  # a directory can never be a valid HEAD, and it cannot be renamed
    layout = True
    for name in ("objects", "refs"):
        path = f"{base}/{name}"
        kind = kind_of(path)
        if kind != "dir":
            layout = False
            fixed = Guard(path, "ro") if kind == "file" else None
            out.append(fixed or Guard(path, "null", placeholder=True))
    if layout:
        # HEAD, objects/ and refs/ all exist: this root is (or may be) a bare repository.
        for name, is_file in (("config", True), ("hooks", False)):
            path = f"{base}/{name}"
            kind = kind_of(path)
            if kind == "missing":
                out.append(Guard(path, "null" if is_file else "empty", placeholder=True))
            else:
                out.append(Guard(path, "ro"))
    return out


def workdir_allowed(profile: Profile, cwd: str) -> bool:
    """Confined modes run only inside the workspace; full-access anywhere."""
    return profile.mode == "full-access" or inside(cwd, profile.workspace)


def seen_as_is(path: str, profile: Profile) -> bool:
    """Whether the sandbox sees the host's ``path`` at that path, read-only: not under
    its private ``/tmp``, a writable root (a command could replace it for the next
    call), a guard or a mask. Then it needs no bind mount of its own (~0.3 ms)."""
    if profile.mode == "full-access":
        return True
    hidden = ("/tmp", *profile.roots, *(g.path for g in profile.guards))  # noqa: S108
    hidden += tuple(m.path for m in profile.masks)
    return os.path.isabs(path) and not any(inside(path, h) for h in hidden)


def build_argv(
    profile: Profile,
    *,
    shell: str,
    command: str,
    cwd: str,
    seccomp_fd: int | None,
    runner: Sequence[str] = (),
    binds: Sequence[tuple[str, str]] = (),
    info_fd: int | None = None,
) -> list[str]:
    """The complete bwrap argv for one command (``shell`` absolute, ``cwd`` canonical).

    ``runner`` goes between bwrap's ``--`` and the shell (the status supervisor);
    ``binds`` are (host path, sandbox path) read-only binds of the gate's own
    helpers, laid after the private ``/tmp`` so they exist whatever the host
    path is (a checkout under ``/tmp`` is hidden by that tmpfs). ``info_fd``:
    bwrap writes its JSON there (the sandbox's first process, ``child-pid``)
    and closes it before the command runs.
    """
    if not os.path.isabs(shell):
        raise ValueError(f"the shell must be an absolute path, got {shell!r}")
    argv = [
        profile.bwrap,
        "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        *([] if profile.network else ["--unshare-net"]),
        "--new-session", "--die-with-parent",
        "--disable-userns", "--assert-userns-disabled",
        "--cap-drop", "ALL",
    ]  # fmt: skip
    if profile.mode == "full-access":
        argv += ["--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    else:
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]  # noqa: S108 - a private tmpfs, not a host path
        if profile.mode == "read-only":
            # Visible even when it lives under /tmp, which the tmpfs above hides.
            argv += ["--ro-bind", profile.workspace, profile.workspace]
        for root in profile.roots:
            argv += ["--bind", root, root]
        for guard in profile.guards:
            argv += _guard_args(guard)
    for source, dest in binds:
        argv += ["--ro-bind", source, dest]
    for mask in profile.masks:
        if mask.is_dir:
            argv += ["--tmpfs", mask.path, "--remount-ro", mask.path]
        else:
            argv += ["--ro-bind", "/dev/null", mask.path]
    argv += ["--chdir", cwd]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    argv += ["--", *runner, shell, "-c", command]
    return argv


def _guard_args(guard: Guard) -> list[str]:
    if guard.how == "pin":
        return ["--bind", guard.path, guard.path]
    if guard.how == "ro":
        return ["--ro-bind", guard.path, guard.path]
    if guard.how == "null":
        return ["--ro-bind", "/dev/null", guard.path]
    return ["--tmpfs", guard.path, "--remount-ro", guard.path]
