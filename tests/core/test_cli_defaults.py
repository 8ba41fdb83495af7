"""What the CLI does with no config: the packaged policy set, said so; no silent flags.

Real CLI processes started from a directory outside the checkout, with no config
file and no ``SHELLGATE_*`` variables: as a new user runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
NOTE = "note: no [policy] paths configured; using the packaged policy set "


def clean_env(pythonpath: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    env["PYTHONPATH"] = str(pythonpath)
    return env


def cli(*args: str, cwd: Path, pythonpath: Path = ROOT / "src") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *args],
        capture_output=True, text=True, cwd=cwd, env=clean_env(pythonpath), timeout=60,
        check=False,
    )


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory outside the checkout, without a policies/ of its own."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    assert ROOT not in path.resolve().parents
    return path


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """The package laid out as the wheel installs it: policies inside the package."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "src" / "shellgate", site / "shellgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "policies", site / "shellgate" / "policies")  # pyproject force-include
    return site


def test_check_outside_the_checkout_uses_the_packaged_policy_and_says_so(elsewhere: Path) -> None:
    done = cli("check", "--json", "--", "rm -rf /", cwd=elsewhere)
    assert done.returncode == 11, done.stderr
    packaged = ROOT / "policies" / "default"
    assert json.loads(done.stdout)["rule"].startswith("baseline/policy.csv:")  # set-relative
    assert done.stderr == f"{NOTE}{packaged}\n"  # on stderr: stdout is the JSON alone


def test_run_from_an_installed_package_uses_its_policy_set(elsewhere: Path, installed: Path) -> None:
    done = cli("run", "--", "echo hi", cwd=elsewhere, pythonpath=installed)
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    assert done.stderr == f"{NOTE}{installed / 'shellgate' / 'policies' / 'default'}\n"
    denied = cli("run", "--", "rm -rf /", cwd=elsewhere, pythonpath=installed)
    assert denied.returncode == 126
    assert denied.stderr.startswith(f"{NOTE}{installed / 'shellgate' / 'policies' / 'default'}\n")
    assert "denied by casbin rule baseline/policy.csv:" in denied.stderr


def test_a_policies_directory_in_the_cwd_is_not_the_gate_policy(elsewhere: Path) -> None:
    planted = elsewhere / "policies" / "default"
    planted.mkdir(parents=True)
    shutil.copy(ROOT / "src/shellgate/policy/model.conf", planted / "model.conf")
    (planted / "policy.csv").write_text("p, agent, *, *, allow\n")
    done = cli("check", "--json", "--", "rm -rf /", cwd=elsewhere)
    assert done.returncode == 11
    assert str(planted) not in done.stdout + done.stderr


def test_a_configured_policy_set_gets_no_note(elsewhere: Path) -> None:
    done = cli("check", "--policy", str(ROOT / "policies" / "default"), "--", "ls", cwd=elsewhere)
    assert done.returncode == 0
    assert done.stderr == ""


async def test_mcp_outside_the_checkout_serves_with_the_packaged_policy(
    elsewhere: Path, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "shellgate.cli", "mcp"],
        env=clean_env(ROOT / "src"), cwd=elsewhere,
    )
    errlog = tmp_path / "mcp-stderr.txt"
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(
            read, write
        ) as session:
            await session.initialize()
            listed = await session.call_tool("bash", {"command": "ls", "description": "list"})
            denied = await session.call_tool("bash", {"command": "rm -rf /", "description": "x"})
    assert not listed.is_error
    assert denied.is_error
    assert f"{NOTE}{ROOT / 'policies' / 'default'}" in errlog.read_text()


# -- --sandbox on the local executor ----------------------------------------------


@pytest.fixture
def approving(tmp_path: Path) -> Path:
    """A config whose approver says yes: the sandbox is all that could stop a write."""
    (tmp_path / "ws").mkdir()
    path = tmp_path / "shellgate.toml"
    path.write_text('[executor]\nworkspace = "ws"\n[approval]\nmode = "allow"\n'
                    '[audit]\npath = "audit.jsonl"\n')
    return path


@pytest.mark.parametrize("mode", ["read-only", "workspace-write"])
def test_run_refuses_a_sandbox_mode_the_local_executor_cannot_give(
    approving: Path, mode: str
) -> None:
    ws = approving.parent / "ws"
    done = cli("run", "--config", str(approving), "--sandbox", mode, "--", "touch made",
               cwd=ws)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines()[-2:] == [
        f"error: --sandbox {mode} needs the bwrap executor; the local executor runs "
        "commands unconfined",
        'hint: add --executor bwrap, or set [executor] kind = "bwrap" in the config',
    ]
    assert not (ws / "made").exists()


def test_run_full_access_on_the_local_executor_is_what_it_does(approving: Path) -> None:
    ws = approving.parent / "ws"
    done = cli("run", "--config", str(approving), "--sandbox", "full-access", "--",
               "touch made", cwd=ws)
    assert done.returncode == 0, done.stderr
    assert (ws / "made").exists()


@pytest.mark.bwrap
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bwrap")
def test_run_read_only_under_bwrap_keeps_the_write_out(approving: Path) -> None:
    ws = approving.parent / "ws"
    done = cli("run", "--config", str(approving), "--executor", "bwrap", "--sandbox",
               "read-only", "--", "touch made", cwd=ws)
    assert done.returncode not in (0, 2), done.stderr
    assert not (ws / "made").exists()


@pytest.mark.bwrap
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bwrap")
def test_a_relative_writable_root_is_the_one_next_to_the_config(
    approving: Path, elsewhere: Path
) -> None:
    conf_dir = approving.parent
    (conf_dir / "extra").mkdir()
    (elsewhere / "extra").mkdir()  # what a cwd-relative reading would open instead
    approving.write_text(approving.read_text() + '[sandbox]\nwritable_roots = ["extra"]\n')
    target = conf_dir / "extra" / "made"
    done = cli("run", "--config", str(approving), "--executor", "bwrap", "--",
               f"touch {target}", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert target.exists()
    assert list((elsewhere / "extra").iterdir()) == []
