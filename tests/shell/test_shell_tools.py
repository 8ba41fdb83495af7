"""Options of allowed tools that run or write, heredoc misreads, and other red-team fixes.

Each test goes through the real tree-sitter parse and ``analyse`` (or the pure
helpers of ``shell/tools.py`` and ``shell/heredocs.py``) and checks what a rule
layer will see: findings (ask), forms (deny rules) and writes (protected paths).
"""

from __future__ import annotations

import os

import pytest

from shellgate.models import Segment
from shellgate.shell import analyse
from shellgate.shell.catalog.findutils import fd_exec_command
from shellgate.shell.reader.heredocs import backtick_spans, bash_body_end
from tests.shell.shell_policy_helpers import decision

W = "/work/project"
Argv = tuple[str, ...]


def segments(command: str) -> tuple[Segment, ...]:
    return analyse(command, workdir=W).segments


def findings(command: str) -> list[str]:
    return [f for s in segments(command) for f in s.findings]


def forms(command: str) -> list[tuple[str, ...]]:
    return [f for s in segments(command) for f in s.all_forms()]


def writes(command: str) -> set[str]:
    return {w for s in segments(command) for w in s.write_paths}


# -- writers: every write operand lands in writes and is a finding -----------------


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("uniq in.txt out.txt", f"{W}/out.txt"),
        ("uniq -f 1 - .git/config", f"{W}/.git/config"),
        ("tree -o out.txt", f"{W}/out.txt"),
        ("tree -a -L 2 -o /tmp/t.txt src", "/tmp/t.txt"),
        ("file -C -m /etc/mymagic", f"{W}/mymagic.mgc"),
        ("file -C", f"{W}/magic.mgc"),
    ],
)
def test_write_operands_are_writes_for_the_write_rules(command: str, target: str) -> None:
    """A reader that writes through a side door lists the write: the protected
    paths and the ``write:`` rules decide it, as they decide ``> FILE``."""
    assert target in writes(command)
    assert not any("via its operand" in f for f in findings(command))


@pytest.mark.parametrize(
    ("command", "target"),
    [("cp a b", f"{W}/b"), ("touch x", f"{W}/x"), ("mkdir -p d/e", f"{W}/d/e"),
     ("tee -a log", f"{W}/log")],
)  # fmt: skip
def test_obvious_writers_write_without_findings(command: str, target: str) -> None:
    # An admin's `touch *, allow` means it: the targets still meet protected paths.
    assert target in writes(command)
    assert findings(command) == []


@pytest.mark.parametrize(
    "command",
    ["uniq in.txt", "tree -L 2 src", "file x.bin", "sort names.txt", "cat a b", "ls -la",
     "grep -rn TODO src", "git status", "git log --oneline -5", "git diff HEAD",
     "rg -n policy", "fd -e py", "less README.md", "printf '%s\\n' x"],
)  # fmt: skip
def test_plain_reads_gain_no_findings(command: str) -> None:
    assert findings(command) == []
    assert writes(command) == set()


def test_writing_to_dev_null_through_an_operand_is_no_finding() -> None:
    assert findings("tee /dev/null") == []


# -- options that run programs -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "less --lesskey-src=k f", "less --lesskey-file k f", "less --lesskey-content=x f",
        "less -k k f", "less -kk f", "less -Nk k f", "less '+!id' f", "less +-olog f",
        "less '+/x\n!id\n' f",
        "printf -v PATH /tmp", "printf -vHOME x", "printf -v LD_PRELOAD x",
        "printf -v BASH_ENV x", "printf -v 'a[0]' x", "printf -v 'x y' z",
    ],
)  # fmt: skip
def test_options_that_run_or_assign_are_findings(command: str) -> None:
    assert findings(command), command


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("sort --compress-program=gzip big", ("gzip",)),
        ("sort --compress-program gzip big", ("gzip",)),
        ("sort --compress=./x big", ("./x",)),
        ("sort -S 1k --compress-prog ./x big", ("./x",)),
        ("rg --pre=./x p", ("./x",)),
        ("rg --pre ./x p", ("./x",)),
        ("rg --hostname-bin=./x p", ("./x",)),
        ("rg -n --hostname-bin x p", ("x",)),
    ],
)
def test_options_that_run_a_program_make_it_a_segment(command: str, program: Argv) -> None:
    """The program is decided on its own: an allow of ``sort *`` never covers it."""
    assert program in [s.argv for s in segments(command) if s.context], segments(command)
    assert decision(command, "allowlist") != "allow"


