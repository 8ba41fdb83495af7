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


def bash_argv(command: str, where: Path, options: str = "") -> tuple[str, ...]:
    assert BASH is not None
    script = f"{options}\nset -- {command}; for w; do printf '%s\\0' \"$w\"; done"
    done = subprocess.run([BASH, "--norc", "--noprofile", "-c", script],
                          cwd=where, capture_output=True, check=True, timeout=10)  # fmt: skip
    return tuple(done.stdout.decode().split("\0")[:-1])


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(
    "words",
    ["src/*.py", "*/", "src/?.py", "src/[ab].py", "*.txt", ".h*", "*.nomatch", "'*.py'",
     "src/\\*.py", "docs/*.md src/*.txt", "src/[!a].py",
     # bash's own bracket expressions, which Python's glob reads otherwise
     "src/[^a].py", "src/[[:alpha:]].py", "[[:lower:]]*/", ".[[:alpha:]]*", "src/[]a].py",
     "src/[a-]*", "src/[[=a=]].py", "src/[[:nope:]].py", "src/[a", "src/*[", "[.]*",
     "src/[\\]a].py", "src/['!'a].py"],
)  # fmt: skip
def test_a_glob_is_read_as_the_words_bash_makes_of_it(tree: Path, words: str) -> None:
    assert argv(f"ls {words}", tree)[1:] == bash_argv(words, tree)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(
    ("options", "words"),
    [("shopt -s nocaseglob", "SRC/*.PY"), ("shopt -s nocaseglob", "src/[AB].py"),
     ("shopt -s nocaseglob", "src/[[:upper:]]*"), ("shopt -s globstar", "**/*.py"),
     ("shopt -s globstar", "**/"), ("shopt -s nullglob", "x *.nomatch y"),
     ("shopt -s globstar; shopt -u globstar", "**/*.py"), ("set -f", "src/*.py"),
     ("set -o noglob; set +f", "src/*.py")],
)  # fmt: skip
def test_a_glob_is_read_with_the_options_the_line_set(
    tree: Path, options: str, words: str
) -> None:
    (tree / "src" / "deep").mkdir()
    (tree / "src" / "deep" / "d.py").write_text("x")
    segments = analyse(f"{options}; ls {words}", workdir=str(tree)).segments
    assert segments[-1].findings == ()
    assert segments[-1].argv[1:] == bash_argv(words, tree, options)


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


@pytest.mark.parametrize(
    "command",
    ["mkdir out && cp notes.txt out/ && ls out/*", "mkdir -p out; ls out/*",
     "cp notes.txt docs/ && ls docs/*", "ls docs/* | tee docs/list.txt"],
)  # fmt: skip
def test_a_glob_in_a_directory_the_line_makes_or_fills_is_a_finding(
    tree: Path, command: str
) -> None:
    """The directory itself written (made, copied into) counts, not only a file
    below; a pipeline's commands run at once. (A command's own redirection is
    opened after its words are expanded: ``ls docs/* > docs/list.txt`` is known.)"""
    segments = analyse(command, workdir=str(tree)).segments
    glob_segment = next(s for s in segments if s.argv[:1] == ("ls",))
    assert any("which this line writes" in f for f in glob_segment.findings), segments
    [own] = analyse("ls docs/* > docs/list.txt", workdir=str(tree)).segments
    assert own.argv == ("ls", "docs/x.md")
    assert own.findings == ()


@pytest.mark.parametrize(
    ("names", "command", "asks"),
    [
        # which match cp writes (the last) depends on the collation: C puts B first
        (("B", "a"), "cp *", True),
        (("cases.txt", "cases2.txt"), "cp cases*", True),  # punctuation: C and en_US differ
        (("a.txt", "b.txt"), "cp *.txt", False),  # every collation agrees
        # every match written, or none: the order changes nothing written
        (("B", "a"), "rm -f *", False),
        (("B", "a"), "touch *", False),
        (("B", "a", "d"), "mv *", False),  # each a source, the last its directory
        (("B", "a"), "cat * > out.txt", False),
        (("B", "a"), "ls *", False),
    ],
)
def test_a_write_that_depends_on_the_order_of_matches_is_a_finding(
    tmp_path: Path, names: tuple[str, ...], command: str, asks: bool
) -> None:
    for name in names:
        if name == "d":
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text("x")
    [segment] = analyse(command, workdir=str(tmp_path)).segments
    found = any("locale's collation" in f for f in segment.findings)
    assert found is asks, segment.findings


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


