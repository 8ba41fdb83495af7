"""Codex `.rules` files are read, never run: only literal `prefix_rule` calls count."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.importers import SourceError, read_source
from shellgate.policy.importers.common import MAX_EXPANSION


def read(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    file = tmp_path / "x.rules"
    file.write_text(text, encoding="utf-8")
    return read_source("codex", file)


def test_nothing_in_the_file_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    imported = read(tmp_path, f"""\
__import__("os").system("touch {marker}")
X = ["rm"]
prefix_rule(pattern=X, decision="forbidden")
prefix_rule(pattern=[open("{marker}", "w").name])
load("//other.rules", "rule")
prefix_rule(pattern=["ls"])
""")
    assert not marker.exists()
    assert [n.line for n in imported.notes] == [1, 2, 3, 4, 5, 6]
    assert "not imported" in imported.notes[2].message
    # The unread forbidden rule (line 3) may refuse anything: no allow is written.
    assert "cannot be read (line 1, 3)" in imported.notes[5].message
    assert [r for r in imported.rules if r.write] == []
    assert [r.line for r in imported.rules if not r.write] == [3, 4, 6]


def test_alternatives_expand_and_large_products_become_one_regex(tmp_path: Path) -> None:
    imported = read(tmp_path, 'prefix_rule(pattern=["gh", "pr", ["view", "list"]])\n')
    assert imported.rules[0].patterns == ("gh pr view *", "gh pr list *")
    many = [f"s{i}" for i in range(MAX_EXPANSION + 1)]
    big = read(tmp_path, f'prefix_rule(pattern=["tool", {many!r}], decision="prompt")\n')
    (pattern,) = big.rules[0].patterns
    assert pattern.startswith("re:tool (?:s0|s1|")
    assert big.rules[0].effect == "ask"


def test_tokens_needing_literal_reading_become_regex(tmp_path: Path) -> None:
    imported = read(tmp_path, 'prefix_rule(pattern=["echo", "*"], decision="forbidden")\n')
    assert imported.rules[0].patterns == ("re:echo \\*(?: .*)?",)


def test_a_token_with_a_space_is_an_allow_not_imported(tmp_path: Path) -> None:
    imported = read(tmp_path, 'prefix_rule(pattern=["git", "commit -m"])\n')
    (rule,) = imported.rules
    assert not rule.write
    assert "space" in imported.notes[0].message


def test_unknown_argument_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as caught:
        read(tmp_path, '\nprefix_rule(pattern=["ls"], when="always")\n')
    assert caught.value.line == 2


def test_an_example_spanning_lines_is_a_warning_not_a_row(tmp_path: Path) -> None:
    from shellgate.config import Config
    from shellgate.policy.importers.writer import write_set

    imported = read(tmp_path, 'prefix_rule(pattern=["echo"], match=[["echo", "a\\nb"]])\n')
    written = write_set(imported, tmp_path / "set", Config())
    (note,) = written.notes
    assert "spans lines" in note.message
    assert written.tests == 1  # the derived 'echo' row
