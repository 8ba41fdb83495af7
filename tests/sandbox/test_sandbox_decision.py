"""Sandbox decisions: a local deployment runs the calls its policy sandboxes under bwrap.

Real gates, real bwrap, real processes. "bwrap missing" and "the probe fails" are
the real config knob (``[sandbox] bwrap_path``) pointing at no binary, or at a
script that fails the probe — never a mocked executor.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellgate.approval import AllowApprover, DenyApprover
from shellgate.gate import Gate
from tests.conftest import make_config

pytestmark = pytest.mark.bwrap

ROOT = Path(__file__).resolve().parents[2]
RULES = "p, agent, *, echo *, allow\np, agent, *, write:**, allow\n"


def policy_set(tmp_path: Path, rows: str = RULES) -> Path:
    from tests.policy.policy_helpers import write_set

    return write_set(tmp_path, rows, name="team")


def records(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == kind]


def host_dir(prefix: str) -> Iterator[Path]:
    # Under /var/tmp, not /tmp: the sandbox's /tmp is a private tmpfs, so a target
    # under /tmp would prove nothing about the read-only host (tests/sandbox/conftest.py).
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home directory of its own, outside the workspace (the sandbox keeps it read-only)."""
    for path in host_dir("sg-home-"):
        monkeypatch.setenv("HOME", str(path))
        yield path


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP server on the host's loopback: a call that reaches it had the network."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.5)
    yield server
    server.close()


