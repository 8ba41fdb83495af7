"""`shellgate policy import` end to end: the real CLI in a subprocess on the sample files,
then `shellgate policy test` (and `lint`) on what it wrote.

The samples are written from each format's documentation (cited in the files;
settings.json cannot hold a comment: it follows
https://code.claude.com/docs/en/permissions and https://code.claude.com/docs/en/settings).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.importers.helpers import SAMPLES, rows, shellgate, warnings


@pytest.mark.parametrize(
    ("source", "sample"),
    [
        pytest.param("claude-code", "settings.json", id="claude-code"),
        pytest.param("codex", "default.rules", id="codex"),
        pytest.param("gemini", "policy.toml", id="gemini"),
    ],
)
def test_import_writes_a_set_that_policy_test_passes(tmp_path: Path, source: str,
                                                     sample: str) -> None:
    out = tmp_path / "imported"
    done = shellgate("policy", "import", "--from", source, str(SAMPLES / sample), str(out),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["model.conf", "policy.csv", "tests.csv"]
    assert rows(out / "tests.csv"), "every sample yields test rows"
    tested = shellgate("policy", "test", str(out), cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert f"{len(rows(out / 'tests.csv'))} tests passed" in tested.stdout
    for line in warnings(done.stderr):  # warning: FILE:LINE: … or warning: FILE: …
        assert line.startswith(f"warning: {SAMPLES / sample}")


def test_claude_code_rules_map_one_to_one(tmp_path: Path) -> None:
    out = tmp_path / "set"
    done = shellgate("policy", "import", "--from", "claude-code",
                     str(SAMPLES / "settings.json"), str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    policy = rows(out / "policy.csv")
    assert "p, agent, *, git diff *, allow" in policy      # Bash(git diff:*)
    assert "p, agent, *, npm run lint, allow" in policy    # Bash(npm run lint): exact
    assert "p, agent, *, git push *, ask" in policy        # ask: Bash(git push:*)
    assert "p, agent, *, rm -rf *, deny" in policy         # deny: Bash(rm -rf:*)
    text = (out / "policy.csv").read_text(encoding="utf-8")
    assert "# not imported: settings.json:18: deny Read(./.env)" in text
    found = warnings(done.stderr)
    assert any(":18: 'Read(./.env)'" in w and "secret_paths" in w for w in found)
    assert any(":20: 'WebFetch'" in w for w in found)
    assert len(found) == 4  # one per rule that is not a shell rule, nothing else
    check = shellgate("check", "--policy", str(out), "--", "git diff --stat", cwd=tmp_path)
    assert check.returncode == 0, check.stdout


def test_codex_examples_become_rows_with_honest_expectations(tmp_path: Path) -> None:
    out = tmp_path / "set"
    done = shellgate("policy", "import", "--from", "codex", str(SAMPLES / "default.rules"),
                     str(out), "--default", "ask", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    tests = rows(out / "tests.csv")
    assert "agent, default, deny, git reset --hard" in tests          # match → the decision
    assert "agent, default, ask, git push origin main" in tests       # alternative 1
    assert "agent, default, ask, git fetch" in tests                  # alternative 2
    # not_match: not that rule's decision; no rule decides it, so the closing default.
    assert "agent, default, ask, git reset --keep" in tests
    assert "agent, default, ask, hea -n 1,5p CHANGELOG.md" in tests
    assert "p, agent, *, git push *, ask, reaches a remote" in rows(out / "policy.csv")
    (line,) = warnings(done.stderr)
    assert line.startswith(f"warning: {SAMPLES / 'default.rules'}:66: host_executable")
    strict = shellgate("policy", "test", str(out), "--default", "deny", cwd=tmp_path)
    assert strict.returncode == 1  # the not_match rows expect the default they were written for
    asked = shellgate("policy", "test", str(out), "--default", "ask", cwd=tmp_path)
    assert asked.returncode == 0, asked.stdout


def test_gemini_priority_over_a_deny_is_a_warning_and_a_commented_row(tmp_path: Path) -> None:
    out = tmp_path / "set"
    sample = SAMPLES / "policy.toml"
    done = shellgate("policy", "import", "--from", "gemini", str(sample), str(out),
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = warnings(done.stderr)
    (over,) = [w for w in found
               if w.startswith(f"warning: {sample}:24:") and "precedence" in w]
    assert "takes precedence over the deny at line 17 (priority 100)" in over
    assert "strictest-wins" in over
    assert any(w.startswith(f"warning: {sample}:47:") and "modes" in w for w in found)
    assert any(w.startswith(f"warning: {sample}:42:") and "not the shell" in w for w in found)
    tests = (out / "tests.csv").read_text(encoding="utf-8")
    assert "# agent, default, allow, rm -rf build" in tests  # the source allows; we deny
    assert "agent, default, deny, rm -rf\n" in tests
    policy = (out / "policy.csv").read_text(encoding="utf-8")
    assert "p, agent, *, rm -rf *, deny, Deletion is permanent" in policy
    assert "# not imported: policy.toml:47:" in policy  # the mode-bound allow


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(("--from", "cursor"), "unknown source", id="unknown-from"),
        pytest.param(("--from", "codex", "missing.rules"), "cannot read", id="unreadable"),
    ],
)
def test_bad_source_exits_2(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    argv = [*args] if len(args) == 3 else [*args, str(SAMPLES / "default.rules")]
    done = shellgate("policy", "import", *argv, str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert needle in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("source", "text", "where"),
    [
        pytest.param("claude-code", '{"permissions": {\n  "allow": [1]}}', "", id="claude-type"),
        pytest.param("claude-code", '{"permissions": \n  {"allow": [}', ":2:", id="claude-json"),
        pytest.param("codex", 'prefix_rule(\n  pattern=["git"],\n  decision="never")\n', ":1:",
                     id="codex-decision"),
        pytest.param("codex", "prefix_rule(pattern=[\n", ":1:", id="codex-syntax"),
        pytest.param("codex", 'prefix_rule(pattern=["ls"], match=["cat x"])\n', ":1:",
                     id="codex-failing-example"),
        pytest.param("gemini", '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\n',
                     ":1:", id="gemini-no-priority"),
        pytest.param("gemini", "[[rule]\n", "", id="gemini-toml"),
    ],
)
def test_invalid_source_exits_2_naming_the_line(tmp_path: Path, source: str, text: str,
                                                where: str) -> None:
    file = tmp_path / "source.txt"
    file.write_text(text, encoding="utf-8")
    done = shellgate("policy", "import", "--from", source, str(file), str(tmp_path / "out"),
                     cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith(f"error: {file}{where}")
    assert not (tmp_path / "out").exists()


def test_refuses_a_non_empty_dir_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "set"
    out.mkdir()
    (out / "policy.csv").write_text("p, agent, *, ls, allow\n", encoding="utf-8")
    args = ("policy", "import", "--from", "codex", str(SAMPLES / "default.rules"), str(out))
    refused = shellgate(*args, cwd=tmp_path)
    assert refused.returncode == 2
    assert "not empty" in refused.stderr
    assert "--force" in refused.stderr
    assert (out / "policy.csv").read_text(encoding="utf-8") == "p, agent, *, ls, allow\n"
    forced = shellgate(*args, "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "git reset --hard *" in (out / "policy.csv").read_text(encoding="utf-8")
