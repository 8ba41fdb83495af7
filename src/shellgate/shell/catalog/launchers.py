"""Catalog family: more programs that run a program, and more shells.

Launchers whose operands (or one option) are a command they run: resource and
priority tools (``choom``, ``cpulimit``, ``aoss``), compile and colour wrappers
(``distcc``, ``grc``), timers (``multitime``, ``perf stat``, ``pidstat -e``),
daemons and terminals (``start-stop-daemon -x``, ``openvt``, ``agetty -l``,
``xdotool exec``), password feeders (``sshpass``), the dynamic loader
(``ld.so PROG``; ``--preload``/``--audit`` load a library), sandboxes and
dev shells (``codex sandbox``, ``cdist shell -s``, ``genie -c``, ``ksu -e``,
``logsave FILE CMD``, which writes FILE). Each command is a program of its own.

Shells the analysis does not read as bash (``rc``, ``elvish``, ``nu``,
``xonsh``…): a ``-c`` string is parsed as commands for deny rules, and is a
finding; with no script they read commands from stdin (a finding), as ``sh``
does. ``sash`` is a POSIX shell.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, POSIX, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Hook,
    Reading,
    Runs,
    flag,
    letters,
    val,
    values,
)
from shellgate.shell.catalog.interpreters import shell_invocation
from shellgate.shell.catalog.read import add_program
from shellgate.shell.catalog.wrappers import wrapper

_FOREIGN = "runs code in a shell language the analysis does not read"


def _foreign_shell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """A shell whose language is not bash: ``-c`` code is a finding (and parsed
    for deny rules); with no script, commands come from stdin."""
    del parsed
    payload, stdin = shell_invocation(argv)
    if payload is not None:
        out.finding(f"'{argv[0]} -c' {_FOREIGN}")
        out.payloads.append(("-c payload", payload))
    elif stdin:
        out.finding(f"'{argv[0]}' reads commands from stdin")
        out.forms.append(("sh",))


def _sash(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    payload, stdin = shell_invocation(argv)
    if payload is not None:
        out.payloads.append(("-c payload", payload))
    elif stdin:
        out.finding(f"'{argv[0]}' reads commands from stdin")
        out.forms.append(("sh",))


def _after(option: str, *, label: str = "") -> Hook:
    """The words after ``option`` (up to the end) are a program."""

    def hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
        del parsed
        if option in argv:
            at = argv.index(option)
            add_program(out, label or f"{argv[0]} {option} payload", argv[at + 1 :])

    return hook


def _ld_so(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for option in ("--preload", "--audit"):
        if parsed.values(option):
            out.finding(f"'{argv[0]} {option}' loads a library (code) of its choosing")


ENTRIES: tuple[Entry, ...] = (
    wrapper("aoss pexec distcc ccache sccache icecc"),
    wrapper("multitime", (*values("-n -s -f"), val("-r", runs="shell"), flag("-q"))),
    wrapper("choom", (val("-n --adjust"), val("-p --pid"))),
    wrapper("cpulimit", (val("-l --limit"), val("-p --pid"), val("-e --exe"), val("-P --path"),
                         flag("-f --foreground"), flag("-z --lazy"), flag("-i --include-children"),
                         flag("-k --kill"), flag("-r --restore"), flag("-v --verbose"),
                         flag("-q --quiet"))),
    wrapper("grc", (flag("--pty"), flag("-e --stderr"), flag("-s --stdout"), val("-c --config"),
                    val("--colour"))),
    wrapper("sshpass", (val("-p"), val("-f"), val("-d"), val("-P"), flag("-e"), flag("-v"))),
    wrapper("openvt", (val("-c --console"), flag("-f --force"), flag("-s --switch"),
                       flag("-u --user"), flag("-l --login"), flag("-v --verbose"),
                       flag("-w --wait"))),
    wrapper("logsave", (flag("-a"), flag("-s"), flag("-v")), skip=1),
    wrapper("ld.so ld-linux.so.2 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 ld-musl-x86_64.so.1",
            (val("--preload"), val("--audit"), val("--library-path"), val("--argv0"),
             val("--inhibit-rpath"), flag("--list"), flag("--verify"),
             flag("--inhibit-cache")), hooks=(_ld_so,)),
    Entry(("start-stop-daemon",), GNU, (val("-x --exec", runs="program"),
                                        val("-a --startas", runs="program"),
                                        *values("-p --pidfile -n --name -u --user -c --chuid "
                                                "-g --group -r --chroot -d --chdir -N --nicelevel "
                                                "-k --umask -s --signal -R --retry"))),
    Entry(("agetty", "getty"), GNU, (val("-l --login-program", runs="program"),
                                     *values("-o --login-options -a --autologin -f --issue-file "
                                             "-H --host -I --init-string -t --timeout"))),
    Entry(("pidstat",), GNU, (*letters("pTGuUr", takes=0), *values("-e -C -G -p")),
          hooks=(_after("-e"),)),
    Entry(("ksu",), GNU, (*values("-n -c -C -z -Z -g -l"), flag("-q")), hooks=(_after("-e"),)),
    Entry(("perf",), GNU_PREFIX, subcommands={
        verb: Entry((verb,), GNU_PREFIX, values("-e --event -o --output -p --pid -t --tid "
                                                "-C --cpu -r --repeat -x --field-separator -c "
                                                "-F --freq -m --mmap-pages"),
                    runs=Runs()) for verb in ("stat", "record", "trace")}),
    Entry(("xdotool",), GNU_PREFIX, subcommands={"exec": Entry(("exec",), GNU_PREFIX, (
        flag("--sync"), val("--terminator")), runs=Runs())}),
    Entry(("codex",), GNU_PREFIX, subcommands={"sandbox": Entry(("sandbox",), GNU_PREFIX, (
        *values("-c --config --full-auto"),), runs=Runs(skip=1))}),
    Entry(("cdist",), GNU_PREFIX, subcommands={"shell": Entry(("shell",), GNU, (
        val("-s --shell", runs="program"),))}),
    Entry(("genie",), GNU, (val("-c --command", runs="shell"), flag("-s --shell"),
                            flag("-l --login"), flag("-i --initialize"))),
    Entry(("ansible-test",), GNU_PREFIX, subcommands={"shell": Entry(
        ("shell",), GNU, finding="opens a shell (in a test environment of its choosing)")}),
    Entry(("rc", "elvish", "nu", "xonsh", "es", "ion", "murex", "oil", "osh", "ysh"), POSIX,
          hooks=(_foreign_shell,), no_canonical=True),
    Entry(("sash",), POSIX, hooks=(_sash,), no_canonical=True),
    Entry(("systemd-nspawn", "machinectl"), GNU_PREFIX, values(
        "-D --directory -M --machine -u --user --bind --bind-ro -E --setenv -i --image"),
        runs=Runs(default=("sh",))),
)  # fmt: skip
