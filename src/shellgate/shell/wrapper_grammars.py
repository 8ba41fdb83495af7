"""Option grammars of the plain prefix wrappers that ``wrappers.py`` peels.

One row per wrapper: the short letters and long options that take an argument,
the operands before the inner command, whether ``NAME=value`` words may come
first. Options that take no argument need no entry; an unknown ``--long`` that
begins a listed one is read as its abbreviation (``options.scan_prefix``).
"""

from __future__ import annotations

from shellgate.shell.options import Grammar


def _g(short: str = "", long: str = "", positionals: int = 0, assignments: bool = False) -> Grammar:
    return Grammar(short, frozenset(long.split()), positionals, assignments)


#: Plain prefix wrappers: options, optional positionals, then the inner command.
GRAMMARS: dict[str, Grammar] = {
    "sudo": _g("ugCDhprtTUc", "--user --group --chdir --close-from --host --prompt --role "
               "--type --command-timeout --other-user --login-class", assignments=True),
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
    "unshare": _g("SGRw", "--setuid --setgid --root --wd"),
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
                      "--working-directory --description --machine --host"),
    "env": _g("uCS", "--unset --chdir --split-string", assignments=True),
    "flock": _g("Ewc", "--conflict-exit-code --timeout --wait --command", positionals=1),
    "watch": _g("nq", "--interval --equexit"),
}  # fmt: skip
