"""Auto-allowed commands of ``policies/default`` that run, write or fetch more.

Each bypass was found as an ``xfail(strict=True)`` asserting the SAFE answer, next
to a passing test proving with the real tool that the hidden effect happens. The
allow rules match ``argv`` as written (``uniq *``, ``sort *``, ``less *``…); the
analyser now knows the options of these allowed commands that write files or run
programs (``shell/catalog/``), so every
case below is fixed and runs as a normal test.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from shellgate.decider import Decider
from shellgate.models import CallInfo
from tests.redteam.conftest import HOME, WORKSPACE, Decide, bash_runs

# -- bypasses: auto-allowed, but they execute, write or reach the network --------

ALLOWED_BUT_RUNS = [
    pytest.param("printf -v 'a[$(touch /tmp/pwned)]' x", id="printf-v-subscript"),
    pytest.param("printf -v PATH /tmp/evil-bin", id="printf-v-PATH"),
    pytest.param("printf -v HOME /tmp/evil-home", id="printf-v-HOME"),
    pytest.param("sort -S 1k --compress-program=./evil big.txt", id="sort-compress-program"),
    pytest.param("sort --compress-program sh big.txt", id="sort-compress-program-sep"),
    pytest.param("fd -x touch /tmp/pwned", id="fd-x"),
    pytest.param("fd . --exec sh -c 'id'", id="fd-exec"),
    pytest.param("fd -X rm -rf", id="fd-X"),
    pytest.param("fd --exec-batch rm", id="fd-exec-batch"),
    pytest.param("rg --pre=./evil pattern", id="rg-pre-equals"),
    pytest.param("rg --hostname-bin=./evil pattern", id="rg-hostname-bin"),
    pytest.param("less --lesskey-src=keys README.md", id="less-lesskey-src"),
    pytest.param("less --lesskey-file=keys README.md", id="less-lesskey-file"),
    pytest.param("less -k keys README.md", id="less-k"),
    # `--` as the argument of the option before it: the real tool reads on.
    pytest.param(
        "printf 'x' | sort --random-source -- --compress-program=bash -S 1K", id="sort-dashdash"
    ),
    pytest.param("sort --co=bash -S 1K big.txt", id="sort-compress-abbreviated"),
    pytest.param("rg -e -- --pre=sh /dev/stdin", id="rg-e-dashdash-pre"),
    pytest.param("fd -E -- -x touch /tmp/pwned", id="fd-E-dashdash-x"),

]

#: Readers that write through a side door: each write is listed and decided by the
#: write: rules like `> FILE` (policies/default allows the workspace, write:**);
#: the same commands aimed at protected paths are PROTECTED_WRITES below.
ALLOWED_BUT_WRITES = [
    pytest.param("file -F -- -C -m M", id="file-F-dashdash-C"),
    pytest.param("uniq payload out.txt", id="uniq-output-operand"),
    pytest.param("printf 'x\\n' | uniq - notes.txt", id="uniq-stdin-to-file"),
    pytest.param("tree -o out.txt", id="tree-o"),
    pytest.param("file -C -m mymagic", id="file-C"),
]

ALLOWED_BUT_NETWORK = [
    pytest.param("cat < /dev/tcp/198.51.100.7/80", id="dev-tcp-cat"),
    pytest.param("head -c 100 < /dev/tcp/example.com/80", id="dev-tcp-head"),
    pytest.param("cat 0< /dev/udp/127.0.0.1/53", id="dev-udp"),
]


@pytest.mark.parametrize("command", ALLOWED_BUT_RUNS)
def test_allowed_command_that_runs_programs_is_not_auto_allowed(
    decide: Decide, command: str
) -> None:
    assert decide(command) != "allow"


@pytest.mark.parametrize("command", ALLOWED_BUT_WRITES)
def test_allowed_command_that_writes_is_decided_by_the_write_rules(
    decider: Decider, decide: Decide, command: str
) -> None:
    call = CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                    session="redteam", workdir=WORKSPACE, workspace=WORKSPACE)
    verdict = decider.decide(call)
    assert any(sv.segment.writes for sv in verdict.segments), command
    assert any(d.layer == "write-rules" for sv in verdict.segments for d in sv.decisions)
    assert decide(command) == "allow"


@pytest.mark.parametrize("command", ALLOWED_BUT_NETWORK)
def test_dev_tcp_input_redirection_is_not_auto_allowed(decide: Decide, command: str) -> None:
    assert decide(command) != "allow"


PROTECTED_WRITES = [
    pytest.param("uniq payload .git/config", id="uniq-git-config"),
    pytest.param(f"printf 'touch /tmp/pwned\\n' | uniq - {HOME}/.bashrc", id="uniq-bashrc"),
    pytest.param("tree -o .git/hooks/pre-commit", id="tree-o-hook"),
    pytest.param(f"tree -o {HOME}/.bashrc", id="tree-o-bashrc"),
    # GNU getopt_long takes any unambiguous prefix of a long option.
    pytest.param(f"sort --o={HOME}/.bashrc x", id="sort-o-abbreviated"),
    pytest.param(f"sort --outp {HOME}/.bashrc x", id="sort-outp-next-word"),
    pytest.param("cp --targ=.git/hooks x", id="cp-targ"),
    pytest.param("mv --target=.git/hooks x", id="mv-target"),
    pytest.param("install --t=.git/hooks x", id="install-t"),
    pytest.param("install --dir .git/hooks/x", id="install-dir"),
    pytest.param("sed --in-pl s/a/b/ .git/config", id="sed-in-pl"),
    pytest.param("sed --in-place=.bak s/a/b/ .git/config", id="sed-in-place-suffix"),
    pytest.param(f"tar --cr --fi={HOME}/.bashrc x", id="tar-create-abbreviated"),
    # On a terminal, less logs its input to -o/-O/--log-file.
    pytest.param("less -F -O .git/config", id="less-log-git-config"),
    pytest.param(f"less --log-file={HOME}/.bashrc", id="less-log-file-bashrc"),
    pytest.param(f"less --LOG={HOME}/.profile", id="less-LOG-abbreviated"),
    pytest.param("tree -R -H x .git/hooks", id="tree-R-H-index-files"),
]


@pytest.mark.parametrize("command", PROTECTED_WRITES)
def test_protected_writes_by_allowed_commands_are_denied(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"


CHAIN = (
    "printf '[core]\\n\\tfsmonitor = \"touch MARKER; false\"\\n' | uniq - .git/config; git status"
)


def test_uniq_git_config_chain_is_not_auto_allowed(decide: Decide) -> None:
    assert decide(CHAIN.replace("MARKER", "/tmp/pwned")) != "allow"


# -- proof: what the real tools do with the strings above ------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_proof_uniq_git_config_chain_runs_code(tmp_path: Path) -> None:
    repo = tmp_path / "cwd"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert bash_runs(CHAIN, tmp_path)


def test_proof_printf_v_subscript_runs_code(tmp_path: Path) -> None:
    assert bash_runs("printf -v 'a[$(touch MARKER)]' x", tmp_path)


def test_proof_printf_v_changes_exported_path(tmp_path: Path) -> None:
    assert bash_runs("printf -v PATH /nonexistent; ls || /usr/bin/touch MARKER", tmp_path)


def test_proof_uniq_writes_its_second_operand(tmp_path: Path) -> None:
    assert bash_runs("printf 'x\\n' | uniq - MARKER", tmp_path)


def test_proof_sort_compress_program_runs(tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    # exits at once: sort gives up on its first temporary file, after running it
    evil.write_text(f"#!/bin/sh\ntouch {tmp_path}/marker\nexit 1\n")
    evil.chmod(0o755)
    command = f"seq 20000 > big; sort -S 1k -T . --compress-program={evil} big >/dev/null"
    assert bash_runs(command, tmp_path)


@pytest.mark.skipif(shutil.which("less") is None, reason="needs less")
def test_proof_less_lesskey_src_runs_lessopen(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"#env\nLESSOPEN=|touch {tmp_path}/marker; cat %s\n")
    assert bash_runs(f"echo hi > f; less --lesskey-src={keys} f", tmp_path)


@pytest.mark.skipif(shutil.which("file") is None, reason="needs file")
def test_proof_file_C_writes_a_compiled_magic(tmp_path: Path) -> None:
    assert bash_runs("echo '0 string PWN pwn' > m; file -C -m m && mv m.mgc MARKER", tmp_path)


def test_proof_dev_tcp_input_redirection_connects(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    got: list[bool] = []

    def serve() -> None:
        conn, _ = server.accept()
        got.append(True)
        conn.sendall(b"payload from the network\n")
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert bash_runs(
            f"head -c 10 < /dev/tcp/127.0.0.1/{port} > /dev/null && touch MARKER", tmp_path
        )
        thread.join(5)
        assert got == [True]
    finally:
        server.close()


# -- tried and not bypasses (keep them that way) ---------------------------------

STAYS_NOT_ALLOWED = [
    "find . -delete",
    "rg --pre ./evil x",
    "grep --pre ./evil x",
    "git -c core.pager=sh log",
    "git --config-env=core.pager=X log",
    "cat x 1<> out",
    "PAGER=sh git log",
    "GIT_EXTERNAL_DIFF=./x git diff",
    "LD_PRELOAD=./x.so ls",
    "PATH=. ls",
    "BASH_ENV=./x ls",
    "awk 'BEGIN{system(\"id\")}'",
    "cat <(id)",
    "ls $(id)",
    "echo `id`",
]


#: Writes in the workspace, which policies/default allows (write:** and the command's
#: own allow: issue 22), each next to the same write into a protected path, denied.
WORKSPACE_WRITES = [
    ("sort -o out a", "sort -o .git/config a"),
    ("sort --output=out a", "sort --output=.git/hooks/pre-commit a"),
    ("sort -mo out a", "sort -mo .bashrc a"),
    ("find . -fls out", "find . -fls .git/config"),
    ("find . -fprint out", "find . -fprint .vscode/tasks.json"),
    ("git log --output=out", "git log --output=.git/hooks/post-merge"),
    ("git diff --output out", "git diff --output .envrc"),
    ("git show --output=out", "git show --output=.claude/settings.json"),
    ("sed -i s/a/b/ f", "sed -i s/a/b/ .git/config"),
    ("tee out", "tee .bashrc"),
]
#: A program a command runs is decided on its own: allowed when it is, never else.
RUNS_A_PROGRAM = [("find . -exec id \\;", "find . -exec ./evil \\;"),
                  ("find . -exec grep -l x {} +", "find . -exec sh -c id \\;")]


@pytest.mark.parametrize(("command", "neighbour"), WORKSPACE_WRITES)
def test_workspace_writes_are_allowed_and_protected_neighbours_denied(
    decide: Decide, command: str, neighbour: str
) -> None:
    assert decide(command) == "allow"
    assert decide(neighbour) == "deny"


@pytest.mark.parametrize(("command", "neighbour"), RUNS_A_PROGRAM)
def test_a_program_a_command_runs_needs_its_own_allow(
    decide: Decide, command: str, neighbour: str
) -> None:
    assert decide(command) == "allow"
    assert decide(neighbour) != "allow"


@pytest.mark.parametrize("command", STAYS_NOT_ALLOWED)
def test_writing_or_executing_variants_are_not_auto_allowed(decide: Decide, command: str) -> None:
    assert decide(command) != "allow"


#: Redirections are writes the write: rules decide: allowed in the workspace under
#: policies/default (write:**), denied into a protected path, one character away.
REDIRECTED = [("cat x > out", "cat x > .git/config"), ("echo x >| out", "echo x >| ~/.bashrc"),
              ("ls &> out", "ls &> .git/hooks/post-merge")]  # fmt: skip


@pytest.mark.parametrize(("command", "neighbour"), REDIRECTED)
def test_redirections_are_writes_and_protected_neighbours_stay_denied(
    decide: Decide, command: str, neighbour: str
) -> None:
    assert decide(command) == "allow"
    assert decide(neighbour) == "deny"


STAYS_ALLOWED = [
    "ls -la",
    "git status",
    "git log --oneline -5",
    "cat README.md 2>/dev/null",
    "echo a#b",
    "grep -rn TODO src | head -20",
    "printf '%d' 'a[$(id)]'",
    "less -o log.txt f",
]


@pytest.mark.parametrize("command", STAYS_ALLOWED)
def test_plain_reads_stay_allowed(decide: Decide, command: str) -> None:
    """Tried and harmless: bash printf does not evaluate ``%d`` operands as
    arithmetic, less logs (-o) only to a terminal. (git rejects ``log --outp=x``,
    but it is read as ``--output``, a write that asks: test_redteam_git.py.)"""
    assert decide(command) == "allow"


def test_proof_tried_non_bypasses_do_not_run(tmp_path: Path) -> None:
    assert not bash_runs("printf '%d' 'a[$(touch MARKER)]'", tmp_path)
    assert not bash_runs("echo hi | less -o MARKER > /dev/null", tmp_path)
    assert not bash_runs("echo a #; touch MARKER", tmp_path)


# A real flag that is a prefix of a known option taking an argument (rsync's
# --partial of --partial-dir, curl's --head of --header) must not swallow the
# write target: both readings of the option are taken.
@pytest.mark.parametrize(
    "command",
    [
        f"rsync --partial a {HOME}/.ssh/authorized_keys",
        f"rsync --backup a {HOME}/.bashrc",
        f"curl --head -o {HOME}/.bashrc http://example.com/",
    ],
)
def test_flags_that_look_like_abbreviations_hide_no_write(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"


# tree reads no glued values; each value letter of a bundle takes the next word.
@pytest.mark.parametrize(
    "command",
    [
        f"tree --fromfile -o {HOME}/.bashrc .",
        f"tree --fromfile -o{HOME}/.bashrc .",
        f"tree -Lo 1 {HOME}/.bashrc .",
        "tree -Io x .git/config .",
        "tree -oa .git/config .",
    ],
)
def test_tree_output_in_any_spelling_is_a_write(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"
