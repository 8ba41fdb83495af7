"""``shellgate hook claude-code|gemini-cli`` as the hosts run it: a real CLI process,
a real policy set and audit log in a temp dir, the recorded payloads on stdin."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).resolve().parent / "payloads"

POLICY = """\
p, agent, *, git status *, allow
p, agent, *, rm -rf *, deny, recursive force removal is never automatic
p, agent, *, curl *, ask, uses the network
"""


def run(
    *args: str, stdin: bytes, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name in ("SHELLGATE_CONFIG", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
        full.pop(name, None)  # as the test says, not as whatever runs the suite says
    full.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=full,
        timeout=60,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    """A config file: workspace ``ws``, the policy set ``pol``, the audit log ``audit.jsonl``."""
    (tmp_path / "ws" / "src").mkdir(parents=True)
    pol = tmp_path / "pol"
    pol.mkdir()
    (pol / "model.conf").write_text((ROOT / "src/shellgate/policy/model.conf").read_text())
    (pol / "policy.csv").write_text(POLICY)
    conf = tmp_path / "shellgate.toml"
    conf.write_text(
        '[executor]\nworkspace = "ws"\n'
        '[policy]\npaths = ["pol"]\nsubject = "agent"\ntenant = "acme"\ndefault = "ask"\n'
        '[audit]\npath = "audit.jsonl"\n'
    )
    return conf


def payload(name: str, cwd: Path) -> bytes:
    """A recorded payload with its ``cwd`` moved to ``cwd`` (the recorded one is not here)."""
    data = json.loads((PAYLOADS / name).read_text())
    data["cwd"] = str(cwd)
    return json.dumps(data).encode()


def hook(host: str, conf: Path, name: str) -> subprocess.CompletedProcess[str]:
    ws = conf.parent / "ws"
    return run("hook", host, "--config", str(conf), stdin=payload(name, ws), cwd=ws)


def records(conf: Path) -> list[dict[str, Any]]:
    log = conf.parent / "audit.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def claude_answer(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    answer = json.loads(proc.stdout)
    assert list(answer) == ["hookSpecificOutput"]
    out: dict[str, Any] = answer["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert out["hookEventName"] == "PreToolUse"
    return out


def gemini_answer(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    assert set(answer) == {"decision", "reason"}
    return answer


def test_claude_code_allow_names_the_rule(setup: Path) -> None:
    out = claude_answer(hook("claude-code", setup, "claude-code-allow.json"))
    assert out["permissionDecision"] == "allow"
    assert out["permissionDecisionReason"].startswith("shellgate allow (casbin rule pol/policy.csv:1):")
    assert "git status" in out["permissionDecisionReason"]


def test_claude_code_deny_names_the_rule_and_its_reason(setup: Path) -> None:
    out = claude_answer(hook("claude-code", setup, "claude-code-deny.json"))
    assert out["permissionDecision"] == "deny"
    reason = out["permissionDecisionReason"]
    assert reason.startswith("shellgate deny (casbin rule pol/policy.csv:2):")
    assert "recursive force removal is never automatic" in reason


def test_claude_code_ask(setup: Path) -> None:
    out = claude_answer(hook("claude-code", setup, "claude-code-ask.json"))
    assert out["permissionDecision"] == "ask"
    assert out["permissionDecisionReason"].startswith("shellgate ask (casbin rule pol/policy.csv:3):")
    assert "uses the network" in out["permissionDecisionReason"]


def test_claude_code_closing_default_names_the_layer(setup: Path) -> None:
    ws = setup.parent / "ws"
    data = json.loads(payload("claude-code-allow.json", ws))
    data["tool_input"]["command"] = "make"
    proc = run("hook", "claude-code", "--config", str(setup), stdin=json.dumps(data).encode(), cwd=ws)
    out = claude_answer(proc)
    assert out["permissionDecision"] == "ask"
    assert out["permissionDecisionReason"].startswith("shellgate ask (default):")


def test_gemini_cli_allow_and_deny(setup: Path) -> None:
    allowed = gemini_answer(hook("gemini-cli", setup, "gemini-cli-allow.json"))
    assert allowed["decision"] == "allow"
    assert allowed["reason"].startswith("shellgate allow (casbin rule pol/policy.csv:1):")
    denied = gemini_answer(hook("gemini-cli", setup, "gemini-cli-deny.json"))
    assert denied["decision"] == "deny"
    assert denied["reason"].startswith("shellgate deny (casbin rule pol/policy.csv:2):")
    assert "recursive force removal is never automatic" in denied["reason"]


def test_gemini_cli_ask_is_a_deny_saying_a_person_must_approve(setup: Path) -> None:
    answer = gemini_answer(hook("gemini-cli", setup, "gemini-cli-ask.json"))
    assert answer["decision"] == "deny"
    assert answer["reason"].startswith("shellgate ask (casbin rule pol/policy.csv:3): uses the network")
    assert "a person must approve this command" in answer["reason"]
    # The record keeps the policy's own answer; the workdir is dir_path under cwd.
    (record,) = records(setup)
    assert record["decision"] == "ask"
    assert record["workdir"] == os.path.realpath(setup.parent / "ws" / "src")


@pytest.mark.parametrize("host", ["claude-code", "gemini-cli"])
def test_another_tool_gets_no_opinion_and_no_record(setup: Path, host: str) -> None:
    proc = hook(host, setup, f"{host}-other-tool.json")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert records(setup) == []


def test_the_decision_record_and_its_chain(setup: Path) -> None:
    hook("claude-code", setup, "claude-code-allow.json")
    hook("gemini-cli", setup, "gemini-cli-deny.json")
    first, second = records(setup)
    ws = os.path.realpath(setup.parent / "ws")
    sent = json.loads((PAYLOADS / "claude-code-allow.json").read_text())
    assert {k: first[k] for k in first if k not in ("call_id", "time", "hash", "prev", "seq")} == {
        "type": "decision",
        "via": "hook:claude-code",
        "subject": "agent",
        "tenant": "acme",
        "session": sent["session_id"],
        "tool": "bash",
        "command": "git status",
        "description": "Show working tree status",
        "workdir": ws,
        "workspace": ws,
        "decision": "allow",
        "reason": "allow 'git status *' for agent in tenant * matches 'git status'",
        "layer": "casbin",
        "rule": "pol/policy.csv:1",
        "segments": [
            {
                "command": "git status",
                "argv": ["git", "status"],
                "decision": "allow",
                "layer": "casbin",
                "rule": "pol/policy.csv:1",
            }
        ],
    }
    assert len(first["call_id"]) == 16
    assert first["call_id"] != second["call_id"]
    assert (second["via"], second["decision"], second["rule"]) == (
        "hook:gemini-cli", "deny", "pol/policy.csv:2",
    )
    verify = run("audit", "verify", str(setup.parent / "audit.jsonl"), stdin=b"", cwd=setup.parent)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def _blocked(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2, nothing on stdout, one ``error:`` line naming the problem."""
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: "), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr


