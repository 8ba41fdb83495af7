"""A command the policy allows only inside shellgate's sandbox is refused by the hook.

The host runs the command itself, outside any sandbox of shellgate's, so a
decision with ``require_sandbox`` (a plugin's way to say "only under bwrap") cannot
be honoured there: ``gate.handoff`` refuses it for the same reason. The hook must
not answer ``allow`` (or ``ask``, after which the host would run it unsandboxed).
"""

from __future__ import annotations

import io
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellgate.hooks_host.run import run_hook

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from shellgate.hookspecs import hookimpl
from shellgate.models import Decision

class OnlySandboxed:
    @hookimpl
    def shellgate_check(self, call, segment):
        if segment.argv[:1] == ("curl",):
            return Decision(effect="allow", reason="network fetches run sandboxed",
                            layer="only-sandboxed", require_sandbox=True)
        if segment.argv[:1] == ("wget",):
            return Decision(effect="ask", reason="a person decides, then it runs sandboxed",
                            layer="only-sandboxed", require_sandbox=True)
        return None
'''


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    dist = site / "sg_only_sandboxed-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sg-only-sandboxed\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("[shellgate]\nonly-sandboxed = sg_only_sandboxed:OnlySandboxed\n"))
    (site / "sg_only_sandboxed.py").write_text(PLUGIN)
    (tmp_path / "ws").mkdir()
    pol = tmp_path / "pol"
    pol.mkdir()
    (pol / "model.conf").write_text((ROOT / "src/shellgate/policy/model.conf").read_text())
    (pol / "policy.csv").write_text("p, agent, *, git status *, allow\n")
    path = tmp_path / "shellgate.toml"
    path.write_text(
        '[executor]\nworkspace = "ws"\n'
        '[policy]\npaths = ["pol"]\nplugins = ["only-sandboxed"]\n'
        '[audit]\npath = "audit.jsonl"\n'
    )
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")
    monkeypatch.delenv("SHELLGATE_CONFIG", raising=False)
    sys.path.insert(0, str(site))
    try:
        yield path
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("sg_only_sandboxed", None)


def hook(host: str, conf: Path, command: str) -> dict[str, Any]:
    event, tool = ("PreToolUse", "Bash") if host == "claude-code" else (
        "BeforeTool", "run_shell_command")
    payload = {"session_id": "s1", "cwd": str(conf.parent / "ws"), "hook_event_name": event,
               "tool_name": tool, "tool_input": {"command": command}}
    out, err = io.StringIO(), io.StringIO()
    status = run_hook(host, str(conf), stdin=io.BytesIO(json.dumps(payload).encode()),
                      stdout=out, stderr=err)
    assert (status, err.getvalue()) == (0, "")
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer


@pytest.mark.parametrize("command", ["curl -s https://example.com", "wget https://example.com"])
def test_claude_code_is_refused_a_command_that_must_run_sandboxed(conf: Path,
                                                                  command: str) -> None:
    said = hook("claude-code", conf, command)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny"
    assert "sandbox" in said["permissionDecisionReason"]
    [record] = [json.loads(x) for x in (conf.parent / "audit.jsonl").read_text().splitlines()]
    assert (record["decision"], record["require_sandbox"]) == ("deny", True)


@pytest.mark.parametrize("command", ["curl -s https://example.com", "wget https://example.com"])
def test_gemini_cli_is_refused_a_command_that_must_run_sandboxed(conf: Path,
                                                                 command: str) -> None:
    said = hook("gemini-cli", conf, command)
    assert said["decision"] == "deny"
    assert "sandbox" in said["reason"]


def test_a_command_without_the_requirement_is_answered_as_before(conf: Path) -> None:
    said = hook("claude-code", conf, "git status")["hookSpecificOutput"]
    assert said["permissionDecision"] == "allow"


@pytest.mark.parametrize("host", ["claude-code", "gemini-cli"])
def test_a_configuration_that_sandboxes_every_call_is_refused_to_hosts(
    conf: Path, host: str
) -> None:
    """``[executor] kind = "bwrap"``: policies written for it assume the sandbox, which
    a host running the command itself does not give; every allow is refused, saying why."""
    conf.write_text(conf.read_text().replace('[executor]\n', '[executor]\nkind = "bwrap"\n'))
    said = hook(host, conf, "git status")
    answer = said["hookSpecificOutput"] if host == "claude-code" else said
    assert answer.get("permissionDecision", answer.get("decision")) == "deny"
    why = str(answer.get("permissionDecisionReason", answer.get("reason")))
    assert 'kind = "local"' in why
    [record] = [json.loads(x) for x in (conf.parent / "audit.jsonl").read_text().splitlines()]
    assert (record["decision"], record["require_sandbox"]) == ("deny", True)


# -- sandbox decisions: the host runs the command itself, so they are asks --------------


@pytest.fixture
def confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A hook config whose policy sandboxes the toolchain and whatever no rule names."""
    (tmp_path / "ws").mkdir()
    pol = tmp_path / "pol"
    pol.mkdir()
    (pol / "model.conf").write_text((ROOT / "src/shellgate/policy/model.conf").read_text())
    (pol / "policy.csv").write_text("p, agent, *, git status *, allow\n"
                                    "p, agent, *, pytest *, sandbox\n")
    path = tmp_path / "shellgate.toml"
    path.write_text('[executor]\nworkspace = "ws"\n[policy]\npaths = ["pol"]\n'
                    'default = "sandbox"\n[audit]\npath = "audit.jsonl"\n')
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")
    monkeypatch.delenv("SHELLGATE_CONFIG", raising=False)
    return path


@pytest.mark.parametrize("command", ["pytest -q", "./build.sh"])
def test_claude_code_asks_for_what_the_policy_would_confine(confined: Path, command: str) -> None:
    said = hook("claude-code", confined, command)["hookSpecificOutput"]
    assert said["permissionDecision"] == "ask"  # never allow: Claude Code would run it bare
    reason = said["permissionDecisionReason"]
    assert reason.startswith("shellgate ask (sandbox")
    assert "Claude Code runs the command itself, outside shellgate's sandbox" in reason
    [record] = [json.loads(x) for x in (confined.parent / "audit.jsonl").read_text().splitlines()]
    assert (record["decision"], record["layer"]) == ("ask", "sandbox")
    assert record["segments"][0]["decision"] == "ask"


def test_gemini_cli_refuses_what_the_policy_would_confine(confined: Path) -> None:
    said = hook("gemini-cli", confined, "pytest -q")
    assert said["decision"] == "deny"
    assert "Gemini CLI runs the command itself" in said["reason"]
    assert "Gemini CLI hooks cannot ask" in said["reason"]


def test_an_allowed_neighbour_is_still_allowed_to_the_host(confined: Path) -> None:
    said = hook("claude-code", confined, "git status")["hookSpecificOutput"]
    assert said["permissionDecision"] == "allow"
    mixed = hook("claude-code", confined, "git status && pytest -q")["hookSpecificOutput"]
    assert mixed["permissionDecision"] == "ask"
