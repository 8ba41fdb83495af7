"""Escape attempts against the bwrap executor in workspace-write mode.

Uses the sandbox suite's ``box`` fixture (a real bwrap over a temporary
workspace and a fake ``$HOME``); each test asserts on the host afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.sandbox.conftest import Box

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

PLANT_BARE_REPO = (
    "git init -q --bare . && git config core.bare false && "
    'git config core.worktree "$PWD" && git config core.fsmonitor "touch {marker}; false"'
)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_no_git_dir_can_be_planted_at_a_workspace_root_without_dot_git(box: Box) -> None:
    marker = box.outside / "host-ran-planted-fsmonitor"
    await box.run(PLANT_BARE_REPO.format(marker=marker))
    # What a developer (or a local-executor call) does next on the host:
    subprocess.run(
        ["git", "status"], cwd=box.ws, capture_output=True, timeout=20, check=False,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(box.ws.parent)},
    )  # fmt: skip
    assert not marker.exists()


async def test_gate_policy_and_audit_in_the_workspace_stay_read_only(box: Box) -> None:
    policy = box.ws / "pol"
    policy.mkdir()
    (policy / "policy.csv").write_text("p, agent, *, ls *, allow\n")
    audit = box.ws / "audit.jsonl"
    audit.write_text("{}\n")
    await box.executor(policy={"paths": [str(policy)]}, audit={"path": str(audit)})
    await box.run(
        'echo "p, agent, *, *, allow" >> pol/policy.csv; : > audit.jsonl; '
        "mv pol pol2; mv audit.jsonl a2; echo x > pol/extra.csv; rm -rf pol"
    )
    assert (policy / "policy.csv").read_text() == "p, agent, *, ls *, allow\n"
    assert audit.read_text() == "{}\n"
    assert sorted(p.name for p in policy.iterdir()) == ["policy.csv"]
    assert not (box.ws / "pol2").exists()
    assert not (box.ws / "a2").exists()


async def test_no_gate_file_descriptor_leaks_into_the_sandbox(box: Box) -> None:
    audit = box.ws / "audit.jsonl"
    audit.write_text("")
    await box.executor(audit={"path": str(audit)})
    result = await box.run("ls -l /proc/$$/fd")
    fds = [line for line in result.stdout.text.splitlines() if "->" in line]
    targets = " ".join(line.split("->", 1)[1] for line in fds)
    assert len(fds) <= 4, result.stdout.text  # 0, 1, 2 and ls's own directory fd
    assert "audit" not in targets
    assert "socket" not in targets


async def test_dev_shm_and_tmp_are_private(box: Box) -> None:
    name = f"sg-redteam-{os.getpid()}"
    await box.run(f"echo x > /dev/shm/{name}; echo x > /tmp/{name}")
    assert not os.path.exists(f"/dev/shm/{name}")
    assert not os.path.exists(f"/tmp/{name}")


async def test_masked_dirs_cannot_be_unmasked_or_replaced(box: Box) -> None:
    secret = box.home / ".ssh" / "id_rsa"
    result = await box.run(
        "umount ~/.ssh; mv ~/.ssh ~/.ssh2; rm -rf ~/.ssh; cat ~/.ssh/id_rsa; "
        f"cat /proc/1/root{secret}; cat /proc/self/root{secret}"
    )
    assert "SECRET-KEY-MATERIAL" not in result.stdout.text
    assert secret.exists()


async def test_writes_through_proc_and_dev_fd_tricks_do_not_land(box: Box) -> None:
    target = box.outside / "pwned"
    await box.run(
        f"echo x > /proc/self/root{target}; echo x > /proc/1/cwd/../{target.name}; "
        f"exec 3<>/proc/self/root{box.outside}; echo x > /dev/fd/3/pwned"
    )
    assert not target.exists()
    assert list(box.outside.iterdir()) == []
