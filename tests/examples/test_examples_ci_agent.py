"""examples/ci_agent.toml: a headless, sandboxed CI agent on the ci policy set."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.config import load_config
from shellgate.gate import Gate
from tests.examples.examples_helpers import EXAMPLES, POLICIES, bwrap_works, localised


def test_ci_config_is_headless_sandboxed_and_strict() -> None:
    config = load_config(EXAMPLES / "ci_agent.toml")
    assert config.executor.kind == "bwrap"
    assert config.sandbox.mode in ("read-only", "workspace-write")
    assert config.sandbox.network is False
    assert config.sandbox.escalation is False
    assert config.approval.mode == "deny"
    assert config.policy.default == "deny"
    assert [p.resolve() for p in config.policy.paths] == [POLICIES / "ci"]


@pytest.mark.skipif(not bwrap_works(), reason="bwrap does not work here")
async def test_ci_agent_runs_build_commands_in_the_sandbox_and_denies_the_rest(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    config = load_config(
        localised(
            EXAMPLES / "ci_agent.toml",
            tmp_path,
            {
                'workspace = "."': f'workspace = "{tmp_path / "ws"}"',
                '"../policies/ci"': f'"{POLICIES / "ci"}"',
                'path = "ci-audit.jsonl"': f'path = "{tmp_path / "audit.jsonl"}"',
            },
        )
    )
    async with Gate(config) as gate:
        assert gate.sandboxed
        echo = await gate.call("bash", {"command": "echo built", "description": "d"})
        unknown = await gate.call("bash", {"command": "uptime", "description": "d"})
        outside = await gate.call(
            "bash", {"command": "echo x > /etc/ci-canary", "description": "d"}
        )
    assert echo.run is not None
    assert echo.run.executor == "bwrap"
    assert echo.text == "built\n"
    assert unknown.is_error
    assert unknown.text.startswith("Error: ")
    assert outside.is_error or (outside.run is not None and outside.run.exit_code != 0)
    assert not Path("/etc/ci-canary").exists()
