"""What the model reads about a rule: the set-relative rule name, the admin's reason,
a pattern whole or not at all — never a host path or a regex cut mid-way."""

from __future__ import annotations

import os
from pathlib import Path

from shellgate.config import load_config
from shellgate.gate import SyncGate
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.ruleset import MAX_PATTERN_SHOWN, set_names

# tests.* is first-party once the test folders are packages: its own block either way
# isort: split
from tests.policy.policy_helpers import call, seg, write_set

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_a_denial_names_the_rule_relative_to_its_set_and_says_its_reason(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # The way examples/shellgate.toml names its set: a path with `..` in it.
    policy = EXAMPLES / ".." / "policies" / "default"
    config = load_config(None, policy={"paths": [str(policy)], "default": "deny"},
                         executor={"workspace": str(ws)}, audit={"path": None})
    with SyncGate(config) as gate:
        result = gate.call("bash", {"command": "rm -rf /", "description": "clean up"})
    assert result.is_error
    text = result.text
    assert text.startswith("Error: denied by casbin rule baseline/policy.csv:"), text
    assert ": removes the system or a home directory (deny rule matches 'rm -rf /')" in text
    for host_path in (str(ROOT), "..", "/tmp"):
        assert host_path not in text
    for raw in ("re:", "..."):  # no regex source, nothing cut
        assert raw not in text
    assert text.count("removes the system or a home directory") == 1


def test_sets_with_the_same_name_are_told_apart() -> None:
    names = set_names([Path("/srv/org/default"), Path("/srv/team/default"), Path("/x/ci")])
    assert sorted(names.values()) == ["ci", "org/default", "team/default"]
    assert set_names([Path("/a/b/../pol")]) == {"/a/pol": "pol"}


def test_a_long_pattern_is_named_by_its_rule_not_cut(tmp_path: Path) -> None:
    long_glob = "deploy " + " ".join(f"arg{i}" for i in range(20)) + " *"
    long_regex = "re:" + "|".join(f"tool{i}" for i in range(20))
    assert len(long_glob) > MAX_PATTERN_SHOWN
    assert len(long_regex) > MAX_PATTERN_SHOWN
    directory = write_set(tmp_path, f"p, agent, *, {long_glob}, ask\n"
                                    f"p, agent, *, \"{long_regex}\", deny\n"
                                    "p, agent, *, re:short.*, deny, short ones need no quote\n"
                                    "p, agent, *, ls *, allow\n", name="team")
    lay = CasbinLayer([directory])
    argv = tuple(long_glob.removesuffix(" *").split())
    asked = lay.shellgate_check(call(), seg(*argv))
    assert asked is not None
    assert asked.rule == "team/policy.csv:1"
    assert asked.reason == f"ask rule for agent in tenant * matches '{' '.join(argv)}'"
    denied = lay.shellgate_check(call(), seg("tool7"))
    assert denied is not None
    assert denied.reason == "deny rule for agent in tenant * matches 'tool7'"
    short = lay.shellgate_check(call(), seg("shorty"))
    assert short is not None
    assert short.reason == "short ones need no quote (deny rule matches 'shorty')"
    listed = lay.shellgate_check(call(), seg("ls", "-la"))
    assert listed is not None
    assert listed.reason == "allow 'ls *' for agent in tenant * matches 'ls -la'"
    assert os.sep + "tmp" not in (listed.rule or "")