def connected(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


def failing_bwrap(tmp_path: Path) -> Path:
    """A bwrap that is there but cannot start a sandbox: the probe fails."""
    script = tmp_path / "bin" / "bwrap"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


async def gate_for(tmp_path: Path, *, approver: Any = None, rows: str = RULES,
                   **sections: dict[str, Any]) -> Gate:
    """A local deployment whose closing default is sandbox, with ``rows`` as its rules."""
    merged: dict[str, dict[str, Any]] = {
        "policy": {"paths": [str(policy_set(tmp_path, rows))], "default": "sandbox"},
        "executor": {"kind": "local"},
    }
    for name, values in sections.items():
        merged.setdefault(name, {}).update(values)
    gate = Gate(make_config(tmp_path, **merged), approver=approver or DenyApprover())
    await gate.open()
    return gate


async def test_a_sandboxed_call_writes_its_workspace_and_nothing_else(
    tmp_path: Path, home: Path, outside: Path
) -> None:
    gate = await gate_for(tmp_path)
    ws = Path(gate.config.executor.workspace)
    command = (f"echo ok > inside.txt; ./make.sh; echo x > {ws}/end.txt; "
               f"echo x > {outside}/pwned; echo x > {home}/pwned")
    (ws / "make.sh").write_text("#!/bin/sh\necho built > built.txt\n")
    (ws / "make.sh").chmod(0o755)
    try:
        result = await gate.call("bash", {"command": command, "description": "build"})
    finally:
        await gate.aclose()
    assert not result.is_error, result.text  # a reported exit, not a tool error
    assert (ws / "inside.txt").read_text() == "ok\n"
    assert (ws / "built.txt").read_text() == "built\n"
    assert (ws / "end.txt").exists()
    assert not (outside / "pwned").exists()
    assert not (home / "pwned").exists()
    assert "[sandbox: file access denied under workspace-write mode]" in result.text
    decision = records(tmp_path, "decision")[-1]
    assert (decision["decision"], decision["executor"], decision["sandbox_mode"]) == (
        "sandbox", "bwrap", "workspace-write")
    assert records(tmp_path, "result")[-1]["executor"] == "bwrap"
    assert not records(tmp_path, "approval")  # nobody was asked


async def test_the_neighbour_an_allowed_call_still_runs_on_the_local_executor(
    tmp_path: Path, home: Path
) -> None:
    gate = await gate_for(tmp_path)
    try:
        result = await gate.call("bash", {"command": f"echo x > {home}/mine",
                                          "description": "write home"})
    finally:
        await gate.aclose()
    # the write outside the workspace is no write: rule's: the default confines it
    assert (home / "mine").exists() is False
    assert records(tmp_path, "decision")[-1]["decision"] == "sandbox"
    assert "file access denied" in result.text
    gate = await gate_for(tmp_path / "b", rows=RULES + "p, agent, *, write:/**, allow\n")
    try:
        allowed = await gate.call("bash", {"command": f"echo x > {home}/mine",
                                           "description": "write home"})
    finally:
        await gate.aclose()
    assert not allowed.is_error
    assert (home / "mine").read_text() == "x\n"  # an allow runs where the deployment runs
    assert records(tmp_path / "b", "result")[-1]["executor"] == "local"


async def test_a_sandboxed_background_call_is_confined_too(tmp_path: Path, home: Path) -> None:
    gate = await gate_for(tmp_path)
    ws = Path(gate.config.executor.workspace)
    try:
        started = await gate.call("bash", {
            "command": f"sleep 0.2; echo ok > bg.txt; echo x > {home}/bg",
            "description": "background", "run_in_background": True})
        assert started.text.startswith("started background task bash-1"), started.text
        await gate.wait_task("bash-1")
        out = await gate.call("bash_output", {"task_id": "bash-1"})
    finally:
        await gate.aclose()
    assert (ws / "bg.txt").read_text() == "ok\n"
    assert not (home / "bg").exists()
    assert "[status: completed, exit code: 1]" in out.text
    assert records(tmp_path, "decision")[-1]["executor"] == "bwrap"


async def test_a_sandboxed_call_has_no_network_even_where_the_deployment_has(
    tmp_path: Path, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    script = f"#!/bin/bash\necho hi > /dev/tcp/127.0.0.1/{port}\n"  # the analysis never reads it
    gate = await gate_for(tmp_path, sandbox={"network": True})
    (tmp_path / "ws" / "net.sh").write_text(script)
    (tmp_path / "ws" / "net.sh").chmod(0o755)
    try:
        cut = await gate.call("bash", {"command": "./net.sh", "description": "connect"})
        assert records(tmp_path, "decision")[-1]["decision"] == "sandbox"
        assert not connected(listener), cut.text
    finally:
        await gate.aclose()
    # the control: the same deployment's own bwrap executor has the network it configures
    gate = await gate_for(tmp_path / "c", sandbox={"network": True}, executor={"kind": "bwrap"},
                          rows=RULES + "p, agent, *, ./net.sh, allow\n")
    (tmp_path / "c" / "ws" / "net.sh").write_text(script)
    (tmp_path / "c" / "ws" / "net.sh").chmod(0o755)
    try:
        await gate.call("bash", {"command": "./net.sh", "description": "connect"})
    finally:
        await gate.aclose()
    assert connected(listener)


@pytest.mark.parametrize(
    ("bwrap", "why"),
    [
        pytest.param("missing", "bubblewrap is not installed", id="bwrap-missing"),
        pytest.param("failing", "bwrap cannot start a sandbox here", id="probe-fails"),
    ],
)
async def test_where_it_cannot_be_confined_it_is_an_ask_and_never_runs_unconfined(
    tmp_path: Path, home: Path, bwrap: str, why: str
) -> None:
    path = tmp_path / "no-bwrap" if bwrap == "missing" else failing_bwrap(tmp_path)
    marker = tmp_path / "ws" / "ran"
    gate = await gate_for(tmp_path, sandbox={"bwrap_path": str(path)})
    try:
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "write"})
        background = await gate.call("bash", {"command": f"touch {marker}",
                                              "description": "write", "run_in_background": True})
    finally:
        await gate.aclose()
    assert result.is_error
    assert result.outcome == "not approved"
    assert why in result.text
    assert "it would run confined in shellgate's sandbox" in result.text
    assert background.outcome == "not approved"
    assert not marker.exists()  # the headless approver said no: nothing ran anywhere
    decision = records(tmp_path, "decision")[-1]
    assert (decision["decision"], decision["layer"]) == ("ask", "sandbox")
    assert why in decision["reason"]


async def test_an_approved_ask_for_an_unconfinable_call_runs_as_approved(
    tmp_path: Path, home: Path
) -> None:
    """A person approved that exact call: it runs where the deployment runs it."""
    marker = tmp_path / "ws" / "ran"
    gate = await gate_for(tmp_path, approver=AllowApprover(),
                          sandbox={"bwrap_path": str(tmp_path / "no-bwrap")})
    try:
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "w"})
    finally:
        await gate.aclose()
    assert not result.is_error, result.text
    assert marker.exists()
    assert records(tmp_path, "approval")[-1]["answer"] == "allow_once"
    assert records(tmp_path, "result")[-1]["executor"] == "local"


