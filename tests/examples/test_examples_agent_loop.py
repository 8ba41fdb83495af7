"""examples/agent_loop.py runs as a script: the loop, an ask, a denial, a final answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.examples.examples_helpers import EXAMPLES, env_with_src


def test_agent_loop_example_runs_and_the_gate_shapes_the_transcript(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "agent_loop.py"), "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env=env_with_src(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[approval] Allow this command? `git clean -n`" in out  # git clean * asks
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert "  hello\n" in out
    assert "Error: denied by casbin rule " in out
    assert out.rstrip().endswith("model: Done: 5 tool calls, 1 refused.")


def test_agent_loop_header_says_which_python_runs_it() -> None:
    doc = (EXAMPLES / "agent_loop.py").read_text(encoding="utf-8").split('"""')[1]
    assert "    .venv/bin/python examples/agent_loop.py" in doc


def test_agent_loop_under_a_python_without_shellgate_says_what_to_run() -> None:
    # -I ignores PYTHONPATH and the user site, -S the site-packages: no shellgate.
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(EXAMPLES / "agent_loop.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot import shellgate" in done.stderr
    assert ".venv/bin/python examples/agent_loop.py" in done.stderr


def test_agent_loop_is_importable_and_its_model_only_uses_offered_tools() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import agent_loop

        from shellgate.tools.schemas import schemas

        model = agent_loop.ScriptedModel(schemas("anthropic"))
        first = model.respond([])
        assert first == [
            {
                "type": "tool_use",
                "id": "toolu_1_0",
                "name": "bash",
                "input": {"command": "ls", "description": "list the workspace"},
            }
        ]
    finally:
        sys.path.remove(str(EXAMPLES))
        sys.modules.pop("agent_loop", None)
