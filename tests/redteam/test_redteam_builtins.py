"""Bash builtins an admin allows for scripts' sake (``set *``, ``unset *``,
``getopts *``, ``shopt *``, ``wait *``) and ``for``/``select`` loops: each can
change what a later, allowed command runs.

Found by a red-team pass: ``set -k`` makes ``git status GIT_CONFIG_…=…`` carry
environment assignments; ``unset 'a[$(cmd)]'`` runs the substitution; ``unset
PATH`` or ``for PATH in DIR`` makes bash run ``./git`` or ``DIR/ls``. Each case
asserts the safe answer through the real decider over an allow-list that allows
the builtin, beside a harmless neighbour that stays allowed, and the real bash
shows the hidden effect.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.redteam.conftest import WORKSPACE_WRITABLE, Decide, bash_runs, decide_with_rules

ALLOWED = ("ls", "git", "set", "unset", "getopts", "shopt", "wait", "true", "history")


@pytest.fixture(scope="module")
def decide(tmp_path_factory: pytest.TempPathFactory) -> Decide:
    rows = "".join(f"p, agent, *, {name} *, allow\n" for name in ALLOWED)
    return decide_with_rules(tmp_path_factory.mktemp("builtins-policy"), rows + WORKSPACE_WRITABLE)


CHANGES_WHAT_RUNS = [
    pytest.param("set -k; git status GIT_CONFIG_COUNT=1", id="set-k"),
    pytest.param("set -o keyword; ls LD_PRELOAD=/tmp/x.so", id="set-o-keyword"),
    pytest.param("set -ek; ls", id="set-k-bundled"),
    pytest.param("set +o posix", id="set-posix"),
    pytest.param("set -P; ls", id="set-physical"),
    pytest.param("shopt -s extglob", id="shopt-extglob"),
    pytest.param("shopt -s expand_aliases", id="shopt-expand-aliases"),
    pytest.param("shopt -so keyword", id="shopt-o-keyword"),
    pytest.param("unset 'GROUPS[$(touch /tmp/pwned)]'", id="unset-subscript"),
    pytest.param("unset -v 'DIRSTACK[$(touch /tmp/pwned)]'", id="unset-v-subscript"),
    pytest.param("unset PATH; git status", id="unset-PATH"),
    pytest.param("unset IFS", id="unset-IFS"),
    pytest.param("getopts a PATH -a; ls", id="getopts-PATH"),
    pytest.param("getopts a 'x[$(touch /tmp/pwned)]'", id="getopts-subscript"),
    pytest.param("true & wait -p PATH; ls", id="wait-p-PATH"),
    pytest.param("for PATH in /tmp/evil; do ls; done", id="for-PATH"),
    pytest.param("for IFS in x; do ls; done", id="for-IFS"),
    pytest.param("for LD_PRELOAD in /tmp/x.so; do ls; done", id="for-LD_PRELOAD"),
    pytest.param("select PATH in /tmp/evil; do ls; done", id="select-PATH"),
    pytest.param("history -s 'touch /tmp/pwned'; history -w .envrc", id="history-w"),
    pytest.param("history -a ~/.bashrc", id="history-a"),
    pytest.param("history -cw notes", id="history-w-bundled"),
    pytest.param("history -r ~/.ssh/id_ed25519; history", id="history-r"),
]

HARMLESS = [
    pytest.param("set -euo pipefail", id="set-euo-pipefail"),
    pytest.param("set -x; ls", id="set-x"),
    pytest.param("set +e", id="set-plus-e"),
    pytest.param("set -- -k x", id="set-positional"),
    pytest.param("shopt -s nullglob globstar", id="shopt-nullglob"),
    pytest.param("shopt extglob", id="shopt-query"),
    pytest.param("unset FOO", id="unset-plain"),
    pytest.param("unset -f myfunction", id="unset-function"),
    pytest.param("getopts ab opt", id="getopts-plain"),
    pytest.param("true & wait -n -p pid", id="wait-p-plain"),
    pytest.param("for x; do ls; done", id="for-plain"),
    pytest.param("for name in a b; do ls; done", id="for-list"),
    pytest.param("history 20", id="history-list"),
    pytest.param("history -s 'make test'", id="history-s"),
]


@pytest.mark.parametrize("command", CHANGES_WHAT_RUNS)
def test_a_builtin_that_changes_what_runs_is_not_allowed(decide: Decide, command: str) -> None:
    assert decide(command) != "allow"


@pytest.mark.parametrize("command", HARMLESS)
def test_harmless_neighbours_stay_allowed(decide: Decide, command: str) -> None:
    assert decide(command) == "allow"


def _planted_ls(tmp_path: Path) -> Path:
    """A directory holding an ``ls`` that creates the marker."""
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "ls").write_text(f"#!/bin/sh\n: > {tmp_path / 'marker'}\n", encoding="utf-8")
    os.chmod(evil / "ls", 0o700)
    return evil


# -- the real bash: each hidden effect happens ---------------------------------------


def test_bash_runs_an_unset_subscript(tmp_path: Path) -> None:
    assert bash_runs("unset 'GROUPS[$(touch MARKER)]'", tmp_path)


def test_bash_runs_what_a_for_loop_puts_on_path(tmp_path: Path) -> None:
    evil = _planted_ls(tmp_path)
    assert bash_runs(f"for PATH in {evil}; do ls; done", tmp_path)


def test_bash_runs_what_a_select_loop_puts_on_path(tmp_path: Path) -> None:
    evil = _planted_ls(tmp_path)
    assert bash_runs(f"select PATH in {evil}; do ls; done <<< 1", tmp_path)


def test_bash_takes_keyword_words_as_the_environment_under_set_k(tmp_path: Path) -> None:
    probe = "sh -c 'test \"$SG_PROBE\" = 1 && : > MARKER' SG_PROBE=1"
    assert bash_runs(f"set -k; {probe}", tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not bash_runs(probe, plain)  # without -k the word is only an operand


def test_bash_runs_from_the_current_directory_after_unset_path(tmp_path: Path) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    (work / "ls").write_text(f"#!/bin/sh\n: > {tmp_path / 'marker'}\n", encoding="utf-8")
    os.chmod(work / "ls", 0o700)
    assert bash_runs("unset PATH; ls", tmp_path)


def test_bash_writes_the_text_history_s_chose(tmp_path: Path) -> None:
    planted = tmp_path / "cwd" / ".envrc"
    bash_runs("history -s 'touch MARKER'; history -w .envrc", tmp_path)
    assert planted.read_text(encoding="utf-8").strip() == f"touch {tmp_path / 'marker'}"
