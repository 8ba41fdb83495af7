"""Catalog families wrappers, debuggers and findutils: what each command runs, writes, deletes.

Every wrapper's command, ``find -exec``'s and ``fd -x``'s programs and xargs'
command are segments of their own, decided on their own; shell strings a
wrapper hands to ``sh -c`` are parsed as commands. Decisions come from the real
engine: the two test policies of ``shell_policy_helpers`` and, for "an allow on
the wrapper covers the wrapper only", a small policy set through the casbin layer.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.models import Segment
from shellgate.policy.loader import SHIPPED_MODEL
from shellgate.shell import analyse
from tests.shell.shell_policy_helpers import WORKDIR, call_for, decision


def segments(command: str) -> tuple[Segment, ...]:
    return analyse(command, workdir=WORKDIR).segments


def findings(command: str) -> list[str]:
    return [f for s in segments(command) for f in s.findings]


def programs(command: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(context, argv) of every segment below the top level."""
    return [(s.context, s.argv) for s in segments(command) if s.context]


# -- an allow on the wrapper covers the wrapper only ---------------------------------


def policy_decider(root: Path, rows: str) -> Decider:
    """The real decider over one policy set (the shipped model, ``rows`` as policy.csv)."""
    shutil.copy(SHIPPED_MODEL, root / "model.conf")
    (root / "policy.csv").write_text(rows.lstrip("\n"), encoding="utf-8")
    base = Config()
    policy = base.policy.model_copy(update={"paths": (root,), "default": "ask"})
    return Decider(base.model_copy(update={"policy": policy}))


RULES = """
p, agent, *, find *, allow
p, agent, *, xargs *, allow
p, agent, *, env *, allow
p, agent, *, grep *, allow
"""


@pytest.fixture(scope="module")
def decider(tmp_path_factory: pytest.TempPathFactory) -> Decider:
    return policy_decider(tmp_path_factory.mktemp("wrappers"), RULES)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("find . -exec python3 x.py \\;", "ask"),
        ("find . -name x -exec grep foo {} \\;", "allow"),
        ("find . -name x -exec grep foo {} + -exec python3 x.py \\;", "ask"),
        ("xargs sh x.sh", "ask"),
        ("xargs -0 grep foo", "allow"),
        ("xargs -0", "ask"),  # runs echo, which no rule allows
        ("env", "allow"),
        ("env grep foo", "allow"),
        ("env python3 x.py", "ask"),
        ("env FOO=1 grep foo", "ask"),  # the environment is part of what runs
    ],
)
def test_allow_on_a_wrapper_covers_the_wrapper_only(
    decider: Decider, command: str, expected: str
) -> None:
    assert decider.decide(call_for(command)).effect == expected


# -- each payload is a segment: a denied program is denied behind any wrapper ---------

