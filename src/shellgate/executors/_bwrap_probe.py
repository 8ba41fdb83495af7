"""The bwrap executor's start-up: where bwrap is, the gate's pids cgroup, the probe.

:meth:`BwrapExecutor._probe <shellgate.executors.bwrap.BwrapExecutor._probe>` runs
``true`` under the real profile once (:func:`run_probe`); when that fails,
:func:`diagnose` names the kernel setting at fault, else quotes bwrap, and every
call then raises ``SandboxUnavailable`` (fail closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Callable, Sequence

from shellgate.errors import SandboxUnavailable
from shellgate.executors import _bwrap_cgroup as cgroup
from shellgate.executors._ending import sandbox_child
from shellgate.executors._process import reap_orphan
from shellgate.executors._which import find_program
from shellgate.executors.requests import ExecSpec, SpawnPlan

PROBE_TIMEOUT_S = 15.0
_log = logging.getLogger("shellgate.executors")


def find_bwrap(configured: str, untrusted: Sequence[str] = ()) -> str:
    """The real path of the configured bwrap (a name is looked up on PATH, never
    in ``untrusted``: the roots a sandboxed call can write, see ``_which``)."""
    path = find_program(configured, untrusted)
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise SandboxUnavailable(f"bubblewrap is not installed (no executable {configured!r})")
    return os.path.realpath(path)


def gate_cgroup(max_pids: int) -> str | None:
    """The ``cgroup.procs`` of this gate's pids cgroup; a warning when there is none.

    One cgroup per gate, not per call, and calls are born in it rather than moved
    there (see ``cgroup.join_thread``): on v1 every move waits for an RCU grace
    period, ~10 ms a call on a loaded host. So ``pids.max`` bounds all of the
    gate's sandboxed processes together, much as ``RLIMIT_NPROC`` bounds all
    processes of a uid.
    """
    found = cgroup.find_base()
    if found is None:
        _log.warning(
            "no writable pids cgroup: under a root gate the sandbox's process limit "
            "(RLIMIT_NPROC) does not bind, so fork bombs are stopped only by the timeout"
        )
        return None
    try:
        return cgroup.create(found, f"shellgate-{os.getpid()}-{secrets.token_hex(4)}", max_pids)
    except OSError as exc:
        _log.warning("cannot create a pids cgroup under %s (%s): no process limit", found, exc)
        return None


async def run_probe(plan: SpawnPlan, spec: ExecSpec) -> tuple[int, str]:
    """Run the probe's plan (``true`` under the real profile): (exit code, stderr)."""
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
        _, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        await proc.wait()
        return -1, f"the probe did not finish within {PROBE_TIMEOUT_S:.0f} s"
    finally:
        # The sandbox's first process outlives bwrap and is reparented to us.
        await reap_orphan(sandbox_child(plan.info_fd), PROBE_TIMEOUT_S)
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
