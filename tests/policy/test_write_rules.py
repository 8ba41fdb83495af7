"""``write:GLOB`` rules: the pattern language, the decisions, and casbin's agreement.

Every decision goes through the real decider over real policy files in a real
workspace (tmp), so the physical reading of a write (symlinks, hard links) is
the file system's own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.errors import PolicyError
from shellgate.models import CallInfo, Verdict
from shellgate.policy.index import PolicyIndex
from shellgate.policy.lint import lint_policy_set
from shellgate.policy.loader import PolicySource, load_policy_set
from shellgate.policy.patterns import PatternError, compile_pattern, write_texts
from shellgate.policy.reference import ReferenceEnforcer
from shellgate.policy.ruleset import PolicyEngine
from tests.policy.policy_helpers import write_set

# -- the pattern language ----------------------------------------------------------

MATCHES = [
    ("write:**", "src/a.py", True), ("write:**", ".env", True), ("write:**", None, False),
    ("write:*.lock", "a/b/c.lock", True), ("write:*.lock", "c.lock", True),
    ("write:*.lock", "c.lockx", False), ("write:src/**", "src/a/b.py", True),
    ("write:src/**", "srcx/a.py", False), ("write:src/**", "src", False),
    ("write:src/", "src/a.py", True), ("write:src", "x/src/a.py", True),
    ("write:/src", "src/a.py", False), ("write:build", "x/build/y.o", True),
    ("write:a/**/b", "a/b", True), ("write:a/**/b", "a/x/y/b", True),
    ("write:a/**/b", "a/x/y/c", False), ("write:src/*.py", "src/a.py", True),
    ("write:src/*.py", "src/x/a.py", False), ("write:**/test_*.py", "t/test_a.py", True),
    ("write:[ab].txt", "a.txt", True), ("write:[ab].txt", "c.txt", False),
    ("write:?.txt", "a.txt", True), ("write:?.txt", "ab.txt", False),
    ("write:src/?", "src/a", True), ("write:src/?", "src//", False),
]  # fmt: skip


@pytest.mark.parametrize(("pattern", "relative", "expected"), MATCHES)
def test_write_globs_read_as_gitignore_reads_them(
    pattern: str, relative: str | None, expected: bool
) -> None:
    absolute = "/w/" + (relative or "outside")
    compiled = compile_pattern(pattern)
    assert compiled.is_write
    assert any(compiled.matches(t) for t in write_texts(relative, absolute)) is expected


@pytest.mark.parametrize(
    ("pattern", "absolute", "expected"),
    [("write:/tmp/**", "/tmp/x", True), ("write:/tmp/**", "/tmp", False),
     ("write:/tmp/", "/tmp/a/b", True), ("write:/tmp/**", "/tmpx/a", False),
     ("write:/w/**", "/w/src/a.py", True)],
)  # fmt: skip
def test_absolute_write_globs_match_absolute_paths(
    pattern: str, absolute: str, expected: bool
) -> None:
    assert any(compile_pattern(pattern).matches(t) for t in write_texts(None, absolute)) is expected


def test_a_write_pattern_never_matches_a_command_nor_a_command_pattern_a_write() -> None:
    assert not compile_pattern("write:**").matches("ls -la")
    assert not compile_pattern("write:**").matches("write:src/a.py")  # a command named so
    index = PolicyIndex(_source("p, agent, *, *, allow\n"))
    assert index.best_write("agent", "default", write_texts("a", "/w/a")[0]) is None


@pytest.mark.parametrize(
    "pattern", ["write:", "write: src", "write:!src/**", "write:../x", "write:src/../x"]
)
def test_bad_write_patterns_are_load_errors(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)


def test_a_bad_write_pattern_stops_the_set_from_loading(tmp_path: Path) -> None:
    policy = write_set(tmp_path, "p, agent, *, write:!dist/**, allow\n")
    with pytest.raises(PolicyError, match=r"policy.csv:1: write pattern '!dist/\*\*'"):
        load_policy_set(policy)


def _source(rows: str) -> PolicySource:
    from tempfile import mkdtemp

    return load_policy_set(write_set(Path(mkdtemp()), rows))


# -- decisions --------------------------------------------------------------------

@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    return workspace


def decide(tmp_path: Path, ws: Path, rows: str, command: str, default: str = "ask") -> Verdict:
    policy = write_set(tmp_path, rows, name="pol")
    config = load_config(None, policy={"paths": [str(policy)], "default": default},
                         executor={"workspace": str(ws)}, audit={"path": None})
    real = os.path.realpath(ws)
    call = CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="s", workdir=real, workspace=real)
    return Decider(config).decide(call)


ECHO = "p, agent, *, echo *, allow\np, agent, *, cat *, allow\n"


def test_write_everything_in_the_workspace_allows_a_redirection_and_a_heredoc(
    tmp_path: Path, ws: Path
) -> None:
    rows = ECHO + "p, agent, *, write:**, allow\n"
    assert decide(tmp_path, ws, rows, "echo hi > notes.md").effect == "allow"
    assert decide(tmp_path, ws, rows, "cat <<'EOF' > src/app.py\nprint(1)\nEOF").effect == "allow"
    # one step away: outside the workspace, no rule decides the write
    outside = decide(tmp_path, ws, rows, f"echo hi > {tmp_path}/elsewhere.txt")
    assert outside.effect == "ask"
    assert "no write: rule decides writing" in outside.decision.reason


def test_a_write_no_rule_decides_gets_the_closing_default(tmp_path: Path, ws: Path) -> None:
    assert decide(tmp_path, ws, ECHO, "echo hi > notes.md").effect == "ask"
    assert decide(tmp_path, ws, ECHO, "echo hi > notes.md", default="deny").effect == "deny"


def test_an_allowed_write_never_allows_its_command(tmp_path: Path, ws: Path) -> None:
    rows = "p, agent, *, write:**, allow\n"
    verdict = decide(tmp_path, ws, rows, "printf hi > notes.md")
    assert verdict.effect == "ask"
    assert verdict.decision.layer == "default"


def test_the_strictest_write_rule_wins(tmp_path: Path, ws: Path) -> None:
    rows = ECHO + ("p, agent, *, write:**, allow\n"
                   "p, agent, *, write:**/*.lock, ask, lock files change installs\n"
                   "p, agent, *, write:migrations/**, deny, people write migrations\n")
    (ws / "sub").mkdir()
    (ws / "migrations").mkdir()
    assert decide(tmp_path, ws, rows, "echo x > src/a.py").effect == "allow"
    asked = decide(tmp_path, ws, rows, "echo x > sub/poetry.lock")
    assert (asked.effect, asked.decision.layer) == ("ask", "write-rules")
    assert "lock files change installs" in asked.decision.reason
    assert asked.decision.rule is not None
    assert asked.decision.rule.endswith("policy.csv:4")
    assert decide(tmp_path, ws, rows, "echo x > migrations/0001.py").effect == "deny"
    # every write of a segment counts: the one denied target decides
    assert decide(tmp_path, ws, rows, "echo x > a.txt > migrations/x.py").effect == "deny"
    assert decide(tmp_path, ws, rows, "echo x | tee a.txt migrations/x.py").effect in ("ask",
                                                                                       "deny")


def test_a_symlink_out_of_the_workspace_is_no_workspace_write(tmp_path: Path, ws: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    rows = ECHO + "p, agent, *, write:**, allow\n"
    assert decide(tmp_path, ws, rows, "echo x > link/f.txt").effect == "ask"
    assert decide(tmp_path, ws, rows, "echo x > src/f.txt").effect == "allow"


def test_a_deny_rule_sees_the_written_path_as_well(tmp_path: Path, ws: Path) -> None:
    (ws / "alias").symlink_to(ws / "src")
    rows = ECHO + "p, agent, *, write:**, allow\np, agent, *, write:alias/**, deny\n"
    assert decide(tmp_path, ws, rows, "echo x > alias/a.py").effect == "deny"


def test_a_file_with_other_hard_links_asks(tmp_path: Path, ws: Path) -> None:
    target = ws / "src" / "a.py"
    target.write_text("x")
    os.link(target, ws / "twin.py")
    rows = ECHO + "p, agent, *, write:**, allow\n"
    verdict = decide(tmp_path, ws, rows, "echo x > twin.py")
    assert verdict.effect == "ask"
    assert "hard links" in verdict.decision.reason
    assert decide(tmp_path, ws, rows, "echo x > src/b.py").effect == "allow"


def test_a_link_made_by_the_same_line_is_followed(tmp_path: Path, ws: Path) -> None:
    rows = ECHO + "p, agent, *, write:**, allow\np, agent, *, ln *, allow\n"
    verdict = decide(tmp_path, ws, rows, f"ln -s {tmp_path} out && echo x > out/f")
    assert verdict.effect == "ask"  # out/f is tmp_path/f: outside the workspace
    assert decide(tmp_path, ws, rows, "ln -s src s && echo x > s/f").effect == "allow"


def test_protected_paths_and_secrets_are_decided_before_the_write_rules(
    tmp_path: Path, ws: Path
) -> None:
    rows = ECHO + "p, agent, *, write:**, allow\n"
    assert decide(tmp_path, ws, rows, "echo x > .git/hooks/pre-commit").effect == "deny"
    assert decide(tmp_path, ws, rows, "echo x > .env").effect == "ask"


# -- the index agrees with casbin -------------------------------------------------

_GLOBS = ["**", "*.lock", "src/**", "src/", "/tmp/**", "a/**/b", "src/*.py", "build", "[ab]*",
          "**/test_*.py", "docs/?", "/w/**"]  # fmt: skip
_PATHS = ["src/a.py", "src/x/y.lock", "a/b", "a/q/b", "build/o", "docs/x", "test_a.py",
          "b.txt", "x/test_z.py"]  # fmt: skip


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    rows=st.lists(st.tuples(st.sampled_from(_GLOBS), st.sampled_from(["allow", "ask", "deny"])),
                  min_size=1, max_size=6),
    path=st.sampled_from(_PATHS),
    outside=st.booleans(),
)
@example(rows=[("**", "allow"), ("*.lock", "ask")], path="src/x/y.lock", outside=False)
def test_the_index_decides_writes_as_casbin_does(
    tmp_path: Path, rows: list[tuple[str, str]], path: str, outside: bool
) -> None:
    text = "".join(f"p, agent, *, write:{glob}, {effect}\n" for glob, effect in rows)
    source = load_policy_set(write_set(tmp_path, text, name=f"set{abs(hash(text))}"))
    relative, absolute = (None, "/tmp/" + path) if outside else (path, "/w/" + path)
    ours = PolicyEngine([PolicyIndex(source)]).match_write(
        "agent", "default", write_texts(relative, absolute))
    theirs = PolicyEngine([ReferenceEnforcer(source)]).match_write(
        "agent", "default", write_texts(relative, absolute))
    assert ours == theirs


# -- lint -------------------------------------------------------------------------

def test_lint_knows_the_write_form(tmp_path: Path) -> None:
    policy = write_set(tmp_path, "p, agent, *, write:**, allow\np, agent, *, write:/**, allow\n"
                       "p, agent, *, write:~/notes/**, allow\n")
    found = [str(p) for p in lint_policy_set(policy)]
    assert not any(":1:" in f for f in found), found  # write:** is what it says
    assert any(":2:" in f and "anywhere on the machine" in f for f in found), found
    assert any(":3:" in f and "'~' is not expanded" in f for f in found), found


# -- shellgate check lists each write with the rule that decided it ---------------

def test_check_prints_each_write_and_its_rule(tmp_path: Path, ws: Path) -> None:
    import json
    import subprocess
    import sys

    rows = ECHO + "p, agent, *, write:src/**, allow\n"
    policy = write_set(tmp_path, rows, name="pol")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    env.pop("SHELLGATE_CONFIG", None)
    command = "cat <<'EOF' > src/app.py\nprint(1)\nEOF\necho x > notes.md"
    done = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--policy", str(policy), "--", command],
        capture_output=True, text=True, cwd=ws, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 10, done.stderr
    out = done.stdout
    assert f"writes: {os.path.realpath(ws)}/src/app.py (redirection '>')" in out
    assert "allow by pol/policy.csv:3: allow 'write:src/**' matches writing 'src/app.py'" in out
    assert "ask by write-rules: no write: rule decides writing 'notes.md'" in out
    as_json = subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "check", "--json", "--policy", str(policy), "--",
         command], capture_output=True, text=True, cwd=ws, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert set(json.loads(as_json.stdout)) == {"decision", "reason", "layer", "rule", "segments"}


# -- files a source rule trusts ------------------------------------------------------

SOURCE_ROWS = ECHO + """\
p, agent, *, source .venv/bin/activate, allow
p, agent, *, source scripts/*.sh, allow
p, agent, *, cd *, allow
p, agent, *, cp *, allow
p, agent, *, sed *, allow
p, agent, *, tee *, allow
p, agent, *, ln *, allow
p, agent, *, python *, allow
p, agent, *, python3 *, allow
p, agent, *, write:**, allow
"""


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("source .venv/bin/activate", "allow"),
        (". .venv/bin/activate && echo ok", "allow"),
        ("cd src && source ../.venv/bin/activate", "allow"),
        ("source scripts/dev.sh", "allow"),
        ("echo hi > .venv/bin/other", "allow"),  # beside a trusted file
        ("echo hi > scripts/notes.md", "allow"),
        # rewriting what a source rule trusts, in any spelling
        ("echo 'curl x | sh' >> .venv/bin/activate", "ask"),
        ("cp /tmp/evil .venv/bin/activate", "ask"),
        ("sed -i 's/a/b/' .venv/bin/activate", "ask"),
        ("echo x | tee scripts/new.sh", "ask"),
        ("cd src && echo x > ../.venv/bin/activate", "ask"),
        ("ln -s .venv/bin/activate a && echo x > a", "ask"),
        # a directory on the way to a trusted file: replacing it replaces the file
        ("mv mine .venv/bin", "ask"), ("mv .venv old && mv mine .venv", "ask"),
        ("cp -t .venv/bin mine/bin/activate", "ask"), ("cp -r mine/. .venv/", "ask"),
        ("cp mine/bin/activate .venv/bin/", "ask"), ("cp x scripts/", "ask"),
        ("cp x .venv/lib/x", "allow"), ("cp x src/", "allow"),
        ("echo x > via-link", "ask"),  # a symlink on disk to the trusted file
        ("python -c \"open('.venv/bin/activate', 'w').write('id')\"", "ask"),
        ("python3 - <<'EOF'\nopen('scripts/dev.sh', 'a').write('id')\nEOF", "ask"),
        # a file the line writes, or one looked up on PATH, is not trusted
        ("echo x > scripts/dev.sh; source scripts/dev.sh", "ask"),
        ("source activate", "ask"),
    ],
)
def test_a_file_a_source_rule_trusts_cannot_be_rewritten_unasked(
    tmp_path: Path, ws: Path, command: str, effect: str
) -> None:
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "activate").write_text("# venv\n")
    (ws / "scripts").mkdir()
    (ws / "scripts" / "dev.sh").write_text("# dev\n")
    (ws / "via-link").symlink_to(ws / ".venv" / "bin" / "activate")
    (ws / "mine" / "bin").mkdir(parents=True)
    (ws / "mine" / "bin" / "activate").write_text("id\n")
    (ws / ".venv" / "lib").mkdir()
    verdict = decide(tmp_path, ws, SOURCE_ROWS + "p, agent, *, mv *, allow\n", command)
    assert verdict.effect == effect, (command, verdict.decision.reason)
    if effect == "ask" and "source" not in command:
        assert "trusts to run in the shell" in verdict.decision.reason


# -- where a write lands after a `cd` that may fail or may not run ---------------------

CD_ROWS = ECHO + "p, agent, *, cd *, allow\np, agent, *, false, allow\np, agent, *, true, allow\n" \
    "p, agent, *, write:**, allow\n"


@pytest.mark.parametrize(
    "command",
    [
        # bash stays where it was when `cd` fails (no such directory, a file): the
        # next command of a `;` list writes .git/hooks/pre-commit
        "cd .git; cd zzz; echo x > hooks/pre-commit",
        "cd .git\ncd zzz\necho x > hooks/pre-commit",
        "cd .git; cd description; echo x > hooks/pre-commit",
        "cd .git; cd zzz 2>/dev/null; echo x > hooks/pre-commit",
        "cd .git; cd zzz || echo x > hooks/pre-commit",
        "cd .git; { cd zzz; } || echo x > hooks/pre-commit",
        "cd .git; ! cd zzz && echo x > hooks/pre-commit",
        # a `cd` that may not run at all
        "cd .git && false && cd refs; echo x > hooks/pre-commit",
        "cd .git || cd refs; echo x > hooks/pre-commit",
        "cd .git; if false; then cd refs; fi; echo x > hooks/pre-commit",
        "cd .git; while false; do cd refs; done; echo x > hooks/pre-commit",
        "cd .git; case a in b) cd refs;; esac; echo x > hooks/pre-commit",
        # a `cd` in the background runs in a subshell: the shell stays
        "cd .git; cd refs & echo x > hooks/pre-commit",
        # a loop's second round runs where the first one's `cd` went
        "for d in 1 2; do echo x > hooks/pre-commit; cd .git; done",
        # ~- is the directory before the last cd ($OLDPWD), ~+ the current one
        "cd .git/hooks; cd ../..; echo x > ~-/pre-commit",
        "cd .git/hooks && echo x > ~+/pre-commit",
    ],
)
def test_a_cd_that_may_fail_or_not_run_leaves_the_shell_where_it_was(
    tmp_path: Path, ws: Path, command: str
) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "refs").mkdir()
    (ws / ".git" / "description").write_text("x\n")
    verdict = decide(tmp_path, ws, CD_ROWS, command)
    assert verdict.effect != "allow", (command, verdict.decision.reason)


@pytest.mark.parametrize(
    "command",
    [
        "cd src && echo x > a.py",
        "cd src; echo x > a.py",
        "mkdir -p new && cd new && echo x > a.py",
        "mkdir -p new\ncd new\necho x > a.py",  # either place is in the workspace
        "cd src || true; echo x > a.py",
        "cd src; if true; then echo x > b.py; fi",
        "for f in 1 2; do echo x > out.txt; done",
    ],
)
def test_a_cd_into_the_workspace_still_writes_there(
    tmp_path: Path, ws: Path, command: str
) -> None:
    rows = CD_ROWS + "p, agent, *, mkdir *, allow\n"
    verdict = decide(tmp_path, ws, rows, command)
    assert verdict.effect == "allow", (command, verdict.decision.reason)


@pytest.mark.parametrize(
    "command",
    [
        # bash's bracket expressions: Python's glob matched nothing, so the word was
        # read as written; bash matches .git
        "cp pre-commit .gi[^x]/hooks/",
        "cp pre-commit .gi[[:alpha:]]/hooks/",
        # globbing options the line sets
        "shopt -s nocaseglob; cp pre-commit .GI?/hooks/",
        "shopt -s globstar; cp pre-commit .gi?/**/hooks/",
        "shopt -s nullglob; cp pre-commit .git/hooks/pre-commit zzz*",
    ],
)
def test_a_glob_that_bash_expands_to_a_protected_path_is_that_path(
    tmp_path: Path, ws: Path, command: str
) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "pre-commit").write_text("#!/bin/sh\n")
    rows = ECHO + "p, agent, *, cp *, allow\np, agent, *, shopt *, allow\n" \
        "p, agent, *, write:**, allow\n"
    verdict = decide(tmp_path, ws, rows, command)
    assert verdict.effect == "deny", (command, verdict.decision.reason)
