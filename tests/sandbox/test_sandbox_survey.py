"""The profile is computed once and re-checked per call: a protected path that
appears (or disappears) between two calls is protected on the second."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from shellgate.executors.base import ExecRequest
from shellgate.executors.bwrap import BwrapExecutor
from tests.sandbox.conftest import Box


def computed(ex: object) -> int:
    assert isinstance(ex, BwrapExecutor)
    assert ex._survey is not None
    return ex._survey.computed


async def test_an_unchanged_file_system_reuses_the_profile(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The profile also watches the gate-records directory, which every gate on the
    # machine shares: a private one keeps other gates (a parallel test run) from
    # recounting it under this test.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ex = await box.executor()
    await ex.run(ExecRequest(command="true"))  # makes the placeholders: one recount
    before = computed(ex)
    for _ in range(3):
        assert (await ex.run(ExecRequest(command="echo hi > out.txt"))).exit_code == 0
    assert computed(ex) == before


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_a_repository_made_on_the_host_between_calls_is_guarded_on_the_next(
    box: Box,
) -> None:
    ex = await box.executor()
    assert (await ex.run(ExecRequest(command="true"))).exit_code == 0
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)  # into the placeholder
    config = (box.ws / ".git" / "config").read_text()
    result = await ex.run(
        ExecRequest(command="echo evil >> .git/config; echo evil > .git/hooks/pre-commit")
    )
    assert result.exit_code != 0
    assert (box.ws / ".git" / "config").read_text() == config
    assert not (box.ws / ".git" / "hooks" / "pre-commit").exists()
    assert (await ex.run(ExecRequest(command="git status --short"))).exit_code == 0
    await box.close()
    assert (box.ws / ".git" / "config").read_text() == config  # the user's repo stays


async def test_a_linked_git_dir_that_appears_between_calls_is_guarded_on_the_next(
    box: Box,
) -> None:
    ex = await box.executor()
    assert (await ex.run(ExecRequest(command="true"))).exit_code == 0
    os.rmdir(box.ws / ".git")  # the host replaces our (empty) placeholder
    (box.ws / ".git").write_text("gitdir: linked.git\n")
    (box.ws / "linked.git" / "hooks").mkdir(parents=True)
    (box.ws / "linked.git" / "config").write_text("[core]\n")
    result = await ex.run(
        ExecRequest(
            command="echo ok > ok.txt; echo evil >> linked.git/config; echo x > linked.git/hooks/h"
        )
    )
    assert result.exit_code != 0
    assert (box.ws / "ok.txt").read_text() == "ok\n"  # the sandbox ran
    assert (box.ws / "linked.git" / "config").read_text() == "[core]\n"
    assert not (box.ws / "linked.git" / "hooks" / "h").exists()


async def test_an_rc_file_the_host_writes_into_a_placeholder_is_the_users_then(
    box: Box,
) -> None:
    ex = await box.executor()
    await ex.run(ExecRequest(command="true"))
    (box.ws / ".bashrc").write_text("# mine\n")  # same inode, content now
    result = await ex.run(ExecRequest(command="cat .bashrc; echo evil >> .bashrc"))
    assert result.stdout.text == "# mine\n"  # the real file, read-only, not /dev/null
    assert result.exit_code != 0
    await box.close()
    assert (box.ws / ".bashrc").read_text() == "# mine\n"  # not removed as a placeholder


async def test_a_protected_path_removed_between_calls_gets_a_placeholder_again(
    box: Box,
) -> None:
    (box.ws / ".profile").write_text("x\n")
    ex = await box.executor()
    assert (await ex.run(ExecRequest(command="true"))).exit_code == 0
    os.unlink(box.ws / ".profile")
    result = await ex.run(ExecRequest(command="echo evil > .profile"))
    assert result.exit_code != 0
    assert (box.ws / ".profile").read_text() == ""
    await box.close()
    assert not (box.ws / ".profile").exists()
