"""Deny-side respellings, evaluated names and subscripts, through the real analyser."""

from __future__ import annotations

import pytest

from shellgate.shell import analyse
from shellgate.shell.argv.spellings import resolved_operands, respellings

W = "/work/project"
RM_ROOT = ("rm", "-rf", "/")


def forms(command: str) -> list[tuple[str, ...]]:
    return [f for s in analyse(command, workdir=W).segments for f in s.all_forms()]


def findings(command: str) -> list[str]:
    return [f for s in analyse(command, workdir=W).segments for f in s.findings]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("{rm,-rf,/}",), ("rm", "-rf", "/")),
        (("rm,-rf,/",), ("rm", "-rf", "/")),
        (("/bin/r?", "-rf", "/"), ("rm", "-rf", "/")),
        (("/bin/[r]m", "x"), ("rm", "x")),
        (("rm", "-rf", "/etc//"), ("rm", "-rf", "/etc")),
        (("rm", "-rf", "/usr/../etc"), ("rm", "-rf", "/etc")),
        (("rm", "-rf", "/./etc"), ("rm", "-rf", "/etc")),
        (("rm", "-rf", "//etc"), ("rm", "-rf", "/etc")),
    ],
)
def test_respellings_name_the_command_bash_runs(
    argv: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert expected in respellings(argv)


@pytest.mark.parametrize("argv", [("ls", "-la"), ("git", "status"), ("cat", "/etc/hosts"), ()])
def test_plain_argvs_have_no_respellings(argv: tuple[str, ...]) -> None:
    assert respellings(argv) == []


def test_resolved_operands_after_cd() -> None:
    assert resolved_operands(("rm", "-rf", "usr", "/x", "-v"), "/") == (
        "rm", "-rf", "/usr", "/x", "-v",
    )  # fmt: skip
    assert resolved_operands(("rm", "-rf", "/x"), "/") is None


@pytest.mark.parametrize(
    ("command", "form"),
    [
        ("{rm,-rf,/}", RM_ROOT),
        ("/bin/r? -rf /", RM_ROOT),
        ('$"rm" -rf /', RM_ROOT),
        ("echo `echo \\`rm -rf /\\``", RM_ROOT),
        ("mapfile -C 'rm -rf / #' -c 1 <<< x", RM_ROOT),
        ("[[ -v 'a[$(rm -rf /)]' ]]", RM_ROOT),
        ("test -v 'a[$(rm -rf /)]'", RM_ROOT),
        ("[[ 'a[$(rm -rf /)]' -eq 0 ]]", RM_ROOT),
        ("read 'a[$(rm -rf /)]' <<< x", RM_ROOT),
        ("declare -i x='a[$(rm -rf /)]'", RM_ROOT),
        ("x='a[$(rm -rf /)]'; echo $((x))", RM_ROOT),
        ("PS4='$(rm -rf /)'; set -x; true", RM_ROOT),
    ],
)
def test_deny_rules_see_evaluated_strings(command: str, form: tuple[str, ...]) -> None:
    assert form in forms(command), forms(command)
    assert findings(command)


def test_rm_operands_are_resolved_after_a_cd() -> None:
    assert ("rm", "-rf", "/usr") in forms("cd / && rm -rf usr")


def test_cd_into_the_workdir_adds_no_resolved_form() -> None:
    assert forms("rm -rf build") == [("rm", "-rf", "build")]


@pytest.mark.parametrize(
    "command",
    ["read -r line", "read -a parts", "[[ -v HOME ]]", "[ 1 -eq 2 ]", "declare -i n=3",
     "mapfile -t lines < f", "x=a[1]"],
)  # fmt: skip
def test_plain_names_and_values_raise_nothing_new(command: str) -> None:
    assert not [f for f in findings(command) if "subscript" in f or "callback" in f]


@pytest.mark.parametrize("command", ["read PATH", "read -a IFS", "mapfile PATH < f"])
def test_reading_into_a_sensitive_name_is_a_finding(command: str) -> None:
    assert any("changes what commands do" in f for f in findings(command))
