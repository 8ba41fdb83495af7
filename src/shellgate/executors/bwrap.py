"""The bwrap executor: the same command inside bubblewrap namespaces.

What a call looks like::

    sg-exec (pdeathsig, no_new_privs, rlimits, no capabilities)
      └─ bwrap  (new user/pid/ipc/uts/cgroup[/net] namespaces, --new-session,
                 --die-with-parent, --cap-drop ALL, --disable-userns,
                 mounts of _bwrap_argv, seccomp filter from _seccomp)
           └─ /abs/shell -c COMMAND   (in the canonical workdir)

Invariants (the ones the base class does not already own):

* Fail closed: :meth:`BwrapExecutor._probe` runs ``true`` under the real profile
  once; any failure (no bwrap, user namespaces off, AppArmor, no seccomp filter
  unless ``allow_without_seccomp``) makes every call raise ``SandboxUnavailable``.
  Nothing ever falls back to running unconfined.
* A confined mode never starts a command whose workdir is outside the workspace.
* The host side never follows a path the sandbox could have planted: placeholders
  are removed by walking ``O_NOFOLLOW`` directory fds from their writable root, and
  only while no other sandbox (of any gate process) may still mount them.
* The filesystem is surveyed per call (what exists now decides ro-bind vs.
  placeholder), so a ``.git`` created by an earlier call is protected in the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import os
import pwd
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable

from shellgate.config import Config
from shellgate.errors import ExecutionError, SandboxUnavailable
from shellgate.executors._bwrap_argv import (
    HOME_SECRETS,
    Guard,
    Mask,
    PathKind,
    Profile,
    Target,
    build_argv,
    inside,
    plan_guards,
    protected_targets,
    workdir_allowed,
)
from shellgate.executors._output import SpillStore
from shellgate.executors._seccomp import SeccompError, build_filter, filter_fd
from shellgate.executors.base import ExecRequest, ExecSpec, Executor, SpawnPlan
from shellgate.models import MODE_ORDER, OutputView, SandboxMode

#: stderr texts that mean the sandbox (not the command's own logic) said no.
DENIAL_SIGNATURES: tuple[str, ...] = (
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
)
_PROBE_TIMEOUT_S = 15.0


def _kind_of(path: str) -> PathKind:
    """What is at ``path`` without following a final symlink."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file"


