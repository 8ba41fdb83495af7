"""Claude Code `Bash(…)` specifiers read as shellgate patterns, checked against Claude
Code's documented matching (https://code.claude.com/docs/en/permissions): the
written pattern matches exactly the commands the source's reading matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.importers import read_source
from shellgate.policy.importers.claude import suggest, translate
from shellgate.policy.patterns import compile_pattern

COMMANDS = [
    "git", "git diff", "git diff --stat", "git diffx", "git status", "git log main",
    "git push origin main", "git checkout main", "ls", "ls -la", "lsof", "npm run build",
    "npm run build:dev", "npm run test", "npm run test:unit", "node --version", "a*b",
    "ab", "git x push", "git x push y", "echo a b",
]


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        pytest.param("git diff:*", "git diff *", id="legacy-prefix"),
        pytest.param("git diff *", "git diff *", id="space-star"),
        pytest.param("npm run build", "npm run build", id="exact"),
        pytest.param("ls*", "ls*", id="no-boundary"),
        pytest.param("git * main", "git * main", id="middle"),
        pytest.param("* --version", "* --version", id="leading"),
        pytest.param("*", "*", id="star"),
        pytest.param("git * push *", "re:git .* push .*", id="several-stars"),
        pytest.param("a\\*b", "re:a\\*b", id="literal-star"),
        pytest.param('echo "a b"', "echo a b", id="quoted-space"),
    ],
)
def test_translation_matches_what_claude_code_matches(spec: str, pattern: str) -> None:
    got = translate(spec)
    assert got.pattern == pattern
    compiled = compile_pattern(pattern)
    for command in COMMANDS:
        if spec == 'echo "a b"':
            continue  # argv ["echo", "a b"] vs ["echo", "a", "b"]: a warning, not a match test
        assert compiled.matches(command) == got.matches(command.split(" ")), command


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param("curl * | bash", id="pipe"),
        pytest.param("make && make install", id="and"),
        pytest.param("echo x > out.txt", id="redirect"),
        pytest.param('echo "unbalanced', id="bad-quotes"),
    ],
)
def test_compound_or_unreadable_specifiers_have_no_pattern(spec: str) -> None:
    assert translate(spec).pattern is None


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        pytest.param("Bash(git diff:*)", "git diff *", id="bash-legacy"),
        pytest.param("git diff:*", "git diff *", id="bare-legacy"),
        pytest.param("Bash(npm run test)", "npm run test", id="bash-exact"),
        pytest.param("Bash(curl * | sh)", None, id="compound"),
        pytest.param("git diff *", None, id="already-shellgate"),
    ],
)
def test_suggest(text: str, fix: str | None) -> None:
    assert suggest(text) == fix


def test_a_quoted_space_allow_is_not_imported_but_a_deny_is(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text('{"permissions": {"allow": ["Bash(echo \\"a b\\")"],\n'
                    '"deny": ["Bash(rm \\"my dir\\")"]}}', encoding="utf-8")
    imported = read_source("claude-code", file)
    allow, deny = sorted(imported.rules, key=lambda r: r.effect)
    assert (allow.effect, allow.write) == ("allow", False)
    assert (deny.effect, deny.write, deny.patterns) == ("deny", True, ("rm my dir",))
    assert sorted(n.line or 0 for n in imported.notes) == [1, 2]


def test_default_mode_is_a_warning_and_bare_bash_is_every_command(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text('{"permissions": {"defaultMode": "bypassPermissions",\n'
                    ' "deny": ["Bash"]}}', encoding="utf-8")
    imported = read_source("claude-code", file)
    (rule,) = imported.rules
    assert (rule.patterns, rule.effect, rule.line) == (("*",), "deny", 2)
    (note,) = imported.notes
    assert "defaultMode 'bypassPermissions'" in note.message