DENIED_BEHIND = [
    "sudo -u root rm x",
    "sudo -nu root rm x",
    "sudo --us root rm x",
    "sudo -s rm x",
    "sudo -i rm x",
    "doas -u root rm x",
    "timeout --sig KILL 5 rm x",
    "timeout -k1 5 rm x",
    "nice -10 rm x",
    "nohup -- rm x",
    "flock /tmp/l rm x",
    "flock /tmp/l -c 'rm x'",
    "flock -w 1 /tmp/l --command 'rm x'",
    "watch -n 1 rm x",
    "watch -x rm x",
    "watch 'ls; rm x'",
    "firejail --quiet 'rm x'",
    "coproc rm x",
    "chroot / rm x",
    "runcon -t t rm x",
    "runcon u:r:t:s0 rm x",
    "runuser -u nobody rm x",
    "runuser -l nobody -c 'rm x'",
    "su -c 'rm x' root",
    "su root -c 'rm x'",
    "su --comm 'rm x'",
    "su -lc 'rm x'",
    "script -qc 'rm x' /dev/null",
    "script --com='rm x' /dev/null",
    "sg wheel 'rm x'",
    "sg - wheel -c 'rm x'",
    "capsh -- -c 'rm x'",
    "capsh --shell=/bin/rm -- x",
    "setarch x86_64 -R rm x",
    "linux32 rm x",
    "bwrap --bind / / --overlay a b c rm x",
    "unshare --setgroups deny rm x",
    "nsenter -t 1 -m -r rm x",
    "prlimit --nofile=10 -n1024 rm x",
    "systemd-run --uni x rm x",
    "xvfb-run -a -s '-screen 0' rm x",
    "chpst -/ / -u root rm x",
    "setuidgid root rm x",
    "schedtool -R -p 20 -e rm x",
    "mpirun -np 4 --mca btl self rm x",
    "mpiexec -n 1 hostname : -n 1 rm x",
    "srun -N 2 --ntasks=4 -l rm x",
    "strace -f -o out.txt rm x",
    "strace -o '|rm x' ls",
    "ltrace -o out.txt rm x",
    "valgrind --tool=memcheck -q rm x",
    "valgrind --db-command='rm x' ls",
    "gdb -batch -ex 'shell rm x'",
    "gdb -batch -ex '!rm x'",
    "gdb -batch -ex 'pipe print 1 | rm x'",
    "gdb -batch -ex 'run x' /bin/rm",
    "gdb -batch -ex 'call system(\"rm x\")' -p 1",
    "gdb -nx -batch -ex run --args rm x",
    "xargs rm",
    "xargs -0 -n 1 rm -f",
    "xargs -I {} rm {}",
    "xargs --replace=R rm R",
    "find . -exec rm {} \\;",
    "find . -execdir rm {} +",
    "find . -ok rm {} \\;",
    "find . -okdir rm {} \\;",
    "find . -exec ls {} \\; -exec rm {} \\;",
    "fd -x rm",
    "fd -e py -X rm",
    "fd --exec-batch=rm",
    "fdfind -Hxrm x",
    "env -S 'rm x'",
]


@pytest.mark.parametrize("command", DENIED_BEHIND)
def test_a_denied_program_behind_a_wrapper_is_denied(command: str) -> None:
    assert decision(command, "denylist") == "deny"
    assert decision(command.replace("rm", "ls"), "allowlist") == "ask"


def test_the_wrapper_command_is_its_own_segment_one_level_deeper() -> None:
    assert programs("sudo -u root env FOO=1 rm x") == [
        (("sudo payload",), ("env", "FOO=1", "rm", "x")),
        (("sudo payload", "env payload"), ("rm", "x")),
    ]
    assert segments("sudo -u root env FOO=1 rm x")[2].assignments == (("FOO", "1"),)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("find . -name x -exec grep -l foo {} \\;", [(("find -exec payload",), ("grep", "-l", "foo", "{}"))]),
        ("find . -ok rm {} +", [(("find -ok payload",), ("rm", "{}"))]),
        ("xargs -0 -I R grep R f", [(("xargs payload",), ("grep", "R", "f"))]),
        ("xargs", [(("xargs payload",), ("echo",))]),
        ("fd -e py -x wc -l ; -H", [(("fd -x payload",), ("wc", "-l"))]),
        ("timeout 5 ls", [(("timeout payload",), ("ls",))]),
        ("chrt -f 1 ls", [(("chrt payload",), ("ls",))]),
        ("watch -x ls", [(("watch payload",), ("ls",))]),
        ("watch ls", [(("watch command",), ("ls",))]),
        ("command -v ls", []),  # looks ls up: runs nothing
        ("runuser nobody", []),  # the user's shell, no command
        ("strace -E A=1 ls", [(("strace payload",), ("ls",))]),
        ("gdb -ex 'shell ls'", [(("gdb shell command",), ("ls",))]),
        ("mpiexec -n 1 ls : -n 2 pwd", [(("mpiexec payload",), ("ls",)), (("mpiexec payload",), ("pwd",))]),
    ],
)  # fmt: skip
def test_programs_and_shell_strings_are_read(command: str, expected: list[object]) -> None:
    assert programs(command) == expected


def test_strace_env_is_the_programs_environment() -> None:
    assert segments("strace -E LD_PRELOAD=x.so ls")[1].assignments == (("LD_PRELOAD", "x.so"),)


def test_sudo_shell_quotes_the_words_it_joins() -> None:
    assert programs("sudo -s 'a b;c'") == [(("sudo -s command",), ("a b;c",))]


