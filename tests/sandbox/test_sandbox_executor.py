"""The executor's own behaviour: probe, workdir, denials, escalation, placeholders."""

from __future__ import annotations

import os

import pytest

from shellgate.errors import ExecutionError, SandboxUnavailable
from shellgate.executors._bwrap_placeholders import remove_placeholder
from shellgate.executors.base import ExecRequest
from tests.sandbox.conftest import Box

pytestmark = pytest.mark.bwrap


async def test_probe_fails_closed_when_bwrap_is_missing(box: Box) -> None:
    ex = await box.executor(sandbox={"bwrap_path": "/nonexistent/bwrap"})
    assert ex.unavailable_reason is not None
    assert "bubblewrap is not installed" in ex.unavailable_reason
    with pytest.raises(SandboxUnavailable, match=r"^sandbox unavailable: bubblewrap is not installed"):
        await ex.run(ExecRequest(command="touch marker"))
    with pytest.raises(SandboxUnavailable):
        await ex.start(ExecRequest(command="touch marker"))
    assert not (box.ws / "marker").exists()


async def test_probe_fails_closed_when_bwrap_cannot_start(box: Box) -> None:
    fake = box.outside / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    ex = await box.executor(sandbox={"bwrap_path": str(fake)})
    with pytest.raises(SandboxUnavailable, match="No permissions to create new namespace"):
        await ex.run(ExecRequest(command="touch marker"))
    assert not (box.ws / "marker").exists()


async def test_probe_passes_and_reports_the_mode(box: Box) -> None:
    result = await box.run("echo hi")
    assert box.executors[0].unavailable_reason is None
    assert (result.stdout.text, result.exit_code, result.executor) == ("hi\n", 0, "bwrap")
    assert result.sandbox_mode == "workspace-write"
    assert not result.sandbox_denied


async def test_workdir_outside_the_workspace_is_refused_before_running(box: Box) -> None:
    with pytest.raises(ExecutionError, match="working directory is outside the workspace"):
        await box.run(f"touch {box.outside}/marker", workdir=str(box.outside))
    assert not (box.outside / "marker").exists()


async def test_full_access_runs_anywhere_and_writes_the_host(box: Box) -> None:
    result = await box.run("echo x > marker; pwd", workdir=str(box.outside), sandbox_mode="full-access")
    assert result.stdout.text == f"{box.outside}\n"
    assert (box.outside / "marker").read_text() == "x\n"
    assert result.sandbox_mode == "full-access"


async def test_denial_is_flagged_with_escalation(box: Box) -> None:
    result = await box.run(f"echo x > {box.outside}/f")
    assert result.exit_code == 1
    assert result.sandbox_denied
    assert result.escalation_available


async def test_denial_without_escalation_when_disabled(box: Box) -> None:
    await box.executor(sandbox={"escalation": False})
    result = await box.run(f"echo x > {box.outside}/f")
    assert result.sandbox_denied
    assert not result.escalation_available


@pytest.mark.parametrize(
    ("command", "mode", "denied"),
    [
        pytest.param("echo nope >&2; exit 3", "workspace-write", False, id="no-signature"),
        pytest.param("echo 'Permission denied' >&2; exit 0", "workspace-write", False, id="exit-zero"),
        pytest.param("touch /etc/x", "full-access", False, id="full-access-is-not-a-sandbox-denial"),
        pytest.param("touch /etc/x", "read-only", True, id="read-only"),
    ],
)
async def test_denial_detection(box: Box, command: str, mode: str, denied: bool) -> None:
    if mode == "full-access":
        command = "echo 'Operation not permitted' >&2; exit 1"
    result = await box.run(command, sandbox_mode=mode)
    assert result.sandbox_denied is denied


async def test_escalation_from_read_only_is_offered_and_widest_mode_has_none(box: Box) -> None:
    ro = await box.run("echo x > f", sandbox_mode="read-only")
    assert ro.escalation_available
    ww = await box.run("echo x > f", sandbox_mode="workspace-write")
    assert (box.ws / "f").read_text() == "x\n"
    assert not ww.sandbox_denied


async def test_self_signal_is_reported_as_a_signal(box: Box) -> None:
    result = await box.run("kill -TERM $$")
    assert (result.signal, result.exit_code) == ("SIGTERM", None)


async def test_placeholders_live_as_long_as_the_executor_and_go_at_close(box: Box) -> None:
    ex = await box.executor()
    task = await ex.start(ExecRequest(command="sleep 30"))
    try:
        result = await box.run("echo e > .bashrc")
        assert result.exit_code != 0
        assert (box.ws / ".bashrc").exists()  # made once, kept for the executor's life
        assert (box.ws / ".bashrc").read_text() == ""
    finally:
        task.kill()
        await task.done
    assert (box.ws / ".bashrc").exists()
    assert (await box.run("echo e > .bashrc; mkdir .git/x")).exit_code != 0  # still guarded
    await ex.aclose()
    assert sorted(os.listdir(box.ws)) == []  # nothing left in the workspace at close


