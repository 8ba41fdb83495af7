"""What a source file says can only reach ``policy.csv`` as the rules the importer wrote.

A source rule's text is quoted in comments (``# not imported: …``, the heading of
each rule). The policy loader reads ``policy.csv`` line by line with
``str.splitlines``, so a line break inside that text — ``\\n``, or any of the
others Python breaks lines at (``\\u2028``, ``\\x85``, ``\\x0b``, …) — would end the
comment and make the rest of it a row: a settings file from a project could write
``p, agent, *, *, allow`` into the imported set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellgate.policy.importers import read_source
from shellgate.policy.importers.writer import policy_text
from shellgate.policy.loader import load_policy_set

INJECTED = "p, agent, *, *, allow"
BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"]


def _rows(text: str) -> list[str]:
    """The lines the policy loader reads as rows (not blank, not comments)."""
    return [s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#")]


@pytest.mark.parametrize("brk", [pytest.param(b, id=repr(b)) for b in BREAKS])
@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("Read(./.env{b}{row}{b}#)", id="not-bash"),
        pytest.param("Bash(ls{b}{row}{b}#)", id="bash"),
        pytest.param("Bash(ls && x{b}{row}{b}#)", id="compound"),
    ],
)
def test_a_claude_entry_cannot_write_a_row(tmp_path: Path, brk: str, entry: str) -> None:
    text = entry.format(b=brk, row=INJECTED)
    source = tmp_path / "settings.json"
    source.write_text(json.dumps({"permissions": {"deny": [text], "allow": ["Bash(git status)"]}}))
    written = policy_text(read_source("claude-code", source))
    assert INJECTED not in _rows(written)
    if "Bash(ls" not in text or "&&" in text:  # the only rule that is written: git status
        assert _rows(written) == ["p, agent, *, git status, allow"]


def test_an_imported_set_with_a_hostile_comment_allows_nothing_more(tmp_path: Path) -> None:
    source = tmp_path / "settings.json"
    source.write_text(json.dumps({"permissions": {
        "deny": ["Read(./.env\u2028" + INJECTED + "\u2028#)"], "allow": ["Bash(git status)"],
    }}))
    out = tmp_path / "set"
    out.mkdir()
    (out / "policy.csv").write_text(policy_text(read_source("claude-code", source)))
    (out / "model.conf").write_text(
        (Path(__file__).resolve().parents[2] / "policies/default/model.conf").read_text())
    loaded = load_policy_set(out)
    assert [r.pattern.text for r in loaded.rules] == ["git status"]
