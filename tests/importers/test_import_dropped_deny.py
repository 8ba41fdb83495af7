"""A deny (or ask) the import cannot write must not leave the allows it overrode in force.

Gemini CLI takes the highest-priority matching rule. A deny at priority 500 that
shellgate cannot express (an ``argsPattern`` over other arguments, a regex Python
does not read) is dropped with a warning; an allow at priority 100 under it is a
faithful translation of that rule alone, but written without the deny it allows
what Gemini CLI refused. Such an allow is not written either (fail closed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.importers import read_source
from shellgate.policy.importers.writer import policy_text

DROPPED = [
    pytest.param("argsPattern = '\"dir_path\":\"/etc'", id="args-pattern"),
    pytest.param("commandRegex = '(?<name>rm) '", id="regex-python-cannot-read"),
    pytest.param('commandPrefix = " "', id="empty-prefix"),
]


def rule(body: str) -> str:
    return f'[[rule]]\ntoolName = "run_shell_command"\n{body}\n'


def rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("condition", DROPPED)
@pytest.mark.parametrize("effect", ["deny", "ask_user"])
def test_an_allow_under_a_dropped_deny_is_not_written(tmp_path: Path, condition: str,
                                                      effect: str) -> None:
    file = tmp_path / "p.toml"
    file.write_text(rule(f'{condition}\ndecision = "{effect}"\npriority = 500')
                    + rule('commandPrefix = "rm"\ndecision = "allow"\npriority = 100')
                    + rule('commandPrefix = "git status"\ndecision = "allow"\npriority = 900'))
    imported = read_source("gemini", file)
    written = rows(policy_text(imported))
    assert not any(", rm *, allow" in r for r in written)
    assert any("git status *, allow" in r for r in written)  # above the dropped rule: kept
    assert any("cannot express" in n.message and n.line == 6 for n in imported.notes)


def test_an_allow_above_a_dropped_deny_is_kept(tmp_path: Path) -> None:
    file = tmp_path / "p.toml"
    file.write_text(rule("argsPattern = '\"dir_path\":\"/etc'\ndecision = \"deny\"\npriority = 5")
                    + rule('commandPrefix = "ls"\ndecision = "allow"\npriority = 10'))
    written = rows(policy_text(read_source("gemini", file)))
    assert written == ["p, agent, *, ls *, allow"]
