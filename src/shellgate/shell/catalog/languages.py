"""Catalog family: more language interpreters (julia, R, Lisps and Schemes, gnuplot…).

As in :mod:`.interpreters`: code given on the command line (``julia -e``,
``R -e``, ``guile -c``, ``clisp -x``, ``gnuplot -e``, ``slsh -e``,
``jrunscript -e``, ``bpftrace -e``, ``dc -e``, ``octave --eval``, ``erl -eval``,
``elixir -e``, ``groovy -e``) or read from a stdin the analysis can see is the
program's own, covered by the allow of that invocation, and read by
:mod:`.inline_code` for what it visibly does beyond computing (starting
programs, the network, native code), each a finding, and for the paths it
names. Code from a stdin the analysis cannot see is a finding. Options that
run a program of their own (``bpftrace -c CMD``) are programs, segments of their
own; ``bpftrace --unsafe`` allows its ``system()``.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import GNU, POSIX, Dialect, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Hook, Reading, flag, val, values
from shellgate.shell.catalog.interpreters import code_from_stdin, code_option
from shellgate.shell.catalog.read import add_program

_LOADS = "loads code from a file first"


def _interpreter(
    names: tuple[str, ...], language: str | None, code: str, *, other: str = "",
    loads: str = "", dialect: Dialect = POSIX, stdin: bool = True,
) -> Entry:
    """An interpreter whose ``code`` options give its code, ``other`` options take
    a value, and ``loads`` options load code from a file (a finding)."""
    options = (
        *(val(name) for name in code.split()),
        *values(other),
        *(val(name, finding=_LOADS) for name in loads.split()),
    )
    hooks: tuple[Hook, ...] = (code_option(language, *code.split()),)
    if stdin:
        hooks = (*hooks, code_from_stdin(language, *code.split(), *loads.split()))
    return Entry(names, dialect, options, hooks=hooks)


#: java's options: one-dash words (``-cp``, ``-jar``), never bundled; they stop at
#: the main class.
_JAVA = Dialect("java", permute=False, bundles=False, abbreviations=False, single_dash_long=True)
_AGENT = re.compile(r"-(?:agentlib|agentpath|javaagent):")


def _java(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``java [options] CLASS ARGS`` runs CLASS from the class path, as ``python -m``
    runs a module: a program of its own (``CLASS ARGS``), which an allow naming it
    through java covers (``java Main *``) and ``java *`` does not. ``-jar F`` and a
    ``.java`` source file are script operands, judged by name; an agent loads code."""
    for word in argv[1 : parsed.end]:
        if _AGENT.match(word):
            out.finding(f"'{argv[0]} {word.split(':', 1)[0]}' loads an agent (code) into the JVM")
    modules = parsed.values("-m")
    if modules:
        at = next(h.at for h in parsed.hits if h.name == "-m") + 1
        add_program(out, f"{argv[0]} module", (modules[-1].split("/")[-1], *argv[parsed.end :]),
                    via=argv, via_at=at if at < len(argv) and argv[at] == modules[-1] else 0)
        return
    if parsed.has("-jar") or not parsed.operands:
        return
    at, word = parsed.operands[0]
    if not word.endswith(".java"):
        add_program(out, f"{argv[0]} main class", argv[at:], via=argv, via_at=at)


ENTRIES: tuple[Entry, ...] = (
    Entry(("java",), _JAVA, (
        val("-jar", last=True), val("-m --module", last=True),
        *values("-cp -classpath --class-path -p --module-path --add-modules --source "
                "--upgrade-module-path --add-opens --add-exports --enable-native-access"),
    ), hooks=(_java,), no_canonical=True),
    _interpreter(("julia",), "julia", "-e --eval -E --print", other="-t --threads -p --procs "
                 "--project -J --sysimage -O --optimize --startup-file --history-file "
                 "--color --depwarn --check-bounds", loads="-L --load", dialect=GNU),
    _interpreter(("R",), "r", "-e", other="--encoding --max-ppsize -d --debugger",
                 loads="-f --file", dialect=GNU),
    _interpreter(("guile", "guile3.0", "guile2.2"), "lisp", "-c -e", other="-L -C -x",
                 loads="-l -s --listen"),
    _interpreter(("clisp",), "lisp", "-x", other="-B -K -M -m -L -E -Epathname -Eterminal",
                 loads="-i -c -o"),
    _interpreter(("sbcl", "ecl", "ccl", "lisp"), "lisp", "--eval", other="--core "
                 "--dynamic-space-size --control-stack-size", loads="--load --script", dialect=GNU),
    _interpreter(("racket",), "lisp", "-e --eval", other="-I -S --search",
                 loads="-f --load -t --require -l --lib -r --script -u", dialect=GNU),
    _interpreter(("csi", "scheme", "mit-scheme", "chez", "petite", "gosh", "chibi-scheme"),
                 "lisp", "-e -eval -p -P --eval", loads="-s -script -ss -l -load --load"),
    _interpreter(("gnuplot",), "gnuplot", "-e", other="-d --default-settings", stdin=False),
    _interpreter(("slsh",), "slang", "-e", other="-g -n -D"),
    _interpreter(("jrunscript", "jjs", "rhino"), "jvm", "-e", other="-classpath -cp -l -J -D",
                 loads="-f"),
    _interpreter(("groovy", "scala", "kotlin", "kotlinc"), "jvm", "-e", other="-cp "
                 "-classpath --classpath -D"),
    _interpreter(("octave", "octave-cli", "matlab"), "octave", "--eval", other="-p --path "
                 "--exec-path --image-path -W", dialect=GNU),
    _interpreter(("erl",), "erlang", "-eval", other="-pa -pz -sname -name -setcookie -s -run",
                 stdin=False),
    _interpreter(("elixir", "iex"), "erlang", "-e --eval", other="-pa -pz --sname --name "
                 "--cookie", loads="-r -pr --require --parallel-require"),
    Entry(
        ("bpftrace",),
        GNU,
        (
            val("-e"),
            val("-c", runs="words"),
            flag("--unsafe", finding="lets the program run commands (system())"),
            *values("-p -I --include -o -f -B -k -d --dry-run"),
        ),
        hooks=(code_option("bpftrace", "-e"),),
    ),
    Entry(("dc",), GNU, (val("-e --expression"), val("-f --file", finding=_LOADS)),
          hooks=(code_option("dc", "-e"), code_from_stdin("dc", "-e", "-f"))),
    Entry(("m4",), GNU, (val("-D --define"), val("-U --undefine"), val("-I --include"),
                         val("-F --freeze-state", writes=True), val("-R --reload-state",
                                                                    finding=_LOADS),
                         val("-d --debug"), val("-o --debugfile --error-output", writes=True),
                         val("-l --arglength"), val("-L --nesting-limit")),
          hooks=(code_from_stdin("m4"),)),
)  # fmt: skip