def _homes() -> list[str]:
    """$HOME and the password database's home (they may differ; mask both)."""
    homes = [os.path.realpath(os.path.expanduser("~"))]
    with contextlib.suppress(KeyError):
        homes.append(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    return list(dict.fromkeys(homes))


class BwrapExecutor(Executor):
    """CI agents and shared hosts: bubblewrap namespaces, seccomp, masked secrets."""

    kind = "bwrap"
    sandboxes = True

    def __init__(self, config: Config, *, spill: SpillStore | None = None) -> None:
        super().__init__(config, spill=spill)
        self.homes = _homes()
        self._bwrap: str | None = None
        self._program: bytes | None = None  # the compiled seccomp filter

    # -- start-up ----------------------------------------------------------------

    async def _probe(self) -> None:
        sandbox = self.config.sandbox
        self._bwrap = self._find_bwrap(sandbox.bwrap_path)
        if sandbox.seccomp:
            try:
                self._program = build_filter()
            except SeccompError as exc:
                if not sandbox.allow_without_seccomp:
                    raise SandboxUnavailable(
                        f"cannot build the seccomp filter ({exc}); set "
                        "sandbox.allow_without_seccomp = true to run without it"
                    ) from exc
        spec = self.resolve(ExecRequest(command="true"))
        plan = self._spawn_plan(spec)
        try:
            code, stderr = await _run_probe(plan, spec)
        finally:
            if plan.cleanup is not None:
                plan.cleanup()
        if code != 0:
            raise SandboxUnavailable(diagnose(code, stderr))

    @staticmethod
    def _find_bwrap(configured: str) -> str:
        path = configured if os.path.isabs(configured) else shutil.which(configured)
        if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise SandboxUnavailable(f"bubblewrap is not installed (no executable {configured!r})")
        return os.path.realpath(path)

    # -- one call ------------------------------------------------------------------

    def profile(self, mode: SandboxMode) -> Profile:
        """The mounts for ``mode`` as the file system stands now."""
        sandbox = self.config.sandbox
        if self._bwrap is None:
            raise SandboxUnavailable("the sandbox was not probed")
        roots = tuple(
            dict.fromkeys(os.path.realpath(r) for r in sandbox.writable_roots if os.path.isdir(r))
        )
        base = Profile(
            bwrap=self._bwrap,
            mode=mode,
            network=sandbox.network,
            workspace=str(self.workspace),
            writable_roots=roots,
            masks=tuple(self._masks()),
        )
        if mode != "workspace-write":
            return base
        targets: list[Target] = []
        for home in self.homes:
            targets += protected_targets(base.roots, home, self._gate_paths())
        canonical = [Target(os.path.realpath(t.path), t.kind) for t in targets]
        guards = plan_guards(base.roots, canonical, _kind_of)
        return dataclasses.replace(base, guards=guards)

    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        profile = self.profile(spec.sandbox_mode)
        cwd = str(spec.cwd)
        if not workdir_allowed(profile, cwd):
            raise ExecutionError(
                f"working directory is outside the workspace: {cwd} (under {spec.sandbox_mode} "
                f"mode commands run only inside {profile.workspace})"
            )
        keep = {os.path.realpath(p) for p in self._gate_paths()}
        transient = [g for g in profile.guards if g.placeholder and g.path not in keep]
        by_root = _by_root(transient, profile.roots)
        held = hold_shared(sorted(by_root))
        for root, guards in by_root.items():
            _register(root, guards)  # registered under the shared lock: nobody removes them now
        fd: int | None = None
        try:
            if self._program is not None:
                fd = filter_fd(self._program)
            # The bounding set stays: bwrap run by root needs CAP_SETUID/SETGID in
            # this namespace to write its uid/gid maps; --cap-drop ALL empties it
            # inside before the command runs.
            argv = [
                *self.hardening.prefix(spec.limits, drop_caps=False),
                *build_argv(
                    profile, shell=spec.shell, command=spec.command, cwd=cwd, seccomp_fd=fd
                ),
            ]
        except BaseException:
            if fd is not None:
                os.close(fd)
                held.release()
            raise
        done = False

        def cleanup() -> None:
            nonlocal done
            if done:
                return
            done = True
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
            held.remove_if_last()

        return SpawnPlan(argv=argv, pass_fds=() if fd is None else (fd,), cleanup=cleanup)

    def _masks(self) -> Iterable[Mask]:
        seen: set[str] = set()
        names = [os.path.join(h, s) for h in self.homes for s in HOME_SECRETS]
        configured = [
            os.path.join(str(self.workspace), os.path.expanduser(p))
            for p in self.config.sandbox.deny_read
        ]
        for path in (*names, *configured):
            real = os.path.realpath(path)
            if real in seen or not os.path.lexists(real):
                continue
            seen.add(real)
            yield Mask(real, os.path.isdir(real))

    def _gate_paths(self) -> list[str]:
        """The gate's own files: config, policy sets, audit log, configured protected paths."""
        cfg = self.config
        paths = [str(p) for p in cfg.policy.paths]
        chosen = os.environ.get("SHELLGATE_CONFIG")
        if chosen:
            paths.append(chosen)
        if cfg.audit.path is not None:
            paths.append(str(cfg.audit.path))
        paths += [
            os.path.join(str(self.workspace), os.path.expanduser(p))
            for p in cfg.policy.protected_paths
        ]
        return [os.path.abspath(p) for p in paths]

    # -- results ---------------------------------------------------------------------

    def _denied(self, spec: ExecSpec, exit_code: int | None, stderr: OutputView) -> bool:
        if exit_code is None or exit_code <= 0 or spec.sandbox_mode == "full-access":
            return False
        return any(sig in stderr.text for sig in DENIAL_SIGNATURES)

    def _can_escalate(self, mode: SandboxMode) -> bool:
        return self.config.sandbox.escalation and MODE_ORDER.index(mode) < len(MODE_ORDER) - 1


def _by_root(guards: Iterable[Guard], roots: tuple[str, ...]) -> dict[str, list[Guard]]:
    out: dict[str, list[Guard]] = {}
    for guard in guards:
        root = max((r for r in roots if inside(guard.path, r)), key=len)
        out.setdefault(root, []).append(guard)
    return out


async def _run_probe(plan: SpawnPlan, spec: ExecSpec) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *plan.argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(spec.cwd),
        env=spec.env,
        pass_fds=plan.pass_fds,
        start_new_session=True,
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), _PROBE_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()
        return -1, f"the probe did not finish within {_PROBE_TIMEOUT_S:.0f} s"
    assert proc.returncode is not None
    return proc.returncode, err.decode("utf-8", "replace")


