"""Red-team helpers: the real decider over ``policies/default``, and a real bash.

``decide`` answers what ``shellgate check --policy policies/default`` answers
(allow, ask or deny) for a command run from ``WORKSPACE``. ``bash_runs`` runs a
harmless stand-in of an attack in a throwaway directory with the real bash and
reports whether the hidden marker command ran, so each bypass test is paired
with proof of what bash really does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from tests.sandbox.conftest import box, via  # noqa: F401  (bwrap fixtures, re-exported; outside is in tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
POLICY = str(REPO / "policies" / "default")
WORKSPACE = "/work/redteam-project"  # lexical only: the decider never touches it
HOME = os.path.expanduser("~")

Decide = Callable[[str], str]
#: The row a realistic allow-list has since writes are decided by ``write:`` rules:
#: the workspace is writable (protected paths and secrets stay closed). Red-team
#: allow-lists carry it, so every reproducer is shown not allowed with it in force.
WORKSPACE_WRITABLE = "p, agent, *, write:**, allow\n"


def decider_over(policy: str) -> Decider:
    """The real decider over the policy set ``policy``, deciding from ``WORKSPACE``."""
    # The closing default is ask here: these neighbours are about what the rules and
    # the analysis answer, and a sandbox default (the packaged one) would confine
    # whatever no rule names, hiding an ask that should be one. The packaged default
    # is tested with its own closing default in policies/default/tests.csv.
    config = load_config(
        None, policy={"paths": [policy], "default": "ask"}, audit={"path": None},
        executor={"workspace": WORKSPACE},
    )
    return Decider(config)


def deciding(decider: Decider) -> Decide:
    """``decide(command)``: the effect ``decider`` gives the agent's ``command``."""

    def run(command: str) -> str:
        call = CallInfo(
            tool="bash", command=command, subject="agent", tenant="default",
            session="redteam", workdir=WORKSPACE, workspace=WORKSPACE,
        )  # fmt: skip
        return decider.decide(call).effect

    return run


def decide_with_rules(directory: Path, rules: str) -> Decide:
    """``decide`` over a set in ``directory`` holding ``rules`` (the default model)."""
    shutil.copy(Path(POLICY) / "model.conf", directory / "model.conf")
    (directory / "policy.csv").write_text(rules, encoding="utf-8")
    return deciding(decider_over(str(directory)))


@pytest.fixture(scope="module")
def decider() -> Decider:
    return decider_over(POLICY)


@pytest.fixture(scope="module")
def decide(decider: Decider) -> Decide:
    return deciding(decider)


#: Runs argv as a child subreaper and waits for every orphan it collects: what bash
#: orphans (sort's compress program, less's LESSOPEN filter) is reaped there, not
#: left to this test process, which opened gates and so is a subreaper too.
_CONTAIN = (
    "import os, subprocess, sys, prctl\n"
    "prctl.set_child_subreaper(1)\n"
    "subprocess.run(sys.argv[1:], check=False)\n"
    "while True:\n"
    "    try:\n"
    "        os.wait()\n"
    "    except ChildProcessError:\n"
    "        break\n"
)


def bash_runs(command: str, tmp_path: Path) -> bool:
    """Run ``command`` (with ``MARKER`` standing for a file path) in ``tmp_path``.

    True when bash created the marker, i.e. the hidden command really ran.
    """
    marker = tmp_path / "marker"
    work = tmp_path / "cwd"
    work.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", _CONTAIN, "bash", "-c", command.replace("MARKER", str(marker))],
        cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, timeout=10, check=False,
    )  # fmt: skip
    return marker.exists()
