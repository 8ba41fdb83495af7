"""Catalog family: wrappers, commands whose operands are a command they run.

Each wrapper's command becomes its own segment (an allow on the wrapper covers
the wrapper only); ``NAME=value`` words a wrapper takes (``env``, ``sudo``) are
that segment's environment, read like a shell prefix assignment. A wrapper that
hands its command to ``sh -c`` (``watch``, ``flock -c``, ``sudo -s``, ``su -c``,
``sg``) yields a shell string instead, parsed as commands. Where a grammar could
be wrong, the command starting at each word it consumed is a guess (deny-side).
Wrappers whose command no getopt grammar finds (``su``, ``sg``, ``capsh``,
``setarch``) have hooks of their own; launchers (``mpirun``, ``srun``,
``schedtool``) are with the debuggers, which also run a program under control.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import (
    GNU,
    GNU_PREFIX,
    GNU_PREFIX_ASSIGNMENTS,
    OPTIONAL,
    POSIX,
    Dialect,
    Opt,
    Parsed,
    scan,
)
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Hook,
    Reading,
    Runs,
    flag,
    letters,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.read import add_program, could_be_command, split_words

#: What sudo -s/-i backslash-escapes in the command it hands to the shell.
_SUDO_QUOTED = re.compile(r"([^A-Za-z0-9_$-])")


def drop_program(argv: Argv, out: Reading, *, guess: bool = False) -> Argv:
    """Remove the wrapper's payload program (it is not what runs); return it.

    ``guess``: keep it as a deny-side reading all the same."""
    label = f"{argv[0]} payload"
    dropped = next((p.argv for p in out.programs if p.label == label), ())
    out.programs[:] = [p for p in out.programs if p.label != label]
    if guess and dropped:
        out.guesses.append(dropped)
    return dropped


def replace_program(argv: Argv, out: Reading, inner: Argv, parsed: Parsed) -> None:
    drop_program(argv, out)
    add_program(out, f"{argv[0]} payload", inner, parsed.assignments)


def _env(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``env -S 'CMD ARGS'`` splits its string into the command line; ``env -`` is ``-i``."""
    rest = argv[parsed.end :]
    if rest[:1] == ("-",):
        out.finding(f"'{argv[0]} -' runs its command with an empty environment")
        rest = rest[1:]
        replace_program(argv, out, rest, parsed)
    split = [w for v in parsed.values("-S") for w in split_words(v)]
    if split:
        replace_program(argv, out, (*split, *rest), parsed)


