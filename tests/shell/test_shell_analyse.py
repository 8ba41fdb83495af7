"""Unit tests of analyse(): the Segment fields, bounds and fail-closed rules."""

from __future__ import annotations

import time

import pytest

from shellgate.models import Analysis, Redirect, Segment
from shellgate.shell import analyse


def only(command: str, **kwargs: object) -> Segment:
    segments = analyse(command, **kwargs).segments  # type: ignore[arg-type]
    assert len(segments) == 1, segments
    return segments[0]


def test_result_is_a_frozen_analysis_of_the_command() -> None:
    analysis = analyse("ls -la")
    assert isinstance(analysis, Analysis)
    assert analysis.command == "ls -la"
    assert analysis.findings == ()
    segment = analysis.segments[0]
    assert segment.text == "ls -la"
    assert segment.forms[0] == segment.argv == ("ls", "-la")
    with pytest.raises(ValueError, match="frozen"):
        segment.argv = ("rm",)  # type: ignore[misc]


def test_assignments_are_kept_out_of_argv() -> None:
    segment = only("LANG=C FOO='a b' ls")
    assert segment.argv == ("ls",)
    assert segment.assignments == (("LANG", "C"), ("FOO", "a b"))
    assert any("FOO" in f for f in segment.findings)
    assert not any("LANG" in f for f in segment.findings)


@pytest.mark.parametrize(
    ("command", "redirect"),
    [
        pytest.param("ls 2>/dev/null", Redirect(op=">", fd=2, target="/dev/null"), id="devnull"),
        pytest.param("ls 2>&1", Redirect(op=">&", fd=2, target="1"), id="dup"),
        pytest.param("ls > out", Redirect(op=">", target="out", is_write=True), id="write"),
        pytest.param("ls >> 'a b'", Redirect(op=">>", target="a b", is_write=True), id="append"),
        pytest.param("ls &> o", Redirect(op="&>", target="o", is_write=True), id="both"),
        pytest.param("ls < in", Redirect(op="<", target="in"), id="input"),
        pytest.param("cat <<< hi", Redirect(op="<<<", target="hi"), id="herestring"),
        pytest.param("cat <<'E'\nx\nE", Redirect(op="<<", target="E"), id="heredoc"),
        pytest.param("ls >&-", Redirect(op=">&-", target=""), id="close"),
    ],
)
def test_redirects(command: str, redirect: Redirect) -> None:
    assert only(command).redirects == (redirect,)


def test_write_redirect_resolves_against_workdir_and_is_a_write_not_a_finding() -> None:
    segment = only("echo x > sub/../out.txt", workdir="/w")
    assert segment.write_paths == ("/w/out.txt",)
    assert segment.writes[0].how == "redirection '>'"
    assert segment.findings == ()


def test_cd_in_a_list_moves_later_writes() -> None:
    analysis = analyse("cd .git && echo x > hooks/pre-commit; cd /; touch y", workdir="/repo")
    writes = [w for s in analysis.segments for w in s.write_paths]
    assert writes == ["/repo/.git/hooks/pre-commit", "/y"]


def test_cd_in_a_pipeline_or_subshell_does_not_last() -> None:
    analysis = analyse("(cd /etc); cd /tmp | true; touch z", workdir="/w")
    assert analysis.segments[-1].write_paths == ("/w/z",)


def test_parse_error_is_copied_onto_every_segment() -> None:
    analysis = analyse("ls; echo )(; pwd")
    assert analysis.findings
    assert all(set(analysis.findings) <= set(s.findings) for s in analysis.segments)


def test_parse_error_without_segments_keeps_the_raw_text() -> None:
    analysis = analyse(")))")
    assert len(analysis.segments) == 1
    segment = analysis.segments[0]
    assert segment.text == ")))"
    assert segment.findings == analysis.findings != ()


def test_empty_and_comment_only_commands_have_no_segments() -> None:
    assert analyse("").segments == ()
    assert analyse("# just a comment").segments == ()


def test_segments_past_the_limit_are_all_listed_and_flagged() -> None:
    command = "; ".join(["ls"] * 9 + ["rm -rf /"])
    analysis = analyse(command, max_segments=5)
    assert len(analysis.segments) == 10
    assert analysis.segments[-1].argv == ("rm", "-rf", "/")
    assert all(any("over the limit of 5" in f for f in s.findings) for s in analysis.segments)
    assert not analyse(command, max_segments=10).findings


def test_nesting_past_max_depth_stops_with_a_finding() -> None:
    command = "echo " + "$(" * 6 + "rm x" + ")" * 6
    shallow = analyse(command, max_depth=3)
    assert any("nesting deeper than 3" in f for f in shallow.findings)
    assert all(s.argv != ("rm", "x") for s in shallow.segments)
    deep = analyse(command, max_depth=16)
    assert any(s.argv == ("rm", "x") for s in deep.segments)
    assert not deep.findings


