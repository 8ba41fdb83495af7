"""A Codex rules file part of which the import cannot read writes no allow.

Codex takes the strictest matching rule. A ``forbidden`` rule the reader cannot
read — built from variables, made by a helper function or in a loop — still
refuses, in Codex, commands a literal ``allow`` rule allows. Written without it,
that allow lets through what Codex refused, and what the unread rule matches is
unknown; so no allow is written while the file holds such a rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.importers import read_source
from shellgate.policy.importers.writer import policy_text

ALLOW = 'prefix_rule(pattern = ["rm"])\nprefix_rule(pattern = ["git", "reset"], decision = "prompt")\n'


def rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize(
    "unread",
    [
        pytest.param('RM = ["rm", "-rf"]\nprefix_rule(pattern = RM, decision = "forbidden")\n',
                     id="variable-pattern"),
        pytest.param('D = "forbidden"\nprefix_rule(pattern = ["rm", "-rf"], decision = D)\n',
                     id="variable-decision"),
        pytest.param('def forbid(p):\n    prefix_rule(pattern = p, decision = "forbidden")\n'
                     'forbid(["rm", "-rf"])\n', id="helper-function"),
        pytest.param('for c in ["rm"]:\n    prefix_rule(pattern = [c], decision = "forbidden")\n',
                     id="loop"),
        pytest.param('_ = prefix_rule(pattern = ["rm", "-rf"], decision = "forbidden")\n',
                     id="assigned-call"),
    ],
)
def test_no_allow_is_written_beside_a_rule_that_could_forbid(tmp_path: Path,
                                                             unread: str) -> None:
    file = tmp_path / "default.rules"
    file.write_text(ALLOW + unread)
    imported = read_source("codex", file)
    written = rows(policy_text(imported))
    assert not any(r.endswith(", allow") for r in written)
    assert "p, agent, *, git reset *, ask" in written  # stricter rules stay
    assert any("cannot be read" in n.message and n.line == 1 for n in imported.notes)


@pytest.mark.parametrize(
    "harmless",
    [
        pytest.param('host_executable(name = "git", paths = ["/usr/bin/git"])\n', id="host-exe"),
        pytest.param('prefix_rule(pattern = P, decision = "allow")\n', id="unread-allow"),
        pytest.param('prefix_rule(pattern = P)\n', id="unread-default-allow"),
        pytest.param('X = ["a"]\n', id="assignment"),
        pytest.param('def helper(p):\n    return p\n', id="definition"),
    ],
)
def test_allows_stay_beside_what_cannot_forbid(tmp_path: Path, harmless: str) -> None:
    file = tmp_path / "default.rules"
    file.write_text(ALLOW + harmless)
    written = rows(policy_text(read_source("codex", file)))
    assert "p, agent, *, rm *, allow" in written