# -- a program word that is not a literal name is a finding ---------------------------


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec {} \\;",
        "find . -type f -execdir {} --version +",
        "fd -x {}",
        "xargs -I {} {} --version",
        "xargs -I CMD CMD x",
        "xargs -i {} -v",
        "env $X",
        "sudo $CMD",
    ],
)
def test_a_program_not_known_until_it_runs_is_a_finding(command: str) -> None:
    assert any("not known until it runs" in f or "named by its input" in f for f in findings(command))
    assert decision(command, "denylist") != "allow"


# -- options that load code or change state -------------------------------------------


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("gdb -x cmds.gdb ./a.out", "runs the gdb commands of a file"),
        ("gdb --command=cmds.gdb", "runs the gdb commands of a file"),
        ("gdb -batch -ex 'python import os'", "runs inline code"),
        ("su -s /bin/zsh root", "runs another program as the shell"),
        ("env -i ls", "empty environment"),
    ],
)
def test_code_loading_options_are_findings(command: str, text: str) -> None:
    assert any(text in f for f in findings(command)), findings(command)


# -- writes and deletions ---------------------------------------------------------------

HOME = os.path.expanduser("~")


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("find . -fprint .git/hooks/x", f"{WORKDIR}/.git/hooks/x"),
        ("find . -fprint0 .git/hooks/x", f"{WORKDIR}/.git/hooks/x"),
        ("find . -fls .git/hooks/x", f"{WORKDIR}/.git/hooks/x"),
        ("find . -name -fprint -fprintf .git/hooks/x %p", f"{WORKDIR}/.git/hooks/x"),
        ("strace -o .git/hooks/x ls", f"{WORKDIR}/.git/hooks/x"),
        ("ltrace -o .git/hooks/x ls", f"{WORKDIR}/.git/hooks/x"),
        ("time -o ~/.bashrc ls", f"{HOME}/.bashrc"),
        ("valgrind --log-file=.git/hooks/x ls", f"{WORKDIR}/.git/hooks/x"),
        ("xvfb-run -e ~/.bashrc ls", f"{HOME}/.bashrc"),
        ("script .git/hooks/x", f"{WORKDIR}/.git/hooks/x"),
        ("script -O .git/hooks/x", f"{WORKDIR}/.git/hooks/x"),
        ("find src build -name '*.o' -delete", f"{WORKDIR}/build"),
        ("find -delete", WORKDIR),
        ("find -L ~/.ssh -delete", f"{HOME}/.ssh"),
    ],
)
def test_write_options_are_write_targets(command: str, target: str) -> None:
    assert target in segments(command)[0].write_paths, segments(command)[0].write_paths


def test_find_delete_is_a_finding_and_names_its_roots() -> None:
    assert "'find' empties or deletes 'build'" in findings("find build -name x -delete")


def test_find_values_are_not_primaries() -> None:
    # `-name -delete` looks for files named "-delete": nothing is deleted or run.
    assert findings("find . -name -delete -o -name -exec") == []
    assert programs("find . -name -exec") == []


# -- canonical forms ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("sudo --user=root -n rm -rf /", "sudo -n -uroot rm -rf /"),
        ("timeout --signal KILL 5 ls", "timeout -sKILL 5 ls"),
        ("xargs --null --max-args 1 rm", "xargs -0 -n1 rm"),
        ("nice --adjustment=5 ls", "nice -n5 ls"),
        ("fd --extension py", "fd -epy"),
        ("strace --output=o -f ls", "strace -f -oo ls"),
    ],
)
def test_canonical_forms(command: str, canonical: str) -> None:
    assert canonical in segments(command)[0].canonical, segments(command)[0].canonical


def test_find_expression_is_its_own_canonical_form() -> None:
    # An expression language, not options: no word of it is reordered or respelled.
    segment = segments("find . -name x -exec rm -rf {} ;")[0]
    assert [c for c in segment.canonical if c.startswith("find")] == [segment.command]
    assert "rm -f -r {}" in segment.canonical  # the program's, for deny rules


def test_pattern_rules_read_wrapper_options_canonically(tmp_path: Path) -> None:
    decider = policy_decider(tmp_path, "p, agent, *, timeout -s KILL *, deny\n")
    for command in ("timeout --sig=KILL 5 ls", "timeout -sKILL 5 ls", "timeout -s KILL 5 ls"):
        assert decider.decide(call_for(command)).effect == "deny", command
