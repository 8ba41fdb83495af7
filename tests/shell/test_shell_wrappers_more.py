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
from shellgate.shell.argv.engine import GNU, GNU_PREFIX, Spec, scan
from shellgate.shell.catalog.entry import val

POLICY = str(Path(__file__).resolve().parents[2] / "policies" / "default")
WORKSPACE = "/work/wrapper-project"
RM = ("rm", "-rf", "/")


@pytest.fixture(scope="module")
def decider() -> Decider:
    config = load_config(  # ask: the closing default these wrapped commands fall to
        None, policy={"paths": [POLICY], "default": "ask"}, audit={"path": None},
        executor={"workspace": WORKSPACE},
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


# -- option scanning (argv/engine.py): abbreviations, options with several arguments ----------------

TIMEOUT = Spec(GNU_PREFIX, (val("-s --signal"), val("-k --kill-after")))
MULTI = Spec(GNU_PREFIX, (val("--chdir"), val("--bind", takes=2), val("--overlay", takes=3)))


def test_wrapper_scan_reads_getopt_long_abbreviations() -> None:
    parsed = scan(("timeout", "--sig", "KILL", "5", "rm"), TIMEOUT)
    assert parsed.end == 3  # the duration: timeout's entry skips it (Runs(skip=1))
    assert [(h.name, h.value) for h in parsed.hits] == [("-s", "KILL")]  # canonical name
    assert parsed.consumed == [2]


def test_ambiguous_abbreviation_takes_the_most_arguments() -> None:
    spec = Spec(GNU_PREFIX, (val("--bin"), val("--bind", takes=2)))
    parsed = scan(("w", "--bi", "a", "b", "rm"), spec)
    assert (parsed.end, parsed.consumed) == (4, [2, 3])


def test_permuting_scan_reads_abbreviations_of_known_options_only() -> None:
    # GNU tools refuse an ambiguous prefix, so a prefix of one known option taking
    # an argument is that option (`sort --outp F`: F is written). A long option the
    # grammar does not know stays a flag: no operand is swallowed on a guess.
    spec = Spec(GNU, TIMEOUT.options)
    parsed = scan(("sort", "--sig", "KILL", "f"), spec)
    assert ([(h.name, h.value) for h in parsed.hits], parsed.words) == ([("-s", "KILL")], ["f"])
    parsed = scan(("sort", "--bogus", "KILL", "f"), spec)
    assert ([(h.name, h.value) for h in parsed.hits], parsed.words) == (
        [("--bogus", None)], ["KILL", "f"]
    )


def test_long_options_take_several_arguments() -> None:
    argv = ("bwrap", "--bind", "/", "/", "--overlay", "a", "b", "c", "--chdir", "/", "rm")
    parsed = scan(argv, MULTI)
    assert argv[parsed.end :] == ("rm",)
    assert [(h.name, h.value) for h in parsed.hits] == [
        ("--bind", "/"), ("--overlay", "a"), ("--chdir", "/")
    ]
    assert parsed.consumed == [2, 3, 5, 6, 7, 9]


def test_glued_value_of_a_multi_argument_option_consumes_no_more() -> None:
    assert scan(("bwrap", "--bind=/", "rm"), MULTI).end == 2


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


# -- wrappers: each spelling runs `rm -rf /` ------------------------------------------

WRAPPED = [
    # util-linux setpriv: long options only, some taking an argument, abbreviations
    pytest.param("setpriv --reuid 0 --regid 0 --init-groups rm -rf /", id="setpriv"),
    pytest.param("setpriv --reuid=0 --clear-groups --nnp -- rm -rf /", id="setpriv-glued-dashdash"),
    pytest.param("/usr/bin/setpriv --inh-caps +all --bounding-set -all rm -rf /", id="setpriv-path"),
    pytest.param("setpriv --reu 0 --pdeathsig KILL rm -rf /", id="setpriv-abbreviated"),
    pytest.param("sudo setpriv --reuid 0 env rm -rf /", id="setpriv-nested"),
    # util-linux prlimit: resource values glued, -p PID
    pytest.param("prlimit --nofile=1024 --as=1000000 rm -rf /", id="prlimit-glued"),
    pytest.param("prlimit -n1024 -p 1 -- rm -rf /", id="prlimit-short"),
    # shadow sg: the command is one shell string
    pytest.param("sg wheel -c 'rm -rf /'", id="sg-c"),
    pytest.param("sg wheel 'rm -rf /'", id="sg-string"),
    pytest.param("sg - wheel rm -rf /", id="sg-dash-words"),
    # libcap capsh: after -- (or -+) the words go to bash; == runs capsh again
    pytest.param("capsh -- -c 'rm -rf /'", id="capsh"),
    pytest.param("capsh --caps=cap_sys_admin+eip --user=root -- -c 'rm -rf /'", id="capsh-options"),
    pytest.param("capsh --shell=/bin/sh -- -c 'rm -rf /'", id="capsh-shell"),
    pytest.param("capsh --drop=cap_net_raw == -- -c 'rm -rf /'", id="capsh-reexec"),
    pytest.param("/sbin/capsh -+ -c 'rm -rf /'", id="capsh-launch"),
    pytest.param("capsh --shell=/bin/rm -- -rf /", id="capsh-shell-is-the-command"),
    # fakeroot, fakechroot
    pytest.param("fakeroot -- rm -rf /", id="fakeroot-dashdash"),
    pytest.param("fakeroot -l /usr/lib/libfakeroot.so -s state rm -rf /", id="fakeroot-options"),
    pytest.param("fakechroot --environment none -- rm -rf /", id="fakechroot"),
    # setarch ARCH [flags] CMD, and its aliases
    pytest.param("setarch x86_64 -R rm -rf /", id="setarch"),
    pytest.param("setarch -R --addr-compat-layout rm -rf /", id="setarch-no-arch"),
    pytest.param("setarch i686 --uname-2.6 -3 rm -rf /", id="setarch-long-flags"),
    pytest.param("linux32 rm -rf /", id="linux32"),
    pytest.param("/usr/bin/linux64 -R rm -rf /", id="linux64-path"),
    pytest.param("i386 -3 rm -rf /", id="i386"),
    pytest.param("x86_64 --verbose rm -rf /", id="x86_64"),
    pytest.param("uname26 rm -rf /", id="uname26"),
    # dbus-run-session, dbus-launch
    pytest.param("dbus-run-session --config-file=/etc/d.conf -- rm -rf /", id="dbus-run-session"),
    pytest.param("dbus-run-session --dbus-daemon /usr/bin/dbus-daemon rm -rf /", id="dbus-run-session-separate"),
    pytest.param("dbus-launch --exit-with-session rm -rf /", id="dbus-launch"),
    # valgrind: every option is --opt=value
    pytest.param("valgrind --tool=memcheck --leak-check=full -q rm -rf /", id="valgrind"),
    # gdb: shell commands, pipes, run, --args
    pytest.param("gdb -batch -ex 'shell rm -rf /'", id="gdb-shell"),
    pytest.param("gdb -batch -ex '!rm -rf /'", id="gdb-bang"),
    pytest.param("gdb -q -batch -ex 'shel rm -rf /'", id="gdb-shell-abbreviated"),
    pytest.param("gdb --eval-command='shell rm -rf /'", id="gdb-eval-command-glued"),
    pytest.param("gdb -nx -iex 'shell rm -rf /' /bin/true", id="gdb-iex"),
    pytest.param("gdb -batch -ex 'pipe print 1 | rm -rf /'", id="gdb-pipe"),
    pytest.param("gdb -batch -ex '| print 1 | rm -rf /'", id="gdb-pipe-bar"),
    pytest.param("gdb -batch -ex 'pipe -d XX print 1 XX rm -rf /'", id="gdb-pipe-delimiter"),
    pytest.param("gdb -nx -batch -ex run --args rm -rf /", id="gdb-args"),
    pytest.param("gdb -batch -ex 'run -rf /' /bin/rm", id="gdb-run-arguments"),
    pytest.param("gdb -batch -ex 'set args -rf /' -ex r rm", id="gdb-set-args"),
    pytest.param("gdb -batch -ex 'run $(rm -rf /)' /bin/true", id="gdb-run-substitution"),
    # ssh-agent runs its command as a child
    pytest.param("ssh-agent -a /tmp/agent.sock -t 60 rm -rf /", id="ssh-agent"),
    pytest.param("ssh-agent -- rm -rf /", id="ssh-agent-dashdash"),
    # bubblewrap: options with one, two and three arguments
    pytest.param("bwrap --bind / / --dev /dev --proc /proc --chdir / rm -rf /", id="bwrap"),
    pytest.param("bwrap --setenv PATH /usr/bin --overlay /a /b /c --unshare-all -- rm -rf /", id="bwrap-setenv-overlay"),
    pytest.param("bwrap --ro-bind /usr /usr --symlink usr/bin /bin --chmod 0755 /x sudo rm -rf /", id="bwrap-nested"),
    pytest.param("bwrap --file 3 /etc/x --perms 0600 --tmpfs /tmp --die-with-parent rm -rf /", id="bwrap-fd-options"),
    # SELinux, AppArmor, runit, daemontools
    pytest.param("runcon -t unconfined_t -u system_u rm -rf /", id="runcon-options"),
    pytest.param("runcon system_u:system_r:unconfined_t:s0 rm -rf /", id="runcon-context"),
    pytest.param("sandbox -H /tmp/h -T /tmp/t -t sandbox_t rm -rf /", id="sandbox"),
    pytest.param("aa-exec -p unconfined -- rm -rf /", id="aa-exec"),
    pytest.param("chpst -u root -/ / -n 5 rm -rf /", id="chpst"),
    pytest.param("softlimit -m 1000000 rm -rf /", id="softlimit"),
    pytest.param("setuidgid root rm -rf /", id="setuidgid"),
    pytest.param("envdir /etc/env rm -rf /", id="envdir"),
    pytest.param("setlock -n /tmp/lock rm -rf /", id="setlock"),
    # sandboxes, schedulers, resource and network shapers
    pytest.param("firejail --noprofile --private rm -rf /", id="firejail"),
    pytest.param("firejail --quiet 'rm -rf /'", id="firejail-shell-string"),
    pytest.param("numactl --interleave=all rm -rf /", id="numactl-glued"),
    pytest.param("numactl -N 0 -m 0 --physcpubind 1 rm -rf /", id="numactl-separate"),
    pytest.param("cgexec -g cpu,memory:/grp --sticky rm -rf /", id="cgexec"),
    pytest.param("schedtool -R -p 20 -e rm -rf /", id="schedtool"),
    pytest.param("trickle -s -d 10 -u 10 rm -rf /", id="trickle"),
    pytest.param("nocache -n 2 rm -rf /", id="nocache"),
    pytest.param("eatmydata -- rm -rf /", id="eatmydata"),
    pytest.param("chronic -e rm -rf /", id="chronic"),
    pytest.param("xvfb-run -a -s '-screen 0 1x1x8' rm -rf /", id="xvfb-run"),
    pytest.param("xvfb-run --server-args='-ac' --auto-servernum rm -rf /", id="xvfb-run-long"),
    # launchers with too many options to list
    pytest.param("mpirun -np 4 --mca btl self rm -rf /", id="mpirun"),
    pytest.param("mpiexec -n 1 hostname : -n 1 rm -rf /", id="mpiexec-mpmd"),
    pytest.param("srun -N 2 --ntasks=4 -l rm -rf /", id="srun"),
    # shells behind sudo -s
    pytest.param("sudo -s rm -rf /", id="sudo-s"),
    pytest.param("sudo -u root -i rm -rf /", id="sudo-i"),
]  # fmt: skip


@pytest.mark.parametrize("command", WRAPPED)
def test_inner_command_is_a_form(command: str) -> None:
    assert RM in all_forms(command)


@pytest.mark.parametrize("command", WRAPPED)
def test_inner_rm_rf_is_denied(decider: Decider, command: str) -> None:
    assert decide(decider, command) == "deny"


RUNS_LS = [
    pytest.param(str(p.values[0]).replace("rm -rf /", "ls"), id=p.id)
    for p in WRAPPED
    if "rm -rf /" in str(p.values[0])
]


@pytest.mark.parametrize("command", RUNS_LS)
def test_wrapped_harmless_command_is_still_asked(decider: Decider, command: str) -> None:
    # `ls` is allowed; the wrapper is not, so the closing default asks.
    assert decide(decider, command) == "ask"


def test_sudo_shell_escapes_all_but_dollar() -> None:
    # sudo -s joins the words and backslash-escapes them, `$` excepted: the
    # shell still expands variables, so `'$HOME'` names the home directory.
    segments = analyse("sudo -s rm -rf '$HOME' a.b", workdir=WORKSPACE).segments
    payload = [s for s in segments if s.context == ("sudo -s command",)]
    assert [s.argv for s in payload] == [("rm", "-rf", "$HOME", "a.b")]
    assert any("parameter expansion" in f for f in payload[0].findings)


def test_sudo_shell_runs_one_quoted_word_as_one_word() -> None:
    segments = analyse("sudo -s 'a b;c'", workdir=WORKSPACE).segments
    assert [s.argv for s in segments if s.context == ("sudo -s command",)] == [("a b;c",)]


def test_gdb_python_is_inline_code() -> None:
    segments = analyse("gdb -batch -ex 'python import os'", workdir=WORKSPACE).segments
    assert any("runs inline code" in f for s in segments for f in s.findings)


def test_expect_inline_tcl_is_a_finding_not_a_shell_payload(decider: Decider) -> None:
    # Tcl is not shell: `spawn rm -rf /` cannot be read as a command, only asked.
    for command in ("expect -c 'spawn rm -rf /'", "sudo -u root expect -c 'exec ls'"):
        segments = analyse(command, workdir=WORKSPACE).segments
        assert any("'expect -c' code starts other programs" in f
                   for s in segments for f in s.findings)
        assert decide(decider, command) == "ask"


def test_capsh_without_double_dash_runs_nothing() -> None:
    assert all_forms("capsh --print --caps=cap_chown+ep") == [
        ("capsh", "--print", "--caps=cap_chown+ep")
    ]


def test_launcher_stops_guessing_where_the_command_must_have_started() -> None:
    forms = all_forms("mpirun -np 4 --mca btl self python train.py --out /x")
    assert ("python", "train.py", "--out", "/x") in forms
    assert ("/x",) not in forms


def test_long_wrapper_lines_keep_the_best_reading_under_the_forms_cap(decider: Decider) -> None:
    binds = " ".join(f"--ro-bind /d{i} /d{i}" for i in range(40))
    command = f"bwrap {binds} --unshare-all sudo -u root env rm -rf /"
    segment = analyse(command, workdir=WORKSPACE).segments[0]
    assert RM in segment.all_forms()
    assert any("wrapper readings" in f for f in segment.findings)  # the guesses were capped
    assert decide(decider, command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "gdb -p 1 -batch -ex 'call system(\"rm -rf /\")'",
        "gdb -p 1 -batch -ex 'print (int) system (\"rm \\\"-rf\\\" /\")'",
        "gdb -p 1 -batch -ex 'call popen(\"rm -rf /\", \"r\")'",
    ],
)
def test_gdb_makes_the_debuggee_run_a_shell_string(decider: Decider, command: str) -> None:
    assert RM in all_forms(command)
    assert decide(decider, command) == "deny"
