"""Inside the bwrap sandbox (workspace-write), a SQLite store and a tokens file kept
in the workspace are neither readable nor writable: what the gate's analysis
cannot see (``python -c``, a script) meets the sandbox instead."""

from __future__ import annotations

import pytest

from tests.sandbox.conftest import SECRET, Box

pytestmark = pytest.mark.bwrap


async def test_store_and_tokens_files_are_masked_in_the_sandbox(box: Box) -> None:
    queue = box.ws / "queue.db"
    queue.write_text(SECRET)
    tokens = box.ws / "console-tokens"
    tokens.write_text(SECRET)
    await box.executor(
        sandbox={"mode": "workspace-write"},
        approval={"mode": "queue", "store": f"sqlite:///{queue}"},
        console={"tokens_file": str(tokens)},
    )
    result = await box.run(
        "cat queue.db console-tokens; echo forged > queue.db; echo forged > console-tokens; "
        "echo ok > notes"
    )
    assert SECRET not in str(result.stdout) + str(result.stderr)
    assert queue.read_text() == SECRET
    assert tokens.read_text() == SECRET
    assert (box.ws / "notes").read_text() == "ok\n"