async def test_a_workdir_outside_the_workspace_cannot_be_confined(tmp_path: Path) -> None:
    gate = await gate_for(tmp_path)
    try:
        result = await gate.call("bash", {"command": "echo x > f", "description": "w",
                                          "workdir": str(tmp_path)})
    finally:
        await gate.aclose()
    assert result.outcome == "not approved"
    assert "is outside the workspace, where the sandbox runs nothing" in result.text
    assert not (tmp_path / "f").exists()


async def test_a_sandbox_denial_can_ask_to_run_unconfined(tmp_path: Path, home: Path) -> None:
    asked: list[Any] = []

    class Recording(AllowApprover):
        async def __call__(self, request: Any) -> Any:
            asked.append(request)
            return await super().__call__(request)

    gate = await gate_for(tmp_path, approver=Recording())
    args = {"command": f"echo x > {home}/needed", "description": "write home"}
    try:
        assert gate.sandboxed  # the schema offers sandbox_permissions on a local deployment
        first = await gate.call("bash", args)
        assert "[sandbox: escalation available" in first.text
        assert not asked
        retry = await gate.call("bash", {**args, "sandbox_permissions": "full-access",
                                         "justification": "the tool reads its config there"})
    finally:
        await gate.aclose()
    assert not retry.is_error, retry.text
    assert (home / "needed").read_text() == "x\n"
    assert len(asked) == 1
    assert asked[0].escalation == "full-access"
    assert "wider 'full-access' sandbox mode instead of 'workspace-write'" in asked[0].question
    assert records(tmp_path, "result")[-1]["executor"] == "local"


async def test_an_escalation_nobody_approves_does_not_run(tmp_path: Path, home: Path) -> None:
    gate = await gate_for(tmp_path)
    try:
        refused = await gate.call("bash", {"command": f"echo x > {home}/needed",
                                           "description": "w", "sandbox_permissions":
                                           "full-access", "justification": "needs it"})
    finally:
        await gate.aclose()
    assert refused.outcome == "not approved"
    assert not (home / "needed").exists()


async def test_a_host_that_runs_the_command_itself_gets_an_ask(tmp_path: Path) -> None:
    gate = await gate_for(tmp_path)
    args = {"command": "./build.sh", "description": "build"}
    try:
        ours = await gate.decide("bash", args)
        assert (ours.effect, ours.needs_approval, ours.sandboxed) == ("sandbox", False, True)
        refused = gate.handoff("bash", args, decision=ours)  # never handed to a host
        assert refused is not None
        assert refused.outcome == "denied"
        theirs = await gate.decide("bash", args, host_runs=True)
        assert (theirs.effect, theirs.needs_approval, theirs.sandboxed) == ("ask", True, False)
        assert "the host runs the command itself" in theirs.reason
        approval = gate.approve(theirs, "alice@example.com")
        assert gate.handoff("bash", args, approval=approval) is None  # a person said yes
    finally:
        await gate.aclose()


async def test_a_session_grant_never_carries_a_part_the_policy_confines(tmp_path: Path) -> None:
    rows = RULES + "p, agent, *, touch *, ask, writes files\n"
    gate = await gate_for(tmp_path, rows=rows, approval={"allow_session": True})
    try:
        alone = await gate.decide("bash", {"command": "touch notes.txt", "description": "p"})
        both = await gate.decide("bash", {"command": "touch notes.txt && ./x.sh",
                                          "description": "p"})
    finally:
        await gate.aclose()
    from shellgate.approval.scope import session_scope

    assert alone.verdict is not None
    assert both.verdict is not None
    assert session_scope(alone.verdict, permitted=True) == ("touch notes.txt",)
    assert session_scope(both.verdict, permitted=True) == ()
    assert both.question is not None
    assert "approving also runs `./x.sh` outside the sandbox" in both.question