def _sudo(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``sudo -s``/``-i``: the shell runs the words joined, escaped but for ``$``."""
    inner = argv[parsed.end :]
    if inner and parsed.has("-s", "-i"):
        drop_program(argv, out, guess=True)
        quoted = " ".join(_SUDO_QUOTED.sub(r"\\\1", word) for word in inner)
        out.payloads.append(("sudo -s command", quoted))


def _command(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``command -v NAME`` looks NAME up and runs nothing: no form of it is a command
    (``command -v rm`` prints a path; an ``rm *`` deny rule has nothing to meet)."""
    if parsed.has("-v", "-V"):
        drop_program(argv, out)
        out.guesses.clear()


def _flock(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``flock FILE -c CMD``: the ``-c`` after the lock file hands CMD to ``sh -c``."""
    rest = argv[parsed.end + 1 :]
    if rest[:1] in (("-c",), ("--command",)) and len(rest) > 1:
        drop_program(argv, out, guess=True)
        out.payloads.append((f"{argv[0]} -c command", rest[1]))


def _watch(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Without ``-x``, watch runs its words joined as a ``sh -c`` string."""
    inner = argv[parsed.end :]
    if inner and not parsed.has("-x"):
        drop_program(argv, out, guess=True)
        out.payloads.append(("watch command", " ".join(inner)))


def _firejail(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Before 0.9.64 firejail ran its command line through a shell by default."""
    inner = argv[parsed.end :]
    if inner:
        out.payloads.append(("firejail command", " ".join(inner)))


def _coproc(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``coproc [NAME] { CMD; }``: the group's first command (the tree has it as words)."""
    del parsed
    for skip in (1, 2):
        if argv[skip : skip + 1] == ("{",):
            drop_program(argv, out, guess=True)
            add_program(out, f"{argv[0]} payload", argv[skip + 1 :])
            return
    if len(argv) > 2:
        out.guesses.append(argv[2:])  # coproc NAME CMD: bash would refuse it


def _runcon(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``runcon CONTEXT CMD``; with ``-t``/``-u``/``-r``/``-l`` there is no CONTEXT."""
    if parsed.has("-t", "-u", "-r", "-l") and parsed.end < len(argv):
        out.guesses.append(argv[parsed.end + 1 :])
        replace_program(argv, out, argv[parsed.end :], parsed)


def _dash_c(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``su -c CMD``, ``runuser -c``, ``script -c``: the command is a shell string.

    Read in every word: su hands the words after the user to the shell, so
    ``su root -c CMD`` runs CMD too. getopt_long abbreviations (``su --comm``,
    ``script --com=CMD``) and bundles (``-qc CMD``, ``-ecCMD``) are read.
    """
    del parsed
    label = f"{argv[0]} -c payload"
    for i, word in enumerate(argv[1:], start=1):
        name, eq, value = word.partition("=")
        long = len(name) >= 4 and any(
            full.startswith(name) for full in ("--command", "--session-command")
        )
        if (word == "-c" or (long and not eq)) and i + 1 < len(argv):
            out.payloads.append((label, argv[i + 1]))
        elif long and eq:
            out.payloads.append((label, value))
        elif len(word) > 2 and word[0] == "-" and word[1] != "-" and "c" in word:
            # c takes the rest of the bundle or the next word.
            rest = word[word.index("c") + 1 :]
            if rest or i + 1 < len(argv):
                out.payloads.append((label, rest or argv[i + 1]))


def _script(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Without ``-c`` script runs the user's shell, interactive, on a new terminal:
    the program ``sh``, a segment of its own (``script -q /dev/null`` is a shell)."""
    if not parsed.has("-c"):
        add_program(out, f"{argv[0]} shell", ("sh",))


def _systemd_shell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    if parsed.has("-S") and not argv[parsed.end :]:
        add_program(out, f"{argv[0]} shell", ("sh",))


def _runuser(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Without ``-u`` the operands are ``[-] USER [ARGS]`` for the user's shell."""
    if not parsed.has("-u"):
        drop_program(argv, out, guess=True)


def _sg(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``sg [-] GROUP [-c] CMD``: shadow's sg runs CMD (one word) with ``sh -c``."""
    del parsed
    rest = argv[1:]
    if rest[:1] == ("-",):
        rest = rest[1:]
    rest = rest[1:]  # the group
    if rest[:1] == ("-c",) and len(rest) > 1:
        out.payloads.append(("sg command", rest[1]))
    elif rest:
        out.payloads.append(("sg command", rest[0]))
        out.guesses.append(rest)  # sg drops the words after CMD; reading them only adds matches


def _capsh(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``capsh [--caps=… --shell=SH] -- ARGS``: the shell runs ARGS (``-c 'CMD'``).

    ``-+`` launches the shell the same way; ``==`` and ``=+`` run capsh again.
    """
    del parsed
    shell = "/bin/bash"
    for i, word in enumerate(argv[1:], start=1):
        if word.startswith("--shell="):
            shell = word.partition("=")[2] or shell
        elif word in ("--", "-+", "==", "=+"):
            head = shell if word in ("--", "-+") else argv[0]
            add_program(out, f"{argv[0]} payload", (head, *argv[i + 1 :]))
            return


def _setarch(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``setarch ARCH [-R …] CMD``: the architecture comes before the options."""
    del parsed
    if len(argv) > 1 and not argv[1].startswith("-"):
        rest = (argv[0], *argv[2:])
        replace_program(argv, out, rest[scan(rest, _SETARCH.spec).end :], Parsed())
        if could_be_command(argv[1]):
            out.guesses.append(argv[1:])  # an alias (`setarch linux32 CMD`) is a wrapper too


def wrapper(
    names: str,
    options: tuple[Opt, ...] = (),
    *,
    skip: int = 0,
    dialect: Dialect = GNU_PREFIX,
    hooks: tuple[Hook, ...] = (),
) -> Entry:
    """A wrapper: options, ``skip`` operands, then the command it runs."""
    return Entry(tuple(names.split()), dialect, options, runs=Runs(skip=skip), hooks=hooks)


#: bubblewrap: everything before the command is an option, many with two or three
#: arguments (``--bind SRC DEST``).
_BWRAP = (
    *values(
        "--args --argv0 --userns --userns2 --pidns --uid --gid --hostname --chdir --unsetenv "
        "--lock-file --sync-fd --remount-ro --exec-label --file-label --proc --dev --tmpfs "
        "--mqueue --dir --seccomp --add-seccomp-fd --block-fd --userns-block-fd --info-fd "
        "--json-status-fd --cap-add --cap-drop --perms --size --overlay-src --tmp-overlay "
        "--ro-overlay"
    ),
    *values(
        "--setenv --bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try "
        "--bind-fd --ro-bind-fd --file --bind-data --ro-bind-data --symlink --chmod",
        takes=2,
    ),
    val("--overlay", takes=3),
)
_SYSTEMD_RUN = (
    val("-u --unit"), val("-p --property"), val("-E --setenv"), val("-M --machine"),
    val("-H --host"),
    *values("--uid --gid --nice --slice --working-directory --description --service-type "
            "--on-active --on-boot --on-startup --on-unit-active --on-unit-inactive "
            "--on-calendar --path-property --socket-property --timer-property "
            "--slice-inherit --expand-environment --capsule"),
)  # fmt: skip
_SETPRIV = values(
    "--ruid --euid --rgid --egid --reuid --regid --groups --inh-caps --ambient-caps "
    "--bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile "
    "--landlock-access --landlock-rule --seccomp-filter"
)
#: setarch's aliases name the architecture; its personality flags take no argument.
SETARCH_ALIASES = (
    "linux32 linux64 i386 x86_64 uname26 ppc ppc32 ppc64 sparc sparc32 sparc64 s390 s390x "
    "ia64 parisc parisc32 parisc64 mips mips32 mips64"
)

_SETARCH = wrapper("setarch", hooks=(_setarch,))
_SU = (
    val("-c --command"), val("--session-command"), val("-g --group"), val("-G --supp-group"),
    val("-w --whitelist-environment"),
    val("-s --shell", finding="runs another program as the shell"),
    flag("-l --login"), flag("-m -p --preserve-environment"), flag("-P --pty"), flag("-f --fast"),
)  # fmt: skip
ENTRIES: tuple[Entry, ...] = (
    wrapper(
        "env",
        (
            flag("-i --ignore-environment", finding="runs its command with an empty environment"),
            val("-u --unset", finding="unsets a variable of its command's environment"),
            val("-C --chdir", finding="runs its command in another directory", chdir=True),
            val("-S --split-string", finding="splits a string into its command line"),
            # uutils env (and newer GNU): the name the command sees as argv[0], which
            # a multi-call program (busybox) acts on; ``.env`` file settings; BSD's
            # search path for the command. Each takes a word before the command.
            val("-a --argv0", finding="runs its command under another name (argv[0])"),
            val("-f --file", finding="sets its command's environment from a file"),
            val("-P", finding="looks its command up in a search path of its choosing"),
            flag("-0 --null", inert=True),
            flag("-v --debug", inert=True),
        ),
        dialect=GNU_PREFIX_ASSIGNMENTS,
        hooks=(_env,),
    ),
    wrapper(
        "sudo",
        (
            val("-u --user"), val("-g --group"), val("-C --close-from"),
            val("-D --chdir", chdir=True),
            val("-h --host"), val("-p --prompt"), val("-r --role"), val("-t --type"),
            val("-T --command-timeout"), val("-U --other-user"), val("-c --login-class"),
            flag("-s --shell"), flag("-i --login"), flag("-b --background"),
            optional("-E --preserve-env"), flag("-n --non-interactive"), flag("-S --stdin"),
            flag("-e --edit"), flag("-l --list"), flag("-v --validate"),
            flag("-k --reset-timestamp"), flag("-A --askpass"), flag("-B --bell"),
        ),
        dialect=GNU_PREFIX_ASSIGNMENTS,
        hooks=(_sudo,),
    ),
    wrapper("doas", letters("uC")),
    wrapper("command", (flag("-p"), flag("-v"), flag("-V")), hooks=(_command,)),
    wrapper("builtin busybox setsid catchsegv unbuffer eatmydata chronic ifne torify tsocks "
            "pgrphack nohup"),
    wrapper("exec", letters("a")),
    wrapper("nice", (val("-n --adjustment"),)),
    wrapper("timeout", (val("-s --signal"), val("-k --kill-after"), flag("--foreground"),
                        flag("--preserve-status"), flag("-v --verbose", inert=True)), skip=1),
    wrapper("time", (val("-f --format"), val("-o --output", writes=True), flag("-p"))),
    wrapper("stdbuf", (val("-i --input"), val("-o --output"), val("-e --error"))),
    wrapper("ionice", (val("-c --class"), val("-n --classdata"), val("-p --pid"),
                       val("-P --pgid"), val("-u --uid"))),
    wrapper("coproc", hooks=(_coproc,)),
    # With no command these run the user's shell (chroot: `$SHELL -i`).
    Entry(("chroot",), GNU_PREFIX, (val("--userspec"), val("--groups")),
          runs=Runs(skip=1, default=("sh", "-i"))),
    Entry(("unshare",), GNU_PREFIX,
          (val("-S --setuid"), val("-G --setgid"), val("-R --root"), val("-w --wd"),
           *values("--setgroups --propagation --map-user --map-group --map-users "
                   "--map-groups --monotonic --boottime")),
          runs=Runs(default=("sh",))),
    wrapper("nsenter", (val("-t --target"), val("-S --setuid"), val("-G --setgid"),
                        optional("-r --root"), optional("-w --wd"),
                        *letters("muinpUCT", takes=OPTIONAL))),
    wrapper("taskset faketime", skip=1),
    wrapper("chrt", letters("TPD"), skip=1),
    wrapper("pkexec", values("--user")),
    wrapper("proxychains proxychains4", letters("f")),
    wrapper("torsocks", letters("uapP")),
    # -S/--shell: an interactive shell in a transient unit (no command: sh).
    wrapper("systemd-run", (*_SYSTEMD_RUN, flag("-S --shell")), hooks=(_systemd_shell,)),
    wrapper("flock", (val("-E --conflict-exit-code"), val("-w --timeout --wait"),
                      val("-c --command", runs="shell")), skip=1, hooks=(_flock,)),
    wrapper("watch", (val("-n --interval"), val("-q --equexit"), flag("-x --exec"),
                      optional("-d --differences")), hooks=(_watch,)),
    wrapper("setpriv", _SETPRIV),
    # Resource options (--nofile[=N], -n[N]) take an optional glued value only.
    wrapper("prlimit", (val("-p --pid"), val("-o --output"),
                        *letters("cdefilmnqrstuvxy", takes=OPTIONAL))),
    wrapper("runcon", (val("-t --type"), val("-u --user"), val("-r --role"), val("-l --range")),
            skip=1, hooks=(_runcon,)),
    wrapper("sandbox", (val("-H --homedir"), val("-T --tmpdir"), val("-I --include"),
                        val("-l --level"), val("-t --type"), val("-W --windowmanager"),
                        val("-w --windowsize"), *letters("i"))),
    wrapper("aa-exec", (val("-p --profile"), val("-n --namespace"))),
    wrapper("fakeroot", (val("-l --lib"), val("--faked"), val("-i"), val("-s", writes=True),
                         val("-b --fd-base"))),
    wrapper("fakechroot", (val("-l --lib"), val("-d --elfloader"), val("-e --environment"),
                           val("-c --config-dir"), val("-b --bindir"))),
    wrapper("bwrap", _BWRAP),
    wrapper("firejail", hooks=(_firejail,)),  # its options are all --opt=value
    wrapper("dbus-run-session", values("--config-file --dbus-daemon")),
    wrapper("dbus-launch", values("--config-file --autolaunch")),
    wrapper("ssh-agent", letters("aEOPt")),
    wrapper("xvfb-run", (val("-e --error-file", writes=True), val("-f --auth-file"),
                         val("-n --server-num"), val("-p --xauth-protocol"),
                         val("-s --server-args"), val("-w --wait"))),
    wrapper("numactl", (*letters("ipmNCcoLSfMwP"),
                        *values("--interleave --preferred --membind --cpunodebind "
                                "--physcpubind --cpubind --offset --length --shm --file "
                                "--mode --policy --weighted-interleave --preferred-many"))),
    wrapper("cgexec", letters("g")),
    wrapper("trickle", letters("duwtlnLP")),
    wrapper("nocache", letters("n")),
    # runit and daemontools process-state tools
    wrapper("chpst", letters("uUbe/nlLmdopfcrt")),
    wrapper("softlimit", letters("mdslaopfcrt")),
    wrapper("setuidgid envuidgid envdir setlock lckdo with-lock-ex", skip=1),
    wrapper(SETARCH_ALIASES),
    _SETARCH,
    wrapper("runuser", (*_SU, val("-u --user")), hooks=(_dash_c, _runuser)),
    Entry(("su",), GNU_PREFIX, _SU, hooks=(_dash_c,)),
    Entry(("script",), GNU, (val("-c --command"), val("-E --echo"), val("-m --logging-format"),
                             val("-I --log-in", writes=True), val("-O --log-out", writes=True),
                             val("-B --log-io", writes=True), val("-T --log-timing", writes=True),
                             optional("-t --timing")), writes="all", hooks=(_dash_c, _script)),
    Entry(("sg",), POSIX, hooks=(_sg,), no_canonical=True),
    Entry(("capsh",), POSIX, hooks=(_capsh,), no_canonical=True),
)  # fmt: skip
