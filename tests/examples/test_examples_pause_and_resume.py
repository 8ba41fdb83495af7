"""examples/pause_and_resume.py runs as a script: decide, a person answers, the call resumes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.examples_helpers import EXAMPLES, env_with_src


@pytest.mark.parametrize("refuse", [False, True], ids=["approved", "refused"])
def test_pause_and_resume_example(tmp_path: Path, refuse: bool) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "pause_and_resume.py"), "--workspace", str(tmp_path)]
        + (["--refuse"] if refuse else []),
        capture_output=True,
        text=True,
        env=env_with_src(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "decision: ask" in done.stdout
    assert "question for a person: Allow this command? `touch .gitlab-ci.yml`" in done.stdout
    assert (tmp_path / ".gitlab-ci.yml").exists() is not refuse
    records = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [r["type"] for r in records] == ["decision", "approval", "result"]
    assert len({r["call_id"] for r in records}) == 1  # one decision for the call
    assert records[1]["approver"] == "alice@example.com"
    if refuse:
        assert records[2]["outcome"] == "not approved"
    else:
        assert records[2]["exit_code"] == 0
