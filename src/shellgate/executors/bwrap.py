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
  are made and removed by walking ``O_NOFOLLOW`` directory fds from their writable
  root, and removed only while no other sandbox (of any gate process) may still
  mount them. They persist for the executor's life; what a dead gate left is
  removed by the next one (``_bwrap_state``).
* The profile is re-checked per call (``_bwrap_survey``: what exists now decides
  ro-bind vs. placeholder), so a ``.git`` created by an earlier call is protected
  in the next; it is recomputed only when a watched path changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Iterable

from shellgate.config import Config
from shellgate.errors import ExecutionError, SandboxUnavailable
from shellgate.executors import _bwrap_cgroup as cgroup
from shellgate.executors import _bwrap_placeholders as placeholders
from shellgate.executors import _bwrap_state as state
from shellgate.executors._bwrap_argv import (
    Guard,
    Profile,
    build_argv,
    inside,
    seen_as_is,
    workdir_allowed,
)
from shellgate.executors._bwrap_probe import diagnose, find_bwrap, gate_cgroup, run_probe
from shellgate.executors._bwrap_survey import Inputs, Survey
from shellgate.executors._output import SpillStore
from shellgate.executors._process import signal_name
from shellgate.executors._seccomp import SeccompError, build_filter, filter_fd
from shellgate.executors.base import ExecRequest, ExecSpec, Executor, SpawnPlan
from shellgate.models import MODE_ORDER, OutputView, SandboxMode
from shellgate.policy import later_code
from shellgate.policy.gate_files import store_files, token_files
from shellgate.policy.secrets import homes, secret_paths

#: stderr texts that mean the sandbox (not the command's own logic) said no.
DENIAL_SIGNATURES: tuple[str, ...] = (
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
)
_log = logging.getLogger("shellgate.executors")


#: Where the status supervisor is bound inside confined sandboxes (their /tmp is private).
HELPER_INSIDE = "/tmp/.shellgate-sg-exec"  # noqa: S108 - inside the sandbox's own tmpfs


