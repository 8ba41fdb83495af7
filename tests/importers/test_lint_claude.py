"""`policy lint` on a Claude Code rule pasted into policy.csv: it names the shellgate
pattern (`git diff *`), not the glued-star fix (`diff: *)`) it suggested before."""

from __future__ import annotations

from pathlib import Path

from shellgate.policy.lint import lint_policy_set
from tests.importers.helpers import shellgate
from tests.policy.policy_helpers import write_set


def test_lint_suggests_the_shellgate_pattern_for_bash_prefix_rules(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, Bash(git diff:*), allow\n"
                                    "p, agent, *, git log:*, allow\n")
    done = shellgate("policy", "lint", str(directory), cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == (f"{directory / 'policy.csv'}:1: pattern 'Bash(git diff:*)' is Claude "
                        "Code's permission syntax, not a shellgate pattern: write 'git diff *'")
    assert lines[1].endswith(": pattern 'git log:*' matches 'git log:' followed by anything; if "
                             "it is Claude Code's legacy ':*' prefix form, the shellgate pattern "
                             "is 'git log *'")
    assert lines[2] == "2 findings"
    assert "diff: *)" not in done.stdout


def test_lint_compound_claude_rule_has_no_single_pattern(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, Bash(curl * | sh), deny\n")
    (finding,) = lint_policy_set(directory)
    assert "one rule per simple command" in finding.message


def test_an_ordinary_glued_star_keeps_its_finding(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, git*, allow\n")
    (finding,) = lint_policy_set(directory)
    assert "glues '*'" in finding.message


def test_the_commands_that_load_a_set_warn_about_a_claude_rule_too(tmp_path: Path) -> None:
    """check, policy test and policy push load it without a word before: each now prints
    the lint's finding as a warning on stderr, and still does its job (stdout unchanged)."""
    directory = write_set(tmp_path, "p, agent, *, Bash(git diff:*), allow\n"
                                    "p, agent, *, git log:*, allow\n"
                                    "p, agent, *, echo *, allow\n")
    (directory / "tests.csv").write_text("agent, default, allow, echo hi\n")
    warning = (f"warning: {directory / 'policy.csv'}:1: pattern 'Bash(git diff:*)' is Claude "
               "Code's permission syntax, not a shellgate pattern: write 'git diff *'")
    config = tmp_path / "ask.toml"  # the closing default the rows are written for
    config.write_text('[policy]\ndefault = "ask"\n')
    check = shellgate("check", "--config", str(config), "--policy", str(directory), "--json",
                      "--", "git diff", cwd=tmp_path)
    tested = shellgate("policy", "test", str(directory), "--config", str(config), cwd=tmp_path)
    pushed = shellgate("policy", "push", str(directory), "--reason", "r", "--store",
                       f"sqlite://{tmp_path / 'p.db'}", "--config", str(config), cwd=tmp_path)
    assert (check.returncode, tested.returncode, pushed.returncode) == (10, 0, 0)
    assert check.stdout.startswith('{"decision": "ask"')
    assert tested.stdout == "1 tests passed\n"
    for done in (check, tested, pushed):
        warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
        # only the unambiguous form: 'git log:*' is a valid glob too (lint says both)
        assert warnings == [warning], done.stderr


def test_a_set_without_claude_rules_loads_quietly(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, git diff *, allow\n")
    done = shellgate("check", "--policy", str(directory), "--", "git diff", cwd=tmp_path)
    assert done.returncode == 0
    assert "warning" not in done.stderr