def _sysctl(name: str) -> str | None:
    try:
        with open(f"/proc/sys/{name.replace('.', '/')}") as fh:
            return fh.read().strip()
    except OSError:
        return None


def diagnose(code: int, stderr: str, sysctl: Callable[[str], str | None] = _sysctl) -> str:
    """Name why the probe failed: the kernel setting at fault, else bwrap's own words."""
    read = sysctl
    text = " ".join(stderr.split())[-300:] or "(no output)"
    if read("user.max_user_namespaces") == "0":
        return "user namespaces are disabled (user.max_user_namespaces = 0)"
    if os.geteuid() != 0 and read("kernel.unprivileged_userns_clone") == "0":
        return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"
    if read("kernel.apparmor_restrict_unprivileged_userns") == "1" and (
        "ermission denied" in stderr or "not permitted" in stderr
    ):
        return (
            "AppArmor restricts unprivileged user namespaces "
            "(kernel.apparmor_restrict_unprivileged_userns = 1); allow bwrap in an AppArmor "
            f"profile. bwrap said: {text}"
        )
    if "Unknown option" in stderr:
        return f"this bubblewrap is too old (0.8 or later is needed): {text}"
    return f"bwrap cannot start a sandbox here (exit {code}): {text}"


# -- placeholders --------------------------------------------------------------------
#
# A placeholder is a mount point bwrap had to create on the host for a protected
# path that did not exist. It must go once no sandbox mounts it any more, and not
# before: deleting a mount point that another mount namespace still uses is allowed
# and silently detaches that mount, which would free the protected name inside a
# running sandbox. So every call holds a shared flock per writable root (one open
# file description per call, so calls of this process exclude each other too) and
# removal happens only under an exclusive, non-blocking flock. Whoever gets it
# removes every placeholder this process registered under that root.

_LOCK_WAIT_S = 0.5
_registry: dict[str, dict[str, str]] = {}  # root -> {placeholder path: how}


def _lock_dir() -> str:
    """A private directory for the lock files (never inside a confined view)."""
    path = os.path.join(tempfile.gettempdir(), f"shellgate-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ExecutionError(f"unsafe lock directory (not a private directory of ours): {path}")
    return path


class _Held:
    """The shared flocks of one call, by writable root."""

    def __init__(self, fds: dict[str, int]) -> None:
        self.fds = fds

    def release(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}

    def remove_if_last(self) -> None:
        try:
            for root, fd in self.fds.items():
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # another sandbox may still mount them; the last one out cleans
                for path, how in sorted(_registry.pop(root, {}).items(), reverse=True):
                    _remove_placeholder(root, path, how)
        finally:
            self.release()


def hold_shared(roots: list[str]) -> _Held:
    fds: dict[str, int] = {}
    if not roots:
        return _Held(fds)
    directory = _lock_dir()
    held = _Held(fds)
    try:
        for root in roots:
            name = hashlib.sha256(root.encode()).hexdigest()[:32] + ".lock"
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(os.path.join(directory, name), flags, 0o600)
            fds[root] = fd
            deadline = time.monotonic() + _LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise ExecutionError(
                            f"protected-path placeholders under {root} are locked by another "
                            "process; try again"
                        ) from None
                    time.sleep(0.005)  # an exclusive holder only removes a few files
    except BaseException:
        held.release()
        raise
    return held


def _register(root: str, guards: Iterable[Guard]) -> None:
    entry = _registry.setdefault(root, {})
    for guard in guards:
        entry[guard.path] = guard.how


def _remove_placeholder(root: str, path: str, how: str) -> None:
    """Remove an empty placeholder, walking from ``root`` without following symlinks."""
    parts = path[len(root.rstrip("/")) + 1 :].split("/")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        dfd = os.open(root, flags)
    except OSError:
        return
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags, dir_fd=dfd)
            os.close(dfd)
            dfd = nxt
        st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        if how == "null" and stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(parts[-1], dir_fd=dfd)
        elif how == "empty" and stat.S_ISDIR(st.st_mode):
            os.rmdir(parts[-1], dir_fd=dfd)  # ENOTEMPTY: someone put content there; keep it
    except OSError:
        pass  # gone, replaced or non-empty: never remove what is not ours
    finally:
        os.close(dfd)
