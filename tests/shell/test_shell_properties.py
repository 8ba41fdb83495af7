"""Property tests: wrapping, prefixing or joining never makes a decision more permissive."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from shellgate.shell.argv.engine import Opt
from shellgate.shell.catalog import entries
from tests.shell.shell_policy_helpers import at_least, decision

POLICIES = ("allowlist", "denylist")

COMMANDS = [
    "ls -la", "git status", "git log -3", "echo hi", "cat f", "grep x f", "pwd",
    "rm -rf /", "curl http://x", "rm x", "python3 -c pass", "echo $HOME", "ls *.py",
    "bash -c 'rm x'", "echo \"$(rm x)\"", "find . -exec rm {} \\;", "sh", "ls > out",
    "echo {a,b}", "awk '{print}' f", "cat <<< x", "ls | grep y", "true",
]  # fmt: skip
WRAPPERS = [
    "sudo", "sudo -u root", "env", "env -i", "env FOO=1", "timeout 5", "timeout -s KILL 5",
    "nohup", "nice -n 5", "nice", "command", "builtin", "exec", "time", "time -p",
    "stdbuf -o0", "setsid", "ionice -c 3", "flock /tmp/l", "busybox", "doas", "xargs",
    "watch -n 1", "chroot /", "setpriv --reuid 0", "prlimit --nofile=10", "fakeroot --",
    "setarch x86_64 -R", "linux32", "bwrap --bind / / --chdir /", "valgrind -q", "ssh-agent",
    "numactl -N 0", "chpst -u x", "runcon -t t", "sg wheel", "dbus-run-session --",
    "mpirun -np 2", "srun -N 1", "schedtool -e", "xvfb-run -a", "firejail --quiet",
]  # fmt: skip
ASSIGNMENTS = ["FOO=1", "LANG=C", "PATH=/tmp", "A=1 B=2", "X=$(true)", "LC_ALL=C TZ=UTC"]
JOINERS = ["; ", " && ", " || ", " | ", " & ", "\n", " |& "]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(COMMANDS), st.lists(st.sampled_from(WRAPPERS), min_size=1, max_size=3))
def test_wrapping_never_loosens(command: str, wrappers: list[str]) -> None:
    wrapped = " ".join([*wrappers, command])
    for policy in POLICIES:
        assert at_least(decision(wrapped, policy), decision(command, policy)), (wrapped, policy)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(COMMANDS), st.sampled_from(ASSIGNMENTS))
def test_assignment_prefix_never_loosens(command: str, prefix: str) -> None:
    prefixed = f"{prefix} {command}"
    for policy in POLICIES:
        assert at_least(decision(prefixed, policy), decision(command, policy)), (prefixed, policy)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(COMMANDS), min_size=2, max_size=6), st.data())
def test_joining_never_loosens(commands: list[str], data: st.DataObject) -> None:
    joined = commands[0]
    for command in commands[1:]:
        joined += data.draw(st.sampled_from(JOINERS)) + command
    for policy in POLICIES:
        whole = decision(joined, policy)
        for command in commands:
            assert at_least(whole, decision(command, policy)), (joined, command, policy)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(COMMANDS), st.integers(min_value=40, max_value=90))
def test_padding_never_hides_a_segment(command: str, padding: int) -> None:
    padded = "; ".join(["echo ok"] * padding + [command])
    for policy in POLICIES:
        assert at_least(decision(padded, policy), decision(command, policy)), (padding, policy)


# -- every wrapper of the catalog, in any of its option spellings -----------------


def _plain(opt: Opt) -> bool:
    """An option with no role of its own (a role may rightly change the decision:
    ``env -S 1 rm x`` runs ``1``, not ``rm``)."""
    return not (opt.runs or opt.finding or opt.writes or opt.deletes or opt.when) and (
        opt.takes in (0, 1)
    )


#: Options after which the wrapper runs nothing at all (``command -v NAME`` prints
#: where NAME is): the wrapped command is not run, so nothing is there to loosen.
RUNS_NOTHING = frozenset({("command", "-v"), ("command", "-V")})

WRAPPER_ENTRIES = sorted(
    (e for e in entries() if e.runs is not None), key=lambda e: e.name
)


@st.composite
def catalog_wrapper(draw: st.DrawFn) -> str:
    """A wrapper of the catalog with some of its plain options, each in any spelling."""
    entry = draw(st.sampled_from(WRAPPER_ENTRIES))
    name = draw(st.sampled_from(entry.names))
    plain = [o for o in entry.options
             if _plain(o) and not {(entry.name, n) for n in o.names} & RUNS_NOTHING]
    chosen = draw(st.lists(st.sampled_from(plain), max_size=3, unique_by=id)) if plain else []
    words = [name]
    for opt in chosen:
        spelled = draw(st.sampled_from(opt.names))
        if opt.takes == 0:
            words.append(spelled)
        elif spelled.startswith("--") and draw(st.booleans()):
            words.append(f"{spelled}=1")
        else:
            words.extend([spelled, "1"])
    assert entry.runs is not None
    words.extend(["1"] * entry.runs.skip)
    return " ".join(words)


@example(command="rm -rf /", wrapper="env -u 1")
@example(command="bash -c 'rm x'", wrapper="timeout --kill-after 1 1")
@example(command="bash -c 'rm x'", wrapper="command -p")
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(COMMANDS), catalog_wrapper())
def test_any_catalog_wrapper_never_loosens(command: str, wrapper: str) -> None:
    wrapped = f"{wrapper} {command}"
    for policy in POLICIES:
        assert at_least(decision(wrapped, policy), decision(command, policy)), (wrapped, policy)