def test_extreme_nesting_does_not_crash() -> None:
    command = "( " * 5000 + "ls" + " )" * 5000
    assert analyse(command).refused is not None  # over the default node budget
    analysis = analyse(command, max_nodes=10**6)
    assert any("nesting deeper than 16" in f for f in analysis.findings)
    assert all(analysis.findings[0] in s.findings for s in analysis.segments)


def test_contexts_name_where_a_segment_sits() -> None:
    contexts = {s.argv: s.context for s in analyse(
        "ls | wc; (pwd); echo $(id); bash -c 'date'; f() { who; }; if true; then :; fi"
    ).segments}  # fmt: skip
    assert contexts[("ls",)] == ("pipeline",)
    assert contexts[("pwd",)] == ("subshell",)
    assert contexts[("id",)] == ("command substitution",)
    assert contexts[("date",)] == ("-c payload",)
    assert contexts[("who",)] == ("function body", "group")
    assert contexts[("true",)] == ("if condition",)


def test_forms_peel_every_wrapper_layer() -> None:
    segments = analyse("sudo -u root env -i FOO=1 timeout -s KILL 5 nice -n 3 /bin/rm -rf /").segments
    # Each wrapper's command is a segment of its own, one level deeper each time.
    assert [s.context for s in segments] == [
        (), ("sudo payload",), ("sudo payload", "env payload"),
        ("sudo payload", "env payload", "timeout payload"),
        ("sudo payload", "env payload", "timeout payload", "nice payload"),
    ]  # fmt: skip
    assert segments[-1].argv == ("/bin/rm", "-rf", "/")
    assert segments[2].assignments == (("FOO", "1"),)
    segment = segments[0]
    forms = segment.all_forms()
    assert forms[0] == segment.argv
    assert ("rm", "-rf", "/") in forms
    assert ("/bin/rm", "-rf", "/") in forms
    assert ("timeout", "-s", "KILL", "5", "nice", "-n", "3", "/bin/rm", "-rf", "/") in forms


def test_interpreter_findings_survive_wrappers() -> None:
    segments = analyse("sudo -u x python3 -c 'import os; os.system(\"id\")'").segments
    assert [s.argv[0] for s in segments] == ["sudo", "python3"]  # the payload is a segment
    for segment in segments:
        assert any("code starts other programs" in f for f in segment.findings)


def test_hash_in_mid_word_is_not_a_comment() -> None:
    assert only("echo a#b #c").argv == ("echo", "a#b")


# A `#` bash reads inside a word, where tree-sitter read a comment running over
# the newline (or the `;`) that ends the command in bash. The CR, VT and FF ones
# never reach analysis through the gate (its input guard denies them).
@pytest.mark.parametrize(
    "command",
    [
        "'q r'#\\\t\nrm -rf /",  # an escaped tab after a `#` glued to a quoted word
        "'q r'#\\ \\\t\nrm -rf /",
        "'q r'#a\\\t\nrm -rf /",
        '"d e"##\\\t\\\t\nrm -rf /',
        "$x#\\\t\nrm -rf /",
        "${x}#\\\t#\nrm -rf /",
        "`x`#\\\t\nrm -rf /",
        "echo $(x)#\\\t\n\nrm -rf /",
        "echo ]#\\\t\nrm -rf /",
        "'q r'#\\\r\nrm -rf /",  # CR, VT, FF escaped after the `#`
        "'q r'#\\\x0b\nrm -rf /",
        "'q r'#\\\x0c\nrm -rf /",
        "'q r'#$x\\\r\nrm -rf /",  # the variable name ran on over the newline
        "echo a\r#;rm -rf /",  # CR, VT, FF: word characters to bash
        "echo a \x0b#;rm -rf /",
        "\x0c#;rm -rf /",
        "x=a\x0bz rm -rf /",
        "ls; {}#;rm -rf /",  # the parser read an empty group, then a comment
        "[]#;rm -rf /",
        "ls#x;rm -rf /",  # the parser read `ls` as an error, then a comment
        "bb###\\\t#\\\t=|rm -rf /",
        "\\\r\\||rm -rf /",  # an escaped CR ran the word on over the pipe
    ],
)
def test_a_hash_bash_reads_inside_a_word_hides_no_command(command: str) -> None:
    segments = analyse(command).segments
    seen = [s for s in segments if ("rm", "-rf", "/") in (s.argv, *s.forms)]
    assert seen, [s.argv for s in segments]
    assert all(s.findings for s in seen)


def test_a_continuation_after_a_glued_hash_joins_the_next_line() -> None:
    # bash runs `q r#rm -rf /`: the continuation glues the lines into one word
    # (the re-read spells the word's `#` as `_`).
    segments = analyse("'q r'#\\\nrm -rf /").segments
    assert {s.argv for s in segments if "re-read" in s.context} == {("q r_rm", "-rf", "/")}