@pytest.mark.parametrize(
    ("command", "written"),
    [
        # a value that may not have been assigned: the write may go to either
        ("export CI=.git/hooks/pre-commit; false && export CI=x; echo x > $CI", None),
        ("export CI=.git/hooks/pre-commit; if false; then export CI=x; fi; echo x > $CI", None),
        ("export CI=.git/hooks/pre-commit; case a in b) export CI=x;; esac; echo x > $CI", None),
        # in the background: a subshell's assignment does not last
        ("export CI=.git/hooks/pre-commit; export CI=x & echo x > $CI", ".git/hooks/pre-commit"),
        # += appends
        ("export CI=.git/hooks/pre; export CI+=-commit; echo x > $CI", ".git/hooks/pre-commit"),
        # builtins that set the names they are given
        ("export CI=x; printf -v CI .git/hooks/pre-commit; echo x > $CI", None),
        ("export CI=x; read CI <<< .git/hooks/pre-commit; echo x > $CI", None),
        ("export CI=x; for CI in .git/hooks/pre-commit; do :; done; echo x > $CI", None),
        ("export CI=x; CI=.git/hooks/pre-commit export CI; echo x > $CI", None),
        ('export CI=x; export "CI=.git/hooks/pre-commit"; echo x > $CI', None),
        # an attribute that changes what is stored (-l lowercases)
        ("declare -l CI=.GIT/HOOKS/PRE-COMMIT; echo x > $CI", None),
    ],
)
def test_a_variable_is_known_only_as_every_way_through_the_line_leaves_it(
    tree: Path, command: str, written: str | None
) -> None:
    """``None``: the target is not known (a finding)."""
    echo = analyse(command, workdir=str(tree)).segments[-1]
    if written is None:
        assert any("expansion" in f for f in echo.findings), (echo.write_paths, echo.findings)
    else:
        assert echo.write_paths == (f"{tree}/{written}",)


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


def test_the_environment_read_is_the_one_the_command_gets(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Gate(env=…)`` entries and ``[executor] scrub_env`` change what the command's
    ``$HOME`` is; the decider reads the variables as the executor will set them."""
    from shellgate import load_config
    from shellgate.command_env import build_env, seen
    from shellgate.decider import Decider
    from shellgate.models import CallInfo
    from shellgate.shell.analyse import FIXED_VARIABLES

    monkeypatch.setenv("TMPDIR", "/var/tmp")
    caller = {"HOME": str(tree / "home")}
    for scrub in ((), ("TMP*",)):
        expected = build_env(os.environ, caller, {}, extra_scrub=scrub)
        assert seen(FIXED_VARIABLES, caller, extra_scrub=scrub) == {
            name: expected[name] for name in FIXED_VARIABLES if name in expected
        }
    config = load_config(None, policy={"paths": []}, audit={"path": None},
                         executor={"workspace": str(tree), "scrub_env": ["TMPDIR"]})  # fmt: skip
    decider = Decider(config, env=caller)
    call = CallInfo(tool="bash", command="echo x > ~/notes; cat $TMPDIR/x", subject="a",
                    tenant="t", session="s", workdir=str(tree), workspace=str(tree))  # fmt: skip
    echo, cat = decider.analyse(call).segments
    assert f"{tree}/home/notes" in echo.write_paths
    assert not any(p.startswith("/root/") for p in echo.write_paths)
    assert cat.findings  # TMPDIR is scrubbed: the command's $TMPDIR is empty, not /var/tmp


def test_tilde_without_home_is_the_password_database_home(tree: Path) -> None:
    """bash expands ``~`` with the passwd entry when ``HOME`` is unset (``scrub_env``
    may remove it); an empty ``HOME`` leaves it unknown."""
    import pwd

    home = pwd.getpwuid(os.getuid()).pw_dir
    [unset] = analyse("echo x > ~/.bashrc", workdir=str(tree), env={}).segments
    assert f"{home}/.bashrc" in unset.write_paths
    [empty] = analyse("echo x > ~/notes", workdir=str(tree), env={"HOME": ""}).segments
    assert any("HOME is not known" in f for f in empty.findings)
    done = subprocess.run(["env", "-u", "HOME", "bash", "--norc", "-c", "echo ~"],
                          capture_output=True, text=True, check=True, timeout=10)  # fmt: skip
    assert done.stdout.strip() == home