class BwrapExecutor(Executor):
    """CI agents and shared hosts: bubblewrap namespaces, seccomp, masked secrets."""

    kind = "bwrap"
    sandboxes = True

    def __init__(self, config: Config, *, spill: SpillStore | None = None) -> None:
        super().__init__(config, spill=spill)
        self.homes = homes()  # the same homes the protected-reads layer reads
        self._bwrap: str | None = None
        self._program: bytes | None = None  # the compiled seccomp filter
        self._cgroup_procs: str | None = None  # the gate's pids cgroup (root gates only)
        self._cgroup_tid: int | None = None  # the spawning thread, moved into that cgroup
        self._survey: Survey | None = None
        self._record: state.GateRecord | None = None
        self._held = placeholders.hold_shared([])  # every writable root, for our life

    # -- start-up ----------------------------------------------------------------

    async def _probe(self) -> None:
        sandbox = self.config.sandbox
        self._bwrap = find_bwrap(sandbox.bwrap_path, self.untrusted)
        await asyncio.to_thread(state.sweep)  # what dead gates left, before we hold anything
        self._record = state.GateRecord.create(spill=str(self.spill.path))
        self._survey = Survey(self._inputs(self._bwrap), self._recorded)
        if sandbox.seccomp:
            try:
                self._program = build_filter()
            except SeccompError as exc:
                if not sandbox.allow_without_seccomp:
                    raise SandboxUnavailable(
                        f"cannot build the seccomp filter ({exc}); set "
                        "sandbox.allow_without_seccomp = true to run without it"
                    ) from exc
        if os.geteuid() == 0:
            limit = self.config.executor.limits.processes
            self._cgroup_procs = await asyncio.to_thread(gate_cgroup, limit)
            if self._cgroup_procs is not None:
                self._record.cgroup = os.path.dirname(self._cgroup_procs)
                self._record.save()
                # Children of this (the spawning) thread are born in the cgroup.
                tid = threading.get_native_id()
                if cgroup.join_thread(self._cgroup_procs, tid):
                    self._cgroup_tid = tid
        spec = self.resolve(ExecRequest(command="true"))
        plan = self._spawn_plan(spec)
        try:
            code, stderr = await run_probe(plan, spec)
        finally:
            if plan.cleanup is not None:
                plan.cleanup()
        if code != 0:
            raise SandboxUnavailable(diagnose(code, stderr))

    async def aclose(self) -> None:
        await super().aclose()
        if self._cgroup_procs is not None:
            if self._cgroup_tid is not None:
                cgroup.leave_threads(self._cgroup_procs)
            if await asyncio.to_thread(cgroup.remove, self._cgroup_procs):
                if self._record is not None:
                    self._record.cgroup = None
            else:  # left on record: the next gate's sweep removes it
                _log.warning("cannot remove the pids cgroup %s (still busy)", self._cgroup_procs)
        await asyncio.to_thread(self._release_placeholders)

    def _release_placeholders(self) -> None:
        state.release(self._record, self._held)
        self._record = None

    def _inputs(self, bwrap: str) -> Inputs:
        sandbox = self.config.sandbox
        ws = str(self.workspace)
        return Inputs(
            bwrap=bwrap,
            network=sandbox.network,
            workspace=ws,
            writable_roots=tuple(str(r) for r in sandbox.writable_roots),
            homes=tuple(self.homes),
            # The one secret list (shellgate.policy.secrets), which also asks on reads.
            secrets=tuple(secret_paths(self.config, home_dirs=self.homes, workspace=ws)),
            gate_paths=tuple(self._gate_paths()),
            later=tuple(later_code.sandbox_entries(self.config.policy)),
            records=state.gates_dir(),
        )

    def _recorded(self) -> list[state.Placeholder]:
        return state.recorded_placeholders(state.gates_dir())

    # -- one call ------------------------------------------------------------------

    def profile(self, mode: SandboxMode) -> Profile:
        """The mounts for ``mode`` as the file system stands now."""
        return self._profile(mode)[0]

    def _profile(self, mode: SandboxMode) -> tuple[Profile, frozenset[str]]:
        if self._bwrap is None or self._survey is None:
            raise SandboxUnavailable("the sandbox was not probed")
        return self._survey.profile(mode)

    def _spawn_plan(self, spec: ExecSpec) -> SpawnPlan:
        profile, existing = self._profile(spec.sandbox_mode)
        cwd = str(spec.cwd)
        if not workdir_allowed(profile, cwd):
            raise ExecutionError(
                f"working directory is outside the workspace: {cwd} (under {spec.sandbox_mode} "
                f"mode commands run only inside {profile.workspace})"
            )
        if any(root not in self._held.fds for root in profile.roots):
            for root in profile.roots:
                self._held.add(root)  # a sandbox mounts guards here: hold it while we live
            # Surveyed again now that no sweep of a dead gate's placeholders can
            # run under these roots (it needs their lock exclusively).
            profile, existing = self._profile(spec.sandbox_mode)
        missing = [g for g in profile.guards if g.placeholder and g.path not in existing]
        if missing:
            self._make_placeholders(missing, profile.roots)
        with contextlib.ExitStack() as stack:
            # Every resource is paired with its release at once; on success the
            # stack moves into the plan's cleanup, which runs after the exit.
            fd: int | None = None
            if self._program is not None:
                fd = filter_fd(self._program)
                stack.callback(_close_quietly, fd)
            runner: list[str] = []
            binds: list[tuple[str, str]] = []
            status_r: int | None = None
            passed: list[int] = [] if fd is None else [fd]
            # bwrap names the sandbox's first process here; it outlives bwrap
            # and is reparented to the gate, which must stop and reap it.
            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(_close_quietly, info_r)
            passed.append(info_w)
            after_spawn: tuple[int, ...] = (info_w,)
            if self.hardening.helper is not None:
                # A supervisor inside reports the command's real wait status.
                status_r, status_w = os.pipe2(os.O_CLOEXEC)
                stack.callback(_close_quietly, status_r)
                inside = os.path.realpath(self.hardening.helper)
                if not seen_as_is(inside, profile):
                    inside = HELPER_INSIDE  # on the private /tmp: visible wherever we live
                    binds.append((self.hardening.helper, inside))
                runner = [inside, "--supervise", str(status_w), "--"]
                passed.append(status_w)
                after_spawn += (status_w,)
            # The bounding set stays: bwrap run by root needs CAP_SETUID/SETGID in
            # this namespace to write its uid/gid maps; --cap-drop ALL empties it
            # inside before the command runs.
            argv = [
                *self.hardening.prefix(
                    spec.limits, drop_caps=False, cgroup_procs=self._cgroup_to_join()
                ),
                *build_argv(
                    profile,
                    shell=spec.shell,
                    command=spec.command,
                    cwd=cwd,
                    seccomp_fd=fd,
                    runner=runner,
                    binds=binds,
                    info_fd=info_w,
                ),
            ]
            release = stack.pop_all()
        return SpawnPlan(
            argv=argv,
            pass_fds=tuple(passed),
            cleanup=release.close,
            term_depth=2,  # below bwrap's monitor and its PID-namespace init
            status_fd=status_r,
            info_fd=info_r,
            close_after_spawn=after_spawn,
            pid_namespace=True,  # --unshare-pid: always in the profile (mandated)
        )

    def _cgroup_to_join(self) -> str | None:
        """The cgroup a call's first process must join itself: none when it is
        born there (spawned by the thread we moved in; checked per call)."""
        procs, tid = self._cgroup_procs, self._cgroup_tid
        if procs is None:
            return None
        if tid is not None and tid == threading.get_native_id() and cgroup.thread_in(procs, tid):
            return None
        return procs

    def _make_placeholders(self, guards: list[Guard], roots: tuple[str, ...]) -> None:
        """Make the missing placeholders on the host and put them on record first
        thing after, so they outlive no gate (see ``_bwrap_state``)."""
        record = self._record
        assert record is not None
        for root, items in _by_root(guards, roots).items():
            self._held.add(root)  # before anything exists that a sweeper could take
            for guard in items:
                made = placeholders.make(root, guard.path, guard.how)
                if made is not None:
                    record.placeholders[guard.path] = state.Placeholder(
                        root, guard.path, guard.how, *made
                    )
        record.save()

    def _gate_paths(self) -> list[str]:
        """The gate's own files: config, policy sets, audit log, configured protected paths."""
        cfg = self.config
        paths = [str(p) for p in cfg.policy_paths()]  # the baseline set too
        chosen = os.environ.get("SHELLGATE_CONFIG")
        if chosen:
            paths.append(chosen)
        if cfg.audit.path is not None:
            paths.append(str(cfg.audit.path))
        # SQLite stores and tokens files: the main file only (a placeholder for a
        # missing -wal/-journal would be a file SQLite itself must create and delete).
        paths += [*store_files(cfg, side_files=False), *token_files(cfg)]
        paths += [
            os.path.join(str(self.workspace), os.path.expanduser(p))
            for p in cfg.policy.protected_paths
        ]
        return [os.path.abspath(p) for p in paths]

    def _ending(
        self, returncode: int | None, reported: str | None
    ) -> tuple[int | None, str | None]:
        # The supervisor inside tells exactly how the command ended. Without it
        # (no sg-exec helper on this host) bwrap's own code is all there is: it
        # exits 128+N when its command dies of signal N, so read that as the
        # signal — a command that itself exits 129..192 then reads as a signal
        # too (docs/sandbox.md, "known limits").
        code, sig = super()._ending(returncode, reported)
        if reported is None and sig is None and code is not None and 128 < code <= 128 + 64:
            return None, signal_name(128 - code)
        return code, sig

    # -- results ---------------------------------------------------------------------

    def _denied(self, spec: ExecSpec, exit_code: int | None, stderr: OutputView) -> bool:
        if exit_code is None or exit_code <= 0 or spec.sandbox_mode == "full-access":
            return False
        return any(sig in stderr.text for sig in DENIAL_SIGNATURES)

    def _can_escalate(self, mode: SandboxMode) -> bool:
        return self.config.sandbox.escalation and MODE_ORDER.index(mode) < len(MODE_ORDER) - 1


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _by_root(guards: Iterable[Guard], roots: tuple[str, ...]) -> dict[str, list[Guard]]:
    out: dict[str, list[Guard]] = {}
    for guard in guards:
        root = max((r for r in roots if inside(guard.path, r)), key=len)
        out.setdefault(root, []).append(guard)
    return out
