"""Gemini CLI policy TOML: prefixes, regexes, conditions and the priority check."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.importers import SourceError, read_source
from shellgate.policy.importers.common import Imported


def read(tmp_path: Path, text: str) -> Imported:
    file = tmp_path / "p.toml"
    file.write_text(text, encoding="utf-8")
    return read_source("gemini", file)


def rule(body: str) -> str:
    return f'[[rule]]\ntoolName = "run_shell_command"\n{body}\n'


def test_prefix_has_a_word_boundary_and_a_literal_regex_has_none(tmp_path: Path) -> None:
    imported = read(tmp_path, rule('commandPrefix = "git"\ndecision = "allow"\npriority = 1')
                    + rule('commandRegex = "npm"\ndecision = "deny"\npriority = 1'))
    prefix, regex = imported.rules
    assert prefix.patterns == ("git *",)
    assert prefix.matches(["git", "status"])
    assert not prefix.matches(["github"])
    assert regex.patterns == ("npm*",)
    assert regex.matches(["npmx"])


def test_catch_all_deny_under_allows_suggests_the_closing_default(tmp_path: Path) -> None:
    imported = read(tmp_path, '[[rule]]\ntoolName = "*"\ndecision = "deny"\npriority = 0\n'
                    + rule('commandPrefix = "ls"\ndecision = "allow"\npriority = 10'))
    deny, _allow = imported.rules
    assert deny.patterns == ("*",)
    notes = {n.line: n.message for n in imported.notes}
    assert "every tool" in notes[1]
    assert "closing default" in notes[5]
    assert "line 1" in notes[5]


def test_args_pattern_on_other_arguments_is_not_imported(tmp_path: Path) -> None:
    imported = read(tmp_path, rule('argsPattern = "\\"dir_path\\":\\"/tmp\\""\n'
                                   'decision = "deny"\npriority = 5'))
    (only,) = imported.rules
    assert not only.write
    assert "argsPattern" in imported.notes[0].message


def test_args_pattern_on_the_command_reads_as_a_regex(tmp_path: Path) -> None:
    imported = read(tmp_path, rule("argsPattern = '\"command\":\"(git|npm) '\n"
                                   'decision = "ask_user"\npriority = 5'))
    (only,) = imported.rules
    assert only.patterns == ("re:(?:(git|npm) ).*",)
    assert only.effect == "ask"


def test_a_mode_bound_deny_is_imported_unconditionally(tmp_path: Path) -> None:
    imported = read(tmp_path, rule('commandPrefix = "rm"\ndecision = "deny"\npriority = 5\n'
                                   'modes = ["plan"]'))
    (only,) = imported.rules
    assert only.write
    assert "imported as 'rm *'" in imported.notes[0].message


def test_commas_and_quotes_survive_into_a_set_that_loads(tmp_path: Path) -> None:
    from shellgate.config import Config
    from shellgate.policy.importers.writer import write_set
    from shellgate.policy.loader import load_policy_set

    imported = read(tmp_path, rule("commandRegex = 'echo a{1,3}'\ndecision = \"deny\"\n"
                                   "priority = 5\ndeny_message = 'No, \"never\"'"))
    out = tmp_path / "set"
    written = write_set(imported, out, Config())
    (loaded,) = load_policy_set(out).rules
    assert loaded.pattern.text == "re:(?:echo a{1,3}).*"
    assert loaded.reason == 'No, "never"'
    assert written.tests == 0  # a regex gives no certain command to test


@pytest.mark.parametrize(
    "body",
    [
        pytest.param('commandPrefix = 5\ndecision = "allow"\npriority = 1', id="prefix-type"),
        pytest.param('decision = ["allow"]\npriority = 1', id="decision-list"),
        pytest.param('decision = "allow"\npriority = 1\nmodes = "yolo"', id="modes-string"),
        pytest.param('decision = "allow"\npriority = 1000', id="priority-range"),
        pytest.param('commandPrefix = "a"\ncommandRegex = "b"\ndecision = "allow"\npriority = 1',
                     id="prefix-and-regex"),
    ],
)
def test_what_gemini_cli_refuses_is_bad_input(tmp_path: Path, body: str) -> None:
    with pytest.raises(SourceError) as caught:
        read(tmp_path, "\n" + rule(body))
    assert caught.value.line == 2
