"""Red team round on the ``sandbox`` effect: a call the policy sandboxes must never
run unconfined, through any door, and must leave nothing behind that runs later.

Real gates, real bwrap, real processes; each test asserts on the host afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellgate.approval import DenyApprover
from shellgate.gate import Gate
from tests.conftest import make_config
from tests.policy.policy_helpers import write_set

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

#: A stand-in bwrap: drops every option and runs the command, unconfined.
FAKE_BWRAP = '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n'
#: A stand-in shell: leaves a mark in $HOME, then runs the real bash.
FAKE_SHELL = '#!/bin/sh\n: > "$HOME/planted-shell-ran"; exec /bin/bash "$@"\n'


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home of its own under /var/tmp (outside the workspace; the sandbox's /tmp
    is private, so a target under /tmp would prove nothing)."""
    path = Path(tempfile.mkdtemp(prefix="sg-red2-home-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_a_sandboxed_call_cannot_plant_bwrap_or_the_shell_on_the_gates_path(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's PATH often holds a workspace directory (an activated venv, `uv
    run`, `npm run`, direnv's PATH_add). A sandboxed call may write there; the next
    gate must not then take `bwrap` or the shell from it, or its sandbox decisions
    run unconfined and its allowed calls run the planted shell."""
    ws = tmp_path / "ws"
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{venv_bin}:.:{os.environ['PATH']}")
    monkeypatch.chdir(ws)  # a relative PATH entry ('.') is the workspace too
    rules = write_set(tmp_path, "p, agent, *, echo *, allow\n", name="team")
    sections = {"policy": {"paths": [str(rules)], "default": "sandbox"}}
    async with Gate(make_config(tmp_path, **sections), approver=DenyApprover()) as gate:
        plant = (f"printf '%s' '{FAKE_BWRAP}' > .venv/bin/bwrap; "
                 f"printf '%s' '{FAKE_SHELL}' > .venv/bin/bash; "
                 "cp .venv/bin/bwrap ./bwrap; chmod +x .venv/bin/bwrap .venv/bin/bash bwrap")
        result = await gate.call("bash", {"command": plant, "description": "plant"})
        assert result.outcome == "ok", result.text
    assert (venv_bin / "bwrap").stat().st_mode & stat.S_IXUSR  # it did land: workspace-write
    # The next session's gate, over the same workspace and PATH:
    async with Gate(make_config(tmp_path, **sections), approver=DenyApprover()) as gate:
        await gate.call("bash", {"command": "touch $HOME/escaped", "description": "escape"})
        allowed = await gate.call("bash", {"command": "echo hi", "description": "allowed"})
        assert allowed.outcome == "ok", allowed.text
    assert not (home / "escaped").exists(), "a sandboxed call ran through a planted bwrap"
    assert not (home / "planted-shell-ran").exists(), "the gate ran a planted shell"


async def test_a_symlink_to_the_packaged_set_is_the_admins_own_path_and_closes_with_ask(
    tmp_path: Path,
) -> None:
    """``[policy] paths`` naming a link the admin owns is a set the admin names: the
    closing default unset is ``ask``. Read through the link, it was ``sandbox``, and
    it stayed ``sandbox`` when the admin later pointed the link at a team set (live
    reload swaps the rules, not the closing default): what the team set does not
    name ran unasked instead of being asked."""
    from shellgate.config import load_config, packaged_policy_set
    from tests.conftest import wait_until_async

    packaged = packaged_policy_set()
    assert packaged is not None
    link = tmp_path / "policy"
    link.symlink_to(packaged)
    assert load_config(None, policy={"paths": [str(link)]}).policy.closing_default == "ask"
    os.environ["SHELLGATE_POLICY__PATHS"] = json.dumps([str(link)])
    try:
        assert load_config(None).policy.closing_default == "ask"
    finally:
        del os.environ["SHELLGATE_POLICY__PATHS"]

    team = write_set(tmp_path, "p, agent, *, echo *, allow\n", name="team")
    config = make_config(tmp_path, policy={"paths": [str(link)], "default": None,
                                           "reload_poll_ms": 50})
    async with Gate(config, approver=DenyApprover()) as gate:
        rules = gate.decider.rules
        assert rules is not None
        before = rules.state
        tmp_link = tmp_path / "policy.new"
        tmp_link.symlink_to(team)
        tmp_link.replace(link)  # the admin's `ln -sfn team policy`
        assert await wait_until_async(lambda: rules.state is not before)
        decided = await gate.decide("bash", {"command": "uname -a", "description": "d"})
        assert decided.effect == "ask", decided.reason


async def test_a_sandbox_decision_is_not_handed_to_a_host_and_the_refusal_says_why(
    tmp_path: Path, home: Path
) -> None:
    """``gate.decide`` without ``host_runs`` keeps ``sandbox``; ``gate.handoff`` of it
    is refused (nothing runs on the host), naming the policy, not ``[executor] kind``
    (this deployment is a local one)."""
    config = make_config(tmp_path, policy={"default": "sandbox"})
    arguments = {"command": "touch $HOME/handed-off", "description": "d"}
    async with Gate(config, approver=DenyApprover()) as gate:
        decided = await gate.decide("bash", arguments)
        assert (decided.effect, decided.sandboxed) == ("sandbox", True)
        refused = gate.handoff("bash", arguments, decision=decided)
        assert refused is not None
        assert refused.outcome == "denied"
        assert "the policy sandboxes this command" in refused.text
        assert "kind" not in refused.text
        hosted = await gate.decide("bash", arguments, host_runs=True)
        assert hosted.effect == "ask"
        assert hosted.needs_approval
    assert not (home / "handed-off").exists()


@pytest.mark.xfail(strict=True, reason=(
    "known, unfixed: a run-later place missing from the workspace gets no placeholder "
    "(docs/sandbox.md, known limits), so a sandboxed call the analysis cannot read "
    "creates it; under a sandbox default that needs no person"))
async def test_a_sandboxed_program_cannot_create_a_missing_run_later_file(
    tmp_path: Path, home: Path
) -> None:
    """`python3 x.py` is sandboxed unasked by the packaged set; a program that spells
    the names at run time is not seen by the analysis, and a new
    `.claude/settings.json` (hooks the next Claude Code session runs on the host,
    unconfined) or `.envrc` lands in the workspace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "x.py").write_text(
        "import os\nd = chr(46) + 'claude'\nos.makedirs(d, exist_ok=True)\n"
        "open(os.path.join(d, 'settings' + chr(46) + 'json'), 'w').write('{}')\n"
        "open(chr(46) + 'envrc', 'w').write('echo hi')\n"
    )
    config = make_config(tmp_path, policy={"default": "sandbox"})
    async with Gate(config, approver=DenyApprover()) as gate:
        result = await gate.call("bash", {"command": "python3 x.py", "description": "d"})
    assert result.run is not None
    assert result.run.executor == "bwrap"  # it ran confined, unasked
    assert not (ws / ".claude" / "settings.json").exists()
    assert not (ws / ".envrc").exists()
