"""Wrappers the red-team pass found unpeeled, and option spellings that hid the inner command.

Each spelling runs ``rm -rf /`` behind a wrapper: the deny-side forms must contain
it (or a payload segment must be it), and the real default policy must deny it
(deny wins over the ask the wrapper itself gets). The same spelling running ``ls``
must not become allowed: no wrapper here is on the default allow list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from shellgate.shell import analyse
from shellgate.shell.options import Grammar, scan_all, scan_prefix

POLICY = str(Path(__file__).resolve().parents[2] / "policies" / "default")
WORKSPACE = "/work/wrapper-project"
RM = ("rm", "-rf", "/")


@pytest.fixture(scope="module")
def decider() -> Decider:
    config = load_config(
        None, policy={"paths": [POLICY]}, audit={"path": None}, executor={"workspace": WORKSPACE}
    )
    return Decider(config)


def decide(decider: Decider, command: str) -> str:
    call = CallInfo(
        tool="bash", command=command, subject="agent", tenant="default",
        session="wrappers", workdir=WORKSPACE, workspace=WORKSPACE,
    )  # fmt: skip
    return decider.decide(call).effect


def all_forms(command: str) -> list[tuple[str, ...]]:
    return [f for s in analyse(command, workdir=WORKSPACE).segments for f in s.all_forms()]


# -- option grammar: abbreviations and options with several arguments ----------------

GNU = Grammar("s", frozenset({"--signal", "--kill-after"}), positionals=1)
MULTI = Grammar("", frozenset({"--chdir"}), long_nargs={"--bind": 2, "--overlay": 3})


def test_wrapper_scan_reads_getopt_long_abbreviations() -> None:
    start, options, consumed = scan_prefix(("timeout", "--sig", "KILL", "5", "rm"), GNU)
    assert start == 4
    assert options == [("--sig", "KILL")]
    assert consumed == [2, 3]


def test_ambiguous_abbreviation_takes_the_most_arguments() -> None:
    grammar = Grammar("", frozenset({"--bin"}), long_nargs={"--bind": 2})
    start, _, consumed = scan_prefix(("w", "--bi", "a", "b", "rm"), grammar)
    assert (start, consumed) == (4, [2, 3])


def test_permuting_scan_keeps_unknown_long_options_flags() -> None:
    # Writers have no "try every consumed word" safety net: no guessing there.
    options, operands = scan_all(("sort", "--sig", "KILL", "f"), GNU)
    assert options == [("--sig", None)]
    assert operands == ["KILL", "f"]


def test_long_options_take_several_arguments() -> None:
    argv = ("bwrap", "--bind", "/", "/", "--overlay", "a", "b", "c", "--chdir", "/", "rm")
    start, options, consumed = scan_prefix(argv, MULTI)
    assert argv[start:] == ("rm",)
    assert options == [("--bind", "/"), ("--overlay", "a"), ("--chdir", "/")]
    assert consumed == [2, 3, 5, 6, 7, 9]


def test_glued_value_of_a_multi_argument_option_consumes_no_more() -> None:
    start, _, _ = scan_prefix(("bwrap", "--bind=/", "rm"), MULTI)
    assert start == 2


ABBREVIATED = [
    "timeout --sig KILL 5 rm -rf /",
    "timeout --kill 1 5 rm -rf /",
    "sudo --us root rm -rf /",
    "systemd-run --uni x rm -rf /",
    "env --unse X rm -rf /",
]


@pytest.mark.parametrize("command", ABBREVIATED)
def test_abbreviated_options_do_not_hide_the_command(decider: Decider, command: str) -> None:
    assert RM in all_forms(command)
    assert decide(decider, command) == "deny"
