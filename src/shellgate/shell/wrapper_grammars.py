"""Option grammars of the plain prefix wrappers that ``wrappers.py`` peels.

One row per wrapper: the short letters and long options that take an argument,
the operands before the inner command, whether ``NAME=value`` words may come
first. Options that take no argument need no entry; an unknown ``--long`` that
begins a listed one is read as its abbreviation (``options.scan_prefix``).
"""

from __future__ import annotations

from shellgate.shell.options import Grammar


def _g(
    short: str = "",
    long: str = "",
    positionals: int = 0,
    assignments: bool = False,
    nargs: dict[str, int] | None = None,
    flags: str = "",
) -> Grammar:
    """``flags``: long options without an argument whose names are prefixes of
    ones taking one (sudo's ``--login`` of ``--login-class``): exact, not expanded."""
    return Grammar(
        short, frozenset(long.split()), positionals, assignments, nargs or {},
        frozenset(flags.split()),
    )  # fmt: skip


#: bubblewrap: everything before the command is an option, many with two or three
#: arguments (``--bind SRC DEST``); it takes no ``--opt=value`` and no abbreviations.
_BWRAP_ONE = (
    "--args --argv0 --userns --userns2 --pidns --uid --gid --hostname --chdir --unsetenv "
    "--lock-file --sync-fd --remount-ro --exec-label --file-label --proc --dev --tmpfs "
    "--mqueue --dir --seccomp --add-seccomp-fd --block-fd --userns-block-fd --info-fd "
    "--json-status-fd --cap-add --cap-drop --perms --size --overlay-src --tmp-overlay "
    "--ro-overlay"
)
_BWRAP_MORE = {
    **dict.fromkeys(
        ("--setenv", "--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind",
         "--ro-bind-try", "--bind-fd", "--ro-bind-fd", "--file", "--bind-data",
         "--ro-bind-data", "--symlink", "--chmod"),
        2,
    ),
    "--overlay": 3,
}  # fmt: skip
#: setarch's personality flags take no argument; its aliases name the architecture.
SETARCH = _g()
SETARCH_ALIASES = frozenset(
    {"linux32", "linux64", "i386", "x86_64", "uname26", "ppc", "ppc32", "ppc64", "sparc",
     "sparc32", "sparc64", "s390", "s390x", "ia64", "parisc", "parisc32", "parisc64", "mips",
     "mips32", "mips64"}
)  # fmt: skip


