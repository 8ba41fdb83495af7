"""The gate's own helper must work inside the sandbox wherever the gate is installed.

Found by a clean clone under /tmp: the sandbox's private /tmp hid the checkout,
and with it the status supervisor. The helper is now bound in at a fixed path.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

import pytest

from shellgate.executors import ExecRequest, _hardening, make_executor
from shellgate.executors._bwrap_argv import build_argv
from tests.conftest import make_config

pytestmark = pytest.mark.bwrap


@pytest.mark.parametrize("mode", ["read-only", "workspace-write"])
async def test_helper_under_tmp_still_supervises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    home = Path(tempfile.mkdtemp(prefix="sg-install-", dir="/tmp"))
    try:
        copy = home / "sg-exec"
        shutil.copy2(_hardening.HELPER, copy)
        monkeypatch.setattr(_hardening, "HELPER", copy)
        executor = make_executor(make_config(tmp_path, sandbox={"mode": mode}), "bwrap")
        assert executor.hardening.helper == str(copy)
        await executor.open()
        try:
            assert executor.unavailable_reason is None
            trapped = await executor.run(ExecRequest(command="exit 143"))
            signalled = await executor.run(ExecRequest(command="kill -TERM $$"))
        finally:
            await executor.aclose()
        assert (trapped.exit_code, trapped.signal) == (143, None)  # told apart from SIGTERM
        assert (signalled.exit_code, signalled.signal) == (None, "SIGTERM")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_binds_come_after_the_private_tmp() -> None:
    from tests.sandbox.test_sandbox_argv import profile

    argv = build_argv(  # noqa: S604 - a test of the argv builder, nothing runs
        profile(),
        shell="/usr/bin/bash",
        command="true",
        cwd="/w",
        seccomp_fd=None,
        runner=["/tmp/.shellgate-sg-exec", "--supervise", "9", "--"],
        binds=[("/opt/x/sg-exec", "/tmp/.shellgate-sg-exec")],
    )
    tmpfs = argv.index("--tmpfs")
    assert argv[tmpfs + 1] == "/tmp"
    bind = argv.index("/opt/x/sg-exec")
    assert argv[bind - 1] == "--ro-bind"
    assert bind > tmpfs
    assert argv[-7:-3] == ["/tmp/.shellgate-sg-exec", "--supervise", "9", "--"]


def test_the_helper_is_bound_only_where_the_sandbox_would_not_see_it_as_is() -> None:
    from shellgate.executors._bwrap_argv import Guard, Mask, Profile
    from shellgate.executors._bwrap_argv import seen_as_is as _seen_as_is

    ws = "/var/ws"
    profile = Profile(
        bwrap="/usr/bin/bwrap",
        mode="workspace-write",
        network=False,
        workspace=ws,
        guards=(Guard(f"{ws}/.git", "empty", True),),
        masks=(Mask("/h/.ssh", True),),
    )
    assert _seen_as_is("/opt/sg/sg-exec", profile)  # read-only host root: no bind needed
    assert not _seen_as_is("/tmp/x/sg-exec", profile)  # the private /tmp hides it
    assert not _seen_as_is(f"{ws}/venv/sg-exec", profile)  # writable: could be replaced
    assert not _seen_as_is("/h/.ssh/sg-exec", profile)  # masked
    assert _seen_as_is(f"{ws}/venv/sg-exec", dataclasses.replace(profile, mode="read-only"))