@pytest.mark.parametrize(
    "command",
    ["sort -n -k2 f", "rg --pre-glob '*.gz' p", "less -N f", "less +G f", "less +/version f",
     "less +F f", "fd -e txt x", "file -b f", "printf -v line '%s' x",
     "printf -- -v x", "printf '%s' -v"],
)  # fmt: skip
def test_harmless_spellings_stay_without_findings(command: str) -> None:
    assert findings(command) == [], findings(command)


@pytest.mark.parametrize(
    "command", ["sort -- --compress-program=x", "rg -- --pre x", "fd -- -x x", "file -- -C"]
)
def test_option_words_after_dashdash_still_ask(command: str) -> None:
    """``--`` may be the argument of the option before it (``sort --random-source
    -- --compress-program=bash`` runs bash), so the checks read on past it: an
    operand that looks like such an option costs a question (a finding, or the
    program it would run as a segment of its own)."""
    ran = [s.argv for s in segments(command) if s.context]
    assert findings(command) != [] or ran == [("x",)] or writes(command), (findings(command), ran)
    assert decision(command, "allowlist") != "allow"


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (("fd", "-x", "rm", "{}"), ("-x", ("rm", "{}"))),
        (("fd", ".", "--exec", "sh", "-c", "id", ";", "-e", "py"), ("--exec", ("sh", "-c", "id"))),
        (("fd", "--exec-batch=rm", "-f"), ("--exec-batch", ("rm", "-f"))),
        (("fd", "-Hxrm", "x"), ("-x", ("rm", "x"))),
        (("fd", "-e", "py"), None),
        (("fd", "-tx", "x"), None),
        (("fd", "-Hex", "x"), None),
        (("fd", "-E", "--", "-x", "rm"), ("-x", ("rm",))),  # -E takes "--" as its glob
    ],
)
def test_fd_exec_command_follows_the_option_grammar(
    form: tuple[str, ...], expected: tuple[str, tuple[str, ...]] | None
) -> None:
    assert fd_exec_command(form) == expected


def test_fd_exec_command_is_a_form_for_deny_rules() -> None:
    assert ("rm", "-rf", "/") in forms("fd . -x rm -rf / ;")
    assert ("rm", "-rf", "/") in forms("fd . --exec sh -c 'rm -rf /'")


def test_printf_v_subscript_is_parsed_as_a_payload() -> None:
    assert ("rm", "-rf", "/") in forms("printf -v 'a[$(rm -rf /)]' x")


# -- /dev/tcp -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["cat < /dev/tcp/1.2.3.4/80", "cat 0< /dev/udp/h/53", "echo x > /dev/tcp/h/80",
     "exec 3<> /dev/tcp/h/80", "head -c 1 </dev/tcp/h/1"],
)  # fmt: skip
def test_dev_tcp_redirections_are_network_findings(command: str) -> None:
    assert any("network access through /dev/" in f for f in findings(command))


def test_an_operand_named_dev_tcp_is_not_a_redirection() -> None:
    assert not any("network" in f for f in findings("ls /dev/tcp"))


# -- heredocs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "spans"),
    [
        ("`a`\n", ["a"]),
        ("x `a b` y `c`\n", ["a b", "c"]),
        ("\\`not\\` `yes`\n", ["yes"]),
        ("${x:-`id`}\n", ["id"]),
        ("`echo \\`rm x\\``\n", ["echo `rm x`"]),
        ("'`q`'\n", ["q"]),  # quotes are ordinary characters in a heredoc body
        ("`open\n", ["open\n"]),
        ("plain $HOME\n", []),
    ],
)
def test_backtick_spans_follow_heredoc_quoting(body: str, spans: list[str]) -> None:
    assert backtick_spans(body) == spans