def test_malformed_payloads_exit_2(setup: Path) -> None:
    ws = setup.parent / "ws"
    _blocked(hook("claude-code", setup, "claude-code-malformed.json"), "tool_input.command")
    cut = (PAYLOADS / "gemini-cli-malformed.json").read_bytes()
    _blocked(run("hook", "gemini-cli", "--config", str(setup), stdin=cut, cwd=ws), "not valid JSON")
    for junk, needle in [
        (b"", "empty"),
        (b"[1, 2]", "hook input is an array, not a JSON object"),
        (b"\xff\xfe{", "not valid JSON"),
        (json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash"}).encode(), "PostToolUse"),
    ]:
        _blocked(run("hook", "claude-code", "--config", str(setup), stdin=junk, cwd=ws), needle)
    wrong_event = payload("gemini-cli-allow.json", ws)  # a BeforeTool payload sent to claude-code
    _blocked(run("hook", "claude-code", "--config", str(setup), stdin=wrong_event, cwd=ws), "BeforeTool")
    assert records(setup) == []


def test_a_missing_working_directory_exits_2(setup: Path) -> None:
    data = json.loads(payload("claude-code-allow.json", setup.parent / "ws"))
    data["cwd"] = str(setup.parent / "gone")
    proc = run("hook", "claude-code", "--config", str(setup), stdin=json.dumps(data).encode(), cwd=setup.parent)
    _blocked(proc, "not a directory")


def test_a_policy_that_does_not_load_exits_2(setup: Path) -> None:
    (setup.parent / "pol" / "policy.csv").write_text(POLICY + "p, agent, *, ls *, allwo\n")
    _blocked(hook("claude-code", setup, "claude-code-allow.json"), "policy.csv:4", "allwo")
    _blocked(hook("gemini-cli", setup, "gemini-cli-allow.json"), "policy.csv:4")
    assert records(setup) == []


def test_a_bad_config_exits_2(setup: Path) -> None:
    setup.write_text(setup.read_text().replace("subject =", "subjekt ="))
    _blocked(
        hook("claude-code", setup, "claude-code-allow.json"),
        "shellgate.toml: unknown key 'policy.subjekt' (hint: did you mean 'policy.subject'?)",
    )


def test_an_audit_log_that_cannot_be_written_exits_2(setup: Path) -> None:
    (setup.parent / "audit.jsonl").mkdir()  # a directory where the log should be
    _blocked(hook("claude-code", setup, "claude-code-allow.json"), "audit")
    _blocked(hook("gemini-cli", setup, "gemini-cli-deny.json"), "audit")


def test_the_typer_path_answers_the_same(setup: Path) -> None:
    """Command lines the fast path leaves to typer run the same hook."""
    ws = setup.parent / "ws"
    fast = run("hook", "claude-code", f"--config={setup}", stdin=payload("claude-code-deny.json", ws), cwd=ws)
    code = "import sys; from shellgate.cli._app import main; main(sys.argv[1:])"
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    slow = subprocess.run(
        [sys.executable, "-c", code, "hook", "claude-code", "--config", str(setup)],
        input=payload("claude-code-deny.json", ws), capture_output=True, cwd=ws, env=full,
        timeout=60, check=False,
    )
    assert (slow.returncode, slow.stderr) == (0, b"")
    assert json.loads(slow.stdout) == json.loads(fast.stdout)
    assert len(records(setup)) == 2


def test_help_and_unknown_hosts_go_to_the_cli(setup: Path) -> None:
    listed = run("--help", stdin=b"", cwd=setup.parent)
    assert listed.returncode == 0
    assert "hook" in listed.stdout
    group = run("hook", "--help", stdin=b"", cwd=setup.parent)
    assert "claude-code" in group.stdout
    assert "gemini-cli" in group.stdout
    unknown = run("hook", "codex", stdin=b"{}", cwd=setup.parent)
    assert unknown.returncode == 2
    assert unknown.stdout == ""
    assert unknown.stderr.startswith("error: ")


def test_the_hook_imports_only_what_the_decision_needs(setup: Path) -> None:
    """No typer, click, rich, MCP, asyncio or executors on the hook's path; no package
    metadata scan (pydantic's plugin search) or package resources (the grammar's)."""
    ws = setup.parent / "ws"
    code = (
        "import atexit, sys\n"
        "banned = ('typer', 'click', 'rich', 'mcp', 'mcp_types', 'anyio', 'asyncio',\n"
        "          'shellgate.executors', 'shellgate.gate', 'shellgate.tools.bash', 'casbin',\n"
        "          'importlib.metadata', 'importlib.resources')\n"
        "atexit.register(lambda: sys.stderr.write(repr(sorted(m for m in sys.modules\n"
        "    if m.startswith(banned))) + '\\n'))\n"
        "from shellgate.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", code, "hook", "claude-code", "--config", str(setup)],
        input=payload("claude-code-allow.json", ws), capture_output=True, cwd=ws, env=full,
        timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == "[]\n"
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_pydantic_plugins_chosen_by_name_still_load(setup: Path) -> None:
    """With the user's own PYDANTIC_DISABLE_PLUGINS list, pydantic's real loader runs."""
    ws = setup.parent / "ws"
    proc = run("hook", "claude-code", "--config", str(setup), stdin=payload("claude-code-allow.json", ws),
               cwd=ws, env={"PYDANTIC_DISABLE_PLUGINS": "some-plugin"})
    assert claude_answer(proc)["permissionDecision"] == "allow"


# -- the workspace: the host's project, unless the config pins one (issue 24) ---------------

EXAMPLE = ROOT / "examples" / "hook.toml"


def host_call(
    host: str, command: str, *, cwd: Path, env: dict[str, str], config: Path = EXAMPLE
) -> subprocess.CompletedProcess[str]:
    """A recorded payload of ``host`` for ``command``, run in ``cwd``, through the real CLI."""
    data = json.loads((PAYLOADS / f"{host}-allow.json").read_text())
    data["cwd"] = str(cwd)
    data["tool_input"]["command"] = command
    data["tool_input"].pop("dir_path", None)
    return run("hook", host, "--config", str(config), stdin=json.dumps(data).encode(),
               cwd=cwd, env=env)


def decided(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    if "hookSpecificOutput" in answer:
        return str(answer["hookSpecificOutput"]["permissionDecision"])
    return "ask" if "cannot ask" in answer["reason"] else str(answer["decision"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a secret at its root and a ``src`` the agent may ``cd`` into."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("API_KEY=x\n")
    (root / "README.md").write_text("hello\n")
    (tmp_path / "home").mkdir()
    return root


@pytest.mark.parametrize(
    ("command", "where", "expected"),
    [
        pytest.param("cat {project}/.env", "project", "ask", id="the-secret-by-absolute-path"),
        pytest.param("cat .env", "project", "ask", id="the-secret-by-name"),
        pytest.param("cat ../.env", "src", "ask", id="the-secret-after-the-agent-cd"),
        pytest.param("cat {project}/README.md", "src", "allow", id="neighbour-allowed"),
        pytest.param("echo '{{}}' > ../.claude/settings.json", "src", "deny",
                     id="the-hook-settings-are-protected"),
    ],
)
def test_the_example_hook_config_judges_the_hosts_project(
    project: Path, command: str, where: str, expected: str
) -> None:
    """examples/hook.toml as it is: the workspace is $CLAUDE_PROJECT_DIR, wherever the
    session's cwd has moved (the issue: `workspace = "."` made the config's folder
    the workspace, so `cat /path/to/project/.env` was allowed by `cat *`)."""
    env = {"HOME": str(project.parent / "home"), "CLAUDE_PROJECT_DIR": str(project)}
    cwd = project if where == "project" else project / where
    proc = host_call("claude-code", command.format(project=project), cwd=cwd, env=env)
    assert decided(proc) == expected
    [record] = [json.loads(x) for x in (project.parent / "home" / ".shellgate-hook-audit.jsonl")
                .read_text().splitlines()]
    assert record["workspace"] == os.path.realpath(project)
    assert record["workdir"] == os.path.realpath(cwd)


def test_gemini_cli_judges_its_project_dir_or_else_its_cwd(project: Path) -> None:
    """Gemini CLI's payload ``cwd`` is its project (its shell tool keeps no directory)."""
    home = {"HOME": str(project.parent / "home")}
    secret = f"cat {project}/.env"
    assert decided(host_call("gemini-cli", secret, cwd=project, env=home)) == "ask"
    with_var = {**home, "GEMINI_PROJECT_DIR": str(project)}
    assert decided(host_call("gemini-cli", secret, cwd=project, env=with_var)) == "ask"
    assert decided(host_call("gemini-cli", f"cat {project}/README.md", cwd=project,
                             env=with_var)) == "allow"


def test_claude_code_without_its_project_dir_is_blocked(project: Path) -> None:
    """Its ``cwd`` follows the agent's ``cd``: not a workspace anybody chose."""
    proc = host_call("claude-code", "cat README.md", cwd=project,
                     env={"HOME": str(project.parent / "home")})
    _blocked(proc, "$CLAUDE_PROJECT_DIR is not set", "pin [executor] workspace")


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        pytest.param("relative/dir", "is not an absolute path", id="relative"),
        pytest.param("/no/such/project", "the workspace /no/such/project is not a directory",
                     id="missing"),
    ],
)
def test_a_bad_project_dir_from_the_host_is_blocked(
    project: Path, value: str, needle: str
) -> None:
    env = {"HOME": str(project.parent / "home"), "CLAUDE_PROJECT_DIR": value}
    _blocked(host_call("claude-code", "cat README.md", cwd=project, env=env), needle)


@pytest.mark.parametrize("how", ["file", "variable"])
def test_a_workspace_the_config_pins_wins_over_the_host(
    project: Path, tmp_path: Path, how: str
) -> None:
    pinned = tmp_path / "pinned"
    pinned.mkdir()
    (pinned / ".env").write_text("")
    conf = tmp_path / "pinning.toml"
    text = EXAMPLE.read_text()
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(project)}
    if how == "file":
        text = text.replace("[executor]\n", f'[executor]\nworkspace = "{pinned}"\n')
    else:
        env["SHELLGATE_EXECUTOR__WORKSPACE"] = str(pinned)
    conf.write_text(text)
    # The project's .env is no secret of the pinned workspace; the pinned one's is.
    assert decided(host_call("claude-code", f"cat {project}/.env", cwd=project, env=env,
                             config=conf)) == "allow"
    assert decided(host_call("claude-code", f"cat {pinned}/.env", cwd=project, env=env,
                             config=conf)) == "ask"


def test_docs_show_the_example_config_and_point_both_hosts_at_it(tmp_path: Path) -> None:
    """docs/hooks-host.md's config is examples/hook.toml as it is, and its settings
    blocks run the hook with it; the documented command line answers as documented."""
    docs = (ROOT / "docs" / "hooks-host.md").read_text(encoding="utf-8")
    example = EXAMPLE.read_text(encoding="utf-8")
    [shown] = re.findall(r"^```toml\n(.*?)^```$", docs, flags=re.M | re.S)
    assert shown == example
    settings = [json.loads(b) for b in re.findall(r"^```json\n(.*?)^```$", docs, flags=re.M | re.S)]
    commands = [h["command"] for s in settings for event in s["hooks"].values()
                for entry in event for h in entry["hooks"]]
    assert commands == [f"shellgate hook {host} --config /etc/shellgate/hook.toml"
                        for host in ("claude-code", "gemini-cli")]
    assert "shellgate hook claude-code --config /etc/shellgate/hook.toml" in example
