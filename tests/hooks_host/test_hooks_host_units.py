"""The hook's pieces in process: payload reading, answers, and failing closed on anything."""

from __future__ import annotations

import io
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shellgate.hooks_host.hosts import (
    CLAUDE_CODE,
    GEMINI_CLI,
    PayloadError,
    ShellCall,
    answer,
    read_call,
)
from shellgate.hooks_host.run import parse_argv, run_hook

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).resolve().parent / "payloads"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / name).read_text())
    return data


def test_the_recorded_payloads_read_as_documented() -> None:
    claude = read_call(CLAUDE_CODE, recorded("claude-code-allow.json"))
    assert claude == ShellCall(
        "git status", "Show working tree status", "/home/dev/project",
        "3f1c2a9e-7b4d-4c1e-9a55-2d7e8f6b0c11", "/home/dev/project",
    )
    gemini = read_call(GEMINI_CLI, recorded("gemini-cli-ask.json"))
    assert gemini is not None
    assert gemini.workdir == "/home/dev/project/src"
    assert read_call(CLAUDE_CODE, recorded("claude-code-other-tool.json")) is None
    assert read_call(GEMINI_CLI, recorded("gemini-cli-other-tool.json")) is None


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda p: p["tool_input"].update(command=["ls"]), "'tool_input.command' is an array, not a string"),
        (lambda p: p.pop("tool_input"), "'tool_input' is missing"),
        (lambda p: p.update(cwd="relative/dir"), "not an absolute path"),
        (lambda p: p.pop("session_id"), "'session_id' is missing"),
        (lambda p: p.update(tool_name=7), "'tool_name' is a number"),
        (lambda p: p["tool_input"].update(description=3), "tool_input.description"),
    ],
)
def test_payloads_off_the_documented_shape_are_refused(change: Any, needle: str) -> None:
    data = recorded("claude-code-allow.json")
    change(data)
    with pytest.raises(PayloadError, match=needle):
        read_call(CLAUDE_CODE, data)


def test_gemini_dir_path_may_be_absolute() -> None:
    data = recorded("gemini-cli-allow.json")
    data["tool_input"]["dir_path"] = "/srv/other"
    call = read_call(GEMINI_CLI, data)
    assert call is not None
    assert call.workdir == "/srv/other"


def test_answers_in_each_host_format() -> None:
    assert answer(CLAUDE_CODE, "ask", "why") == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "why",
        }
    }
    assert answer(GEMINI_CLI, "allow", "why") == {"decision": "allow", "reason": "why"}
    asked = answer(GEMINI_CLI, "ask", "why")
    assert asked["decision"] == "deny"
    assert asked["reason"].startswith("why. ")


def test_argv_the_fast_path_takes() -> None:
    assert parse_argv(["claude-code"]) == ("claude-code", None)
    assert parse_argv(["gemini-cli", "--config", "f.toml"]) == ("gemini-cli", "f.toml")
    assert parse_argv(["gemini-cli", "--config=f.toml"]) == ("gemini-cli", "f.toml")
    for other in ([], ["codex"], ["claude-code", "--help"], ["claude-code", "--config"],
                  ["claude-code", "--config="], ["claude-code", "--config", "-x"],
                  ["claude-code", "--config", "a", "b"]):
        assert parse_argv(other) is None


class _Exploding(io.RawIOBase):
    def read(self, size: int = -1) -> bytes:
        raise RuntimeError("stdin went away")


def test_any_failure_is_exit_2_with_one_error_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    status = run_hook("claude-code", None, stdin=_Exploding(), stdout=out, stderr=err)  # type: ignore[arg-type]
    assert (status, out.getvalue()) == (2, "")
    assert err.getvalue() == "error: RuntimeError: stdin went away\n"


def test_an_unknown_host_is_exit_2() -> None:
    out, err = io.StringIO(), io.StringIO()
    status = run_hook("codex", None, stdin=io.BytesIO(b"{}"), stdout=out, stderr=err)
    assert (status, out.getvalue()) == (2, "")
    assert err.getvalue() == (
        "error: unknown host 'codex'; the hosts are claude-code, gemini-cli\n"
    )


def test_start_up_has_not_grossly_regressed(tmp_path: Path) -> None:
    """Only a gross regression: CPU time, 10x today's ~20 bare Python starts
    (docs/performance.md; the figures come from benchmarks/hook.py)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    data = recorded("claude-code-allow.json")
    data["cwd"] = str(ws)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"),
           "SHELLGATE_AUDIT__PATH": str(tmp_path / "audit.jsonl"), "CLAUDE_PROJECT_DIR": str(ws)}
    env.pop("SHELLGATE_CONFIG", None)
    hook = [sys.executable, "-m", "shellgate.cli", "hook", "claude-code"]
    bare = [sys.executable, "-c", "pass"]
    cpu: dict[str, list[float]] = {"hook": [], "bare": []}
    for _ in range(3):
        for name, argv in (("hook", hook), ("bare", bare)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(argv, input=json.dumps(data).encode(), capture_output=True,
                                  env=env, cwd=ws, timeout=60, check=False)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert proc.returncode == 0, proc.stderr
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    ratio = statistics.median(cpu["hook"]) / max(statistics.median(cpu["bare"]), 1e-3)
    assert ratio <= 200, cpu


def test_the_grammar_loads_without_the_grammar_package_init() -> None:
    """The parser loads tree-sitter-bash's binding directly (its ``__init__`` imports
    ``importlib.resources`` for a query shellgate never reads) and gets the same language."""
    code = (
        "import sys\n"
        "from shellgate.shell.reader import _parser\n"
        "root = _parser.parse(b'ls -la | wc -l')\n"
        "assert root.type == 'program' and not root.has_error\n"
        "assert 'tree_sitter_bash' not in sys.modules\n"
        "import tree_sitter_bash\n"
        "from tree_sitter import Language\n"
        "assert Language(tree_sitter_bash.language()) == _parser._language\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr




# -- red team (issue 12): Gemini CLI's older name for the working directory --------------


def test_gemini_directory_is_the_working_directory_too() -> None:
    """Gemini CLI's shell tool documents its directory argument as ``directory``
    (geminicli.com/docs/tools/shell), newer versions as ``dir_path``. Either is where
    the command runs, so either is where it is decided; two that disagree are refused."""
    data = recorded("gemini-cli-ask.json")
    del data["tool_input"]["dir_path"]
    data["tool_input"]["directory"] = ".git"
    call = read_call(GEMINI_CLI, data)
    assert call is not None
    assert call.workdir == "/home/dev/project/.git"
    data["tool_input"]["dir_path"] = "src"
    with pytest.raises(PayloadError, match="directory"):
        read_call(GEMINI_CLI, data)
    data["tool_input"]["dir_path"] = ".git"
    assert read_call(GEMINI_CLI, data) == call