async def test_a_wrapper_cannot_move_a_sandboxed_call_off_bwrap(tmp_path: Path) -> None:
    from shellgate.hookspecs import hookimpl

    class Loosen:
        @hookimpl(wrapper=True)
        def shellgate_execute(self, plan: dict[str, Any]) -> Any:
            plan["executor"] = "local"
            return (yield)

    gate = await gate_for(tmp_path)
    gate.decider.register(Loosen(), name="loosen")
    marker = tmp_path / "ws" / "ran"
    try:
        result = await gate.call("bash", {"command": f"touch {marker}", "description": "w"})
    finally:
        await gate.aclose()
    assert result.is_error
    assert "tried to run a sandboxed call unsandboxed" in result.text
    assert not marker.exists()


async def test_one_confined_executor_serves_every_sandboxed_call(tmp_path: Path) -> None:
    """Probed once; where the deployment's sandbox settings are the confined ones
    already, it is the deployment's own bwrap executor (one set of placeholders)."""
    gate = await gate_for(tmp_path)
    try:
        for _ in range(3):
            await gate.call("bash", {"command": "./x.sh", "description": "x"})
        confined = [ex for ex in gate._executors.values() if ex.kind == "bwrap"]
        assert len(confined) == 1
        assert confined[0] is await gate.executor_for("bwrap")
    finally:
        await gate.aclose()
    assert [r["executor"] for r in records(tmp_path, "result")] == ["bwrap"] * 3


# -- the command line: shellgate run and shellgate check -------------------------------

def cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "shellgate.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def local_config(tmp_path: Path, extra: str = "") -> Path:
    """A local deployment with the packaged default policy and closing default."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    config = tmp_path / "shellgate.toml"
    config.write_text(f'[executor]\nkind = "local"\nworkspace = "ws"\n{extra}'
                      '[audit]\npath = "audit.jsonl"\n')
    return config


def test_shellgate_run_confines_what_the_packaged_default_sandboxes(
    tmp_path: Path, home: Path, listener: socket.socket
) -> None:
    """The issue's containment target, through the real CLI on a local deployment."""
    config = local_config(tmp_path)
    ws = tmp_path / "ws"
    port = listener.getsockname()[1]
    (ws / "net.py").write_text(
        f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n")
    (ws / "home.py").write_text("import os\nopen(os.path.expanduser('~/pwned'), 'w')\n")

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return cli("run", "--config", str(config), "--", command, cwd=ws, home=home)

    made = run("python3 -c \"open('made.txt', 'w').write('ok')\"")
    assert made.returncode == 0, made.stderr
    assert (ws / "made.txt").read_text() == "ok"
    homed = run("python3 home.py")
    assert homed.returncode != 0
    assert "Read-only file system" in homed.stdout
    assert not (home / "pwned").exists()
    net = run("python3 net.py")
    assert net.returncode != 0
    assert not connected(listener)
    decisions = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(r["decision"], r["executor"]) for r in decisions if r["type"] == "decision"] == [
        ("sandbox", "bwrap")] * 3


@pytest.mark.parametrize(
    ("bwrap", "status", "decision", "why"),
    [
        pytest.param(None, 0, "sandbox", None, id="bwrap-works"),
        pytest.param("missing", 10, "ask", "bubblewrap is not installed", id="bwrap-missing"),
        pytest.param("failing", 10, "ask", "bwrap cannot start a sandbox here", id="probe-fails"),
    ],
)
def test_check_reports_sandbox_only_where_the_call_can_be_confined(
    tmp_path: Path, home: Path, bwrap: str | None, status: int, decision: str, why: str | None
) -> None:
    path = {None: None, "missing": tmp_path / "nope", "failing": None}[bwrap]
    if bwrap == "failing":
        path = failing_bwrap(tmp_path)
    extra = "" if path is None else f'[sandbox]\nbwrap_path = "{path}"\n'
    config = local_config(tmp_path, extra)
    done = cli("check", "--config", str(config), "--json", "--", "pytest -q", cwd=tmp_path / "ws",
               home=home)
    assert done.returncode == status, done.stderr
    out = json.loads(done.stdout)
    assert out["decision"] == decision
    assert out["segments"][0]["decision"] == decision
    if why is None:
        assert out["rule"].startswith("default/policy.csv:")
    else:
        assert why in out["reason"]
        assert out["layer"] == "sandbox"
    # its neighbour: an allowed command needs no sandbox, probed or not
    allowed = cli("check", "--config", str(config), "--", "ls -la", cwd=tmp_path / "ws", home=home)
    assert allowed.returncode == 0
