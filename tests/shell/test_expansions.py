"""Globs, variables, known outputs and ``source``: read as bash reads them, where the
analysis can know them; each loosening next to the neighbour that still asks.

Globs are read in a real directory (tmp) and compared with what the real bash
expands there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from shellgate.shell import analyse

BASH = shutil.which("bash")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("src/a.py", "src/b.py", "src/c.txt", "docs/x.md", ".hidden", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    return tmp_path


def argv(command: str, where: Path) -> tuple[str, ...]:
    [segment] = analyse(command, workdir=str(where)).segments
    assert segment.findings == (), segment.findings
    return segment.argv


def bash_argv(command: str, where: Path) -> tuple[str, ...]:
    assert BASH is not None
    done = subprocess.run([BASH, "--norc", "--noprofile", "-c", f"printf '%s\\0' {command}"],
                          cwd=where, capture_output=True, check=True, timeout=10)  # fmt: skip
    return tuple(done.stdout.decode().split("\0")[:-1])


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(
    "words",
    ["src/*.py", "*/", "src/?.py", "src/[ab].py", "*.txt", ".h*", "*.nomatch", "'*.py'",
     "src/\\*.py", "docs/*.md src/*.txt", "src/[!a].py"],
)  # fmt: skip
def test_a_glob_is_read_as_the_words_bash_makes_of_it(tree: Path, words: str) -> None:
    assert argv(f"ls {words}", tree)[1:] == bash_argv(words, tree)


def test_a_glob_in_a_cd_directory_is_read_there(tree: Path) -> None:
    segments = analyse("cd src && ls *.py", workdir=str(tree)).segments
    assert segments[1].argv == ("ls", "a.py", "b.py")


def test_a_match_that_would_be_an_option_is_a_finding(tree: Path) -> None:
    (tree / "-rf").write_text("x")
    [segment] = analyse("rm *", workdir=str(tree)).segments
    assert any("would read as an option" in f for f in segment.findings)
    assert segment.argv == ("rm", "-rf", "docs", "notes.txt", "src")  # what bash runs


def test_a_glob_in_a_directory_the_line_writes_is_a_finding(tree: Path) -> None:
    segments = analyse("touch src/d.py && ls src/*.py", workdir=str(tree)).segments
    assert any("which this line writes" in f for f in segments[1].findings)
    assert segments[0].findings == ()


def test_a_glob_in_command_position_or_an_unknown_directory_stays_a_finding(tree: Path) -> None:
    assert analyse("./src/*.py", workdir=str(tree)).segments[0].findings
    assert analyse("cd $NOPE && ls *.py", workdir=str(tree)).segments[1].findings


def test_the_glob_as_written_stays_a_deny_side_reading(tree: Path) -> None:
    segment = analyse("rm -rf src/*", workdir=str(tree)).segments[0]
    assert segment.argv == ("rm", "-rf", "src/a.py", "src/b.py", "src/c.txt")
    assert ("rm", "-rf", "src/*") in segment.all_forms()


def test_a_glob_reads_the_file_system_so_its_analysis_is_not_cached(tree: Path) -> None:
    first = argv("ls src/*.py", tree)
    (tree / "src" / "z.py").write_text("x")
    assert argv("ls src/*.py", tree) == (*first, "src/z.py")


# -- variables and known outputs ---------------------------------------------------

def test_variables_the_environment_fixes_are_expanded(tree: Path) -> None:
    home = os.environ.get("HOME", "")
    assert argv('echo "$HOME" "$PWD" ${PWD}', tree) == ("echo", home, str(tree), str(tree))
    pwd, echo = analyse("echo $(pwd)", workdir=str(tree)).segments
    assert (pwd.argv, echo.argv, echo.findings) == (("pwd",), ("echo", str(tree)), ())


@pytest.mark.parametrize(
    "command",
    ["echo $SOME_UNSET_NAME", "echo ${HOME:-x}", "echo $(date)", "IFS=/; echo $HOME",
     "HOME=$(mktemp -d); echo $HOME"],
)
def test_variables_not_known_stay_findings(tree: Path, command: str) -> None:
    assert any("expansion" in f or "substitution" in f or "IFS" in f
               for s in analyse(command, workdir=str(tree)).segments for f in s.findings)


def test_a_literal_assignment_earlier_in_the_line_is_followed(tree: Path) -> None:
    segments = analyse("D=build; mkdir -p $D && ls $D", workdir=str(tree)).segments
    assert [s.argv for s in segments[1:]] == [("mkdir", "-p", "build"), ("ls", "build")]
    # a subshell's assignment does not last; a prefix assignment holds for its command only
    later = analyse("(D=x); echo $D; E=y true; echo $E", workdir=str(tree)).segments
    assert all(s.findings for s in later if s.argv[:1] == ("echo",))


def test_home_changed_by_the_line_moves_tilde(tree: Path) -> None:
    [_, echo] = analyse(f"HOME={tree}; echo x > ~/.bashrc", workdir=str(tree)).segments
    assert f"{tree}/.bashrc" in echo.write_paths


def test_a_commit_message_from_a_quoted_heredoc_is_known(tree: Path) -> None:
    command = "git commit -m \"$(cat <<'EOF'\nFix it\n\nWhy\nEOF\n)\""
    segments = analyse(command, workdir=str(tree)).segments
    git = next(s for s in segments if s.argv[:1] == ("git",))
    assert git.argv == ("git", "commit", "-m", "Fix it\n\nWhy")
    assert git.findings == ()
    # one step away: an unquoted heredoc expands, so its output is not known
    unquoted = analyse(command.replace("<<'EOF'", "<<EOF"), workdir=str(tree)).segments
    assert any(s.findings for s in unquoted if s.argv[:1] == ("git",))


def test_variables_in_another_processes_payload_are_not_known(tree: Path) -> None:
    segments = analyse("sudo -s rm -rf '$HOME'", workdir=str(tree)).segments
    assert any("parameter expansion" in f for s in segments for f in s.findings)


# -- source ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("command", "expected"),
    [("source .venv/bin/activate", ("source", ".venv/bin/activate")),
     (". .venv/bin/activate", ("source", ".venv/bin/activate")),
     ("cd src && source ../.venv/bin/activate", ("source", ".venv/bin/activate")),
     ("source ./env.sh a b", ("source", "env.sh", "a", "b"))],
)  # fmt: skip
def test_source_is_one_segment_named_by_its_file_in_the_workspace(
    tree: Path, command: str, expected: tuple[str, ...]
) -> None:
    segments = analyse(command, workdir=str(tree), workspace=str(tree)).segments
    assert segments[-1].argv == expected
    assert segments[-1].findings == ()


@pytest.mark.parametrize(
    "command",
    ["source env.sh", "source $X/activate", "echo x > e.sh; source ./e.sh",
     "cd $NOPE && source ./e.sh"],
)
def test_a_source_the_analysis_cannot_trust_is_a_finding(tree: Path, command: str) -> None:
    assert analyse(command, workdir=str(tree)).segments[-1].findings