async def test_calls_make_no_files_after_the_first(box: Box) -> None:
    await box.run("true")
    made = sorted(os.listdir(box.ws))
    before = {name: os.lstat(box.ws / name).st_ino for name in made}
    await box.run("true")
    assert {name: os.lstat(box.ws / name).st_ino for name in made} == before


def test_placeholder_removal_never_follows_symlinks(box: Box) -> None:
    target = box.outside / "dir"
    target.mkdir()
    (box.ws / "link").symlink_to(target)
    remove_placeholder(str(box.ws), str(box.ws / "link"), "empty")
    remove_placeholder(str(box.ws), str(box.ws / "link" / "x"), "null")
    assert target.is_dir()
    assert (box.ws / "link").is_symlink()
    (box.ws / "kept").write_text("content")
    remove_placeholder(str(box.ws), str(box.ws / "kept"), "null")
    assert (box.ws / "kept").read_text() == "content"


async def test_no_sandbox_process_is_left_unreaped_while_the_gate_runs(box: Box) -> None:
    """bwrap exits before the sandbox's first process, which the gate then adopts.

    Each call (and the probe) once left that process as a zombie of the gate: a
    long-lived server ran into its process limit. Checked after every call, with
    the executor still open, over the ways a call can end. The waits keep the loop
    running: the gate reaps on it (a blocking wait held the reaping off and failed
    whenever a sandbox's process ended after its call returned, as under load).
    """
    from tests.conftest import wait_until_async, zombie_children

    before = set(zombie_children())

    def new() -> set[int]:
        return set(zombie_children()) - before

    ex = await box.executor()
    assert await wait_until_async(lambda: not new(), timeout_s=2), new()  # the probe's sandbox
    ended = [
        await ex.run(ExecRequest(command="echo hi")),
        await ex.run(ExecRequest(command="exit 3")),
        await ex.run(ExecRequest(command="kill -TERM $$")),
        await ex.run(ExecRequest(command="sleep 5", timeout_ms=200)),
        await ex.run(ExecRequest(command="sleep 5 & echo started")),
    ]
    assert [(r.exit_code, r.signal, r.timed_out) for r in ended] == [
        (0, None, False), (3, None, False), (None, "SIGTERM", False),
        (None, "SIGTERM", True), (0, None, False),
    ]  # fmt: skip
    assert await wait_until_async(lambda: not new(), timeout_s=2), new()
    task = await ex.start(ExecRequest(command="sleep 30"))
    task.kill()
    await task.done
    assert await wait_until_async(lambda: not new(), timeout_s=2), new()


async def test_the_last_gate_out_removes_its_lock_file(box: Box) -> None:
    from shellgate.executors import _bwrap_placeholders as placeholders

    lock = placeholders.hold_shared([str(box.ws)])
    path = lock.paths[str(box.ws)]
    lock.release()
    assert os.path.exists(path)  # the same lock file the calls below use
    ex = await box.executor()
    other = await box.executor()
    await box.run("true")
    await other.run(ExecRequest(command="true"))
    await ex.aclose()
    assert os.path.exists(path)  # the other gate still holds it
    assert (box.ws / ".bashrc").exists()  # and may mount the first one's placeholders
    await other.aclose()
    assert not os.path.exists(path)
    assert sorted(os.listdir(box.ws)) == []


def test_a_lock_taken_on_a_file_unlinked_meanwhile_is_retaken_on_the_new_one(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Open, then the last one out unlinks, then flock: the name leads elsewhere now."""
    from shellgate.executors import _bwrap_placeholders as placeholders

    first = placeholders.hold_shared([str(box.ws)])
    path = first.paths[str(box.ws)]
    first.release()
    opened: list[int] = []
    real_open = os.open

    def open_then_lose_the_race(file: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(file, flags, mode)
        if file == path and not opened:
            os.unlink(path)  # what the last one out does between our open and flock
        opened.append(fd)
        return fd

    monkeypatch.setattr(os, "open", open_then_lose_the_race)
    held = placeholders.hold_shared([str(box.ws)])
    monkeypatch.undo()
    try:
        assert len(opened) == 2  # the first inode was dropped, the second kept
        fd = held.fds[str(box.ws)]
        assert os.fstat(fd).st_ino == os.stat(path).st_ino
    finally:
        held.release()