@pytest.mark.parametrize(
    "command", ["echo a #\\\t;rm -rf /", "(echo a)#\\\t;rm -rf /", "echo a\t#\\ ;rm -rf /"]
)
def test_a_comment_where_a_word_starts_is_a_comment(command: str) -> None:
    assert only(command).argv == ("echo", "a")


def test_control_characters_are_findings() -> None:
    assert any("U+0007" in f for f in only("ls\x07").findings)


def test_100kb_padding_is_analysed_quickly_and_completely() -> None:
    command = "; ".join(["echo ok"] * 11_000) + "; rm -rf /"
    assert 95_000 < len(command) < 100_000
    refused = analyse(command)  # default budget: refused outright, so the input guard denies
    assert refused.refused is not None
    assert "analysis limit" in refused.refused
    start = time.perf_counter()
    analysis = analyse(command, max_nodes=10**6)  # with the budget lifted: read to the end
    elapsed = time.perf_counter() - start
    assert analysis.segments[-1].argv[0] == "rm"
    assert elapsed < 1.0  # the benchmark reports the real figure; this guards regressions


def test_parse_error_excerpt_cut_inside_a_character() -> None:
    # Found by hypothesis: the 40-byte excerpt of an ERROR node ended mid-UTF-8.
    words = [
        "0$'aaa\\\\'0",
        "-@/=#0Y",
        "0''--::#1a_bb",
        '0"£\U000cf5beÜĭ£\U000cf5beÜĭzĐ\U0007f9b7Ī"\\\n',
    ]
    analysis = analyse("printf '%s\\n' " + " ".join(words))
    assert analysis.findings  # a finding, not a crash


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("ls -la | ls -la | ls -la\nrm -rf / && ls -la", id="three-stage-pipeline"),
        pytest.param("a | b | c\nrm -rf / && d", id="short-names"),
        pytest.param("ls | ls | ls | ls\nrm -rf / || true", id="four-stages"),
    ],
)
def test_words_never_run_across_a_newline(command: str) -> None:
    # Found by hypothesis: tree-sitter-bash 0.25 parses the last pipeline stage and
    # the next line as one command (`ls -la rm -rf /`), which an allow rule on
    # `ls *` would have matched. bash ends the command at the newline.
    argvs = [s.argv for s in analyse(command).segments]
    assert ("rm", "-rf", "/") in argvs
    assert not any("rm" in argv and argv[0] != "rm" for argv in argvs)


def test_line_continuation_still_joins_words() -> None:
    assert [s.argv for s in analyse("echo a \\\nb").segments] == [("echo", "a", "b")]


def test_the_analysis_cache_keys_on_home_and_workdir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short commands are cached; ``~`` and ``cd`` are read with HOME, and relative
    writes with the workdir, so a change of either is a different answer. (A line
    with a ``cd`` asks the file system whether it can succeed: not cached.)"""
    command = "cd; rm -rf ."
    monkeypatch.setenv("HOME", "/home/ann")
    ann = analyse(command)
    monkeypatch.setenv("HOME", "/home/bob")
    bob = analyse(command)
    assert ("rm", "-rf", "/home/ann") in ann.segments[-1].forms
    assert ("rm", "-rf", "/home/bob") in bob.segments[-1].forms
    assert ("rm", "-rf", ".") in bob.segments[-1].forms  # the cd may fail: the workdir
    assert analyse("touch x", workdir="/a").segments[0].write_paths == ("/a/x",)
    assert analyse("touch x", workdir="/b").segments[0].write_paths == ("/b/x",)
    # A `cd` reads the file system (does the directory exist, so that it cannot
    # fail?): such a line is not cached; one without is, and keys on HOME too.
    assert analyse(command) is not bob
    assert ("rm", "-rf", "/home/bob") in analyse(command).segments[-1].forms
    monkeypatch.setenv("HOME", "/home/ann")
    ann_echo = analyse("echo $HOME")
    monkeypatch.setenv("HOME", "/home/bob")
    shared = analyse("echo $HOME")
    assert shared is not ann_echo
    assert shared.segments[0].argv == ("echo", "/home/bob")
    assert analyse("echo $HOME") is shared  # the same answer, shared (frozen)


@pytest.mark.parametrize(
    ("command", "known"),
    [("cd /etc && rm -rf x", True), ("pushd /etc && rm -rf x", True),
     ("popd && rm -rf x", False), ("pushd +1 && rm -rf x", False), ("cd a b && rm x", False)],
)  # fmt: skip
def test_the_catalog_says_which_commands_move_the_shell(command: str, known: bool) -> None:
    rm = analyse(command, workdir="/w").segments[-1]
    resolved = ("rm", "-rf", "/etc/x") in rm.all_forms()
    relative_finding = any("relative to a directory" in f for f in rm.findings)
    assert (resolved if known else relative_finding), (rm.all_forms(), rm.findings)