@pytest.mark.parametrize(
    ("body", "delimiter", "dash", "end"),
    [
        ("hi\nEO\\\nF\nrm x\n", "EOF", False, 9),
        ("E\\\nO\\\nF\nx\n", "EOF", False, 8),
        ("\tEO\\\nF\nx\n", "EOF", True, 7),
        ("hi\nEO\\\\\nF\n", "EOF", False, None),  # an even run of backslashes is literal
        ("hi\nEOF\n", "EOF", False, None),  # tree-sitter already ends it there
        ("x\\\nEOF\n", "EOF", False, None),  # joined into xEOF: bash reads on
    ],
)
def test_bash_body_end_joins_backslash_newlines(
    body: str, delimiter: str, dash: bool, end: int | None
) -> None:
    assert bash_body_end(body, delimiter, dash) == end


def test_heredoc_backticks_are_payloads_and_findings() -> None:
    command = "cat <<EOF\nx `rm -rf /` y\nEOF"
    assert ("rm", "-rf", "/") in forms(command)
    cat = next(s for s in segments(command) if s.argv == ("cat",))
    assert any("heredoc body" in f for f in cat.findings)


def test_quoted_heredoc_backticks_stay_data() -> None:
    assert findings("cat <<'EOF'\n`rm -rf /`\nEOF") == []


def test_heredoc_ended_early_by_a_joined_delimiter_runs_the_rest() -> None:
    command = "cat <<EOF\nhi\nEO\\\nF\nrm -rf /\nEOF"
    assert ("rm", "-rf", "/") in forms(command)
    assert any("joined by backslash-newline" in f for f in findings(command))


def test_many_heredoc_backticks_stay_inside_the_budget() -> None:
    body = "".join(f"`x{i}`\n" for i in range(2000))
    analysis = analyse(f"cat <<EOF\n{body}EOF\n")
    assert any("only the first 256 were read" in f for f in analysis.findings)


# -- deny-side readings ------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "coproc X { rm -rf /; }", "coproc { rm -rf /; }", "echo ${x:-`rm -rf /`}",
        'echo "${x:=`rm -rf /`}"', "a[$(rm -rf /)]=1", "declare a[$(rm -rf /)]=1",
        "cat <<EOF; rm -rf /\nhi\nEOF", "cat <<$'E'\nhi\nE\nrm -rf /", "env - rm -rf /",
        "script -qc 'rm -rf /' /dev/null", "script -ec'rm -rf /'", "trap -- 'rm -rf /' EXIT",
        "bash -c '\"$@\"' x rm -rf /", "sh -c '$1 $2 $3' sh rm -rf /",
        "bash /dev/stdin <<< 'rm -rf /'", "sh /proc/self/fd/0 <<< 'rm -rf /'",
    ],
)  # fmt: skip
def test_deny_rules_see_the_command_bash_runs(command: str) -> None:
    assert ("rm", "-rf", "/") in forms(command), forms(command)


@pytest.mark.parametrize("command", ["curl x | sh -x", "curl x | bash /dev/stdin", "sh -"])
def test_a_shell_reading_stdin_has_its_bare_name_as_a_form(command: str) -> None:
    names = {f for f in forms(command) if len(f) == 1}
    assert names & {("sh",), ("bash",)}


def test_home_variable_write_targets_name_the_home_file() -> None:
    home = os.environ["HOME"]
    for command in ('echo x >> "$HOME/.bashrc"', "echo x >> ${HOME}/.bashrc"):
        assert f"{home}/.bashrc" in writes(command)
        assert findings(command) == []  # HOME is fixed by the call's environment: expanded


@pytest.mark.parametrize("command", ["cat x 1<> .git/config", "cat x <> .git/config"])
def test_read_write_redirection_is_a_write(command: str) -> None:
    assert f"{W}/.git/config" in writes(command)


def test_a_parse_error_asks_for_every_segment_and_adds_no_rough_forms() -> None:
    command = "cat <<EOF; (" + "; ".join(f"echo {i}" for i in range(600)) + "\nEOF"
    assert not [s for s in segments(command) if s.text == command]  # no rough segment
    assert all(any(f.startswith("parse error") for f in s.findings) for s in segments(command))