#: Plain prefix wrappers: options, optional positionals, then the inner command.
GRAMMARS: dict[str, Grammar] = {
    "sudo": _g("ugCDhprtTUc", "--user --group --chdir --close-from --host --prompt --role "
               "--type --command-timeout --other-user --login-class", assignments=True,
               flags="--login --shell --background --preserve-env --non-interactive --stdin "
               "--edit --list --validate --reset-timestamp --askpass --bell"),
    "doas": _g("uC"),
    "command": _g(),
    "builtin": _g(),
    "exec": _g("a"),
    "nice": _g("n", "--adjustment"),
    "nohup": _g(),
    "timeout": _g("sk", "--signal --kill-after", positionals=1),
    "time": _g("fo", "--format --output"),
    "stdbuf": _g("ioe", "--input --output --error"),
    "setsid": _g(),
    "ionice": _g("cnpPu", "--class --classdata --pid --pgid --uid"),
    "xargs": _g("adEILnPs", "--arg-file --delimiter --max-args --max-procs --max-chars "
                "--process-slot-var"),
    "busybox": _g(),
    "coproc": _g(),
    "chroot": _g("", "--userspec --groups", positionals=1),
    "unshare": _g("SGRw", "--setuid --setgid --root --wd --setgroups --propagation "
                  "--map-user --map-group --map-users --map-groups --monotonic --boottime"),
    "nsenter": _g("tSGrwT", "--target --setuid --setgid --root --wd"),
    "strace": _g("eoOpPsSuabIEX"),
    "ltrace": _g("eoOpPsSuabIEX"),
    "taskset": _g("", "", positionals=1),
    "chrt": _g("T", "", positionals=1),
    "pkexec": _g("", "--user"),
    "runuser": _g("ugGw", "--user --group --supp-group --whitelist-environment"),
    "faketime": _g("", "", positionals=1),
    "unbuffer": _g(),
    "proxychains": _g("f"),
    "proxychains4": _g("f"),
    "torsocks": _g("uapP"),
    "catchsegv": _g(),
    "systemd-run": _g("upEMH", "--unit --property --setenv --uid --gid --nice --slice "
                      "--working-directory --description --machine --host --service-type "
                      "--on-active --on-boot --on-startup --on-unit-active --on-unit-inactive "
                      "--on-calendar --path-property --socket-property --timer-property "
                      "--slice-inherit --expand-environment --capsule"),
    "env": _g("uCS", "--unset --chdir --split-string", assignments=True),
    "flock": _g("Ewc", "--conflict-exit-code --timeout --wait --command", positionals=1),
    "watch": _g("nq", "--interval --equexit"),
    # util-linux, coreutils, shadow, libcap, SELinux and AppArmor tools
    "setpriv": _g("", "--ruid --euid --rgid --egid --reuid --regid --groups --inh-caps "
                  "--ambient-caps --bounding-set --securebits --pdeathsig --selinux-label "
                  "--apparmor-profile --landlock-access --landlock-rule --seccomp-filter"),
    # Resource options (--nofile[=N], -n[N]) take an optional glued value only.
    "prlimit": _g("po", "--pid --output"),
    "runcon": _g("turl", "--type --user --role --range", positionals=1),  # CONTEXT when no option
    "sandbox": _g("HTIilWwt", "--homedir --tmpdir --include --level --type --windowmanager "
                  "--windowsize"),
    "aa-exec": _g("pn", "--profile --namespace"),
    "fakeroot": _g("lfisb", "--lib --faked --fd-base"),
    "fakechroot": _g("ldecb", "--lib --elfloader --environment --config-dir --bindir"),
    "bwrap": _g("", _BWRAP_ONE, nargs=_BWRAP_MORE),
    "firejail": _g(),  # options are --opt=value; see wrappers.py for its shell string
    # sessions, agents, displays
    "dbus-run-session": _g("", "--config-file --dbus-daemon"),
    "dbus-launch": _g("", "--config-file --autolaunch"),
    "ssh-agent": _g("aEOPt"),
    "xvfb-run": _g("efnpsw", "--error-file --auth-file --server-num --xauth-protocol "
                   "--server-args --wait"),
    # debugging and profiling (valgrind options are all --opt=value)
    "valgrind": _g(),
    # scheduling, resources, cgroups, I/O
    "numactl": _g("ipmNCcoLSfMwP", "--interleave --preferred --membind --cpunodebind "
                  "--physcpubind --cpubind --offset --length --shm --file --mode --policy "
                  "--weighted-interleave --preferred-many"),
    "cgexec": _g("g"),
    "trickle": _g("duwtlnLP"),
    "nocache": _g("n"),
    "eatmydata": _g(),
    "chronic": _g(),
    "ifne": _g(),
    "torify": _g(),
    "tsocks": _g(),
    # runit and daemontools process-state tools
    "chpst": _g("uUbe/nlLmdopfcrt"),
    "softlimit": _g("mdslaopfcrt"),
    "setuidgid": _g(positionals=1),
    "envuidgid": _g(positionals=1),
    "envdir": _g(positionals=1),
    "setlock": _g(positionals=1),
    "pgrphack": _g(),
    "lckdo": _g(positionals=1),
    "with-lock-ex": _g(positionals=1),
    **dict.fromkeys(SETARCH_ALIASES, SETARCH),
}  # fmt: skip
