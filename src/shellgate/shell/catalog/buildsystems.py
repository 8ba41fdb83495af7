"""Catalog family: build-system generators and runners (cmake, ninja).

``cmake -S . -B build`` and ``ninja -C build`` run the project's own build, as
``make`` does: an admin allows them by name. Their command modes do more:
``cmake -E env|chdir|time CMD…`` runs CMD (a program of its own; ``env``'s
``NAME=value`` words are its environment), ``cmake -E copy…|rename|touch|
make_directory|create_symlink|create_hardlink`` write their destinations,
``remove``/``rm``/``remove_directory`` delete, ``tar x`` extracts; ``cmake -C
FILE`` runs a script first, ``-D CMAKE_C_COMPILER=PROG`` (and the other
compilers, launchers and linkers) names a program cmake runs at once to test
it. ``ninja -f`` with a build file read from stdin runs commands the analysis
cannot see; ``ninja -t msvc -- CMD`` runs CMD.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, Parsed
from shellgate.shell.catalog.build import from_stdin
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val
from shellgate.shell.catalog.read import add_program, split_words

#: ``cmake -E`` commands and what their operands are.
_E_RUN = frozenset({"env", "chdir", "time"})
_E_WRITE_LAST = frozenset({"copy", "copy_if_different", "copy_directory",
                           "copy_directory_if_different", "create_symlink", "create_hardlink",
                           "rename"})  # fmt: skip
_E_WRITE_ALL = frozenset({"make_directory", "touch", "touch_nocreate"})
_E_DELETE = frozenset({"remove", "rm", "remove_directory"})


def _cmake_e(name: str, words: Argv, out: Reading) -> None:
    """``cmake -E COMMAND ARGS…``."""
    if not words:
        return
    command, args = words[0], words[1:]
    label = f"{name} -E {command} payload"
    if command == "env":
        assignments: list[tuple[str, str]] = []
        rest = list(args)
        while rest and (rest[0].startswith("--") or "=" in rest[0].split("/", 1)[0]):
            word = rest.pop(0)
            if word == "--":
                break
            if word.startswith("--unset"):
                out.finding(f"'{name} -E env --unset' unsets a variable of its command")
            elif "=" in word:
                key, _, value = word.partition("=")
                assignments.append((key, value))
        if rest:
            add_program(out, label, rest, assignments)
    elif command == "chdir" and len(args) > 1:
        add_program(out, label, args[1:])
    elif command == "time" and args:
        add_program(out, label, args)
    elif command in _E_WRITE_LAST and len(args) > 1:
        out.writes.append(args[-1])
        if command == "create_symlink":
            out.links.append((args[-1], args[0], True))
        elif command == "rename":
            out.writes.append(args[0])
    elif command in _E_WRITE_ALL:
        out.writes.extend(a for a in args if not a.startswith("-"))
    elif command in _E_DELETE:
        out.deleted.extend(a for a in args if not a.startswith("-"))
    elif command == "tar" and args and "x" in args[0]:
        out.finding(f"'{name} -E tar x' extracts an archive (its members may land anywhere below)")


#: ``-D NAME=PROG`` settings naming a program cmake (or the build) runs.
_PROGRAM_SUFFIXES = ("_COMPILER", "_COMPILER_LAUNCHER", "_LINKER_LAUNCHER", "_LINKER")
_PROGRAM_NAMES = frozenset({"CMAKE_MAKE_PROGRAM", "CMAKE_AR", "CMAKE_RANLIB",
                            "CMAKE_OBJCOPY", "CMAKE_STRIP", "CMAKE_NM"})  # fmt: skip


def _cmake(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    e = next((h for h in parsed.hits if h.name == "-E"), None)
    if e is not None:
        _cmake_e(name, argv[e.at + 1 :], out)
        return
    for setting in parsed.values("-D"):
        key, eq, value = setting.partition("=")
        key = key.split(":", 1)[0]
        if eq and value and (key.endswith(_PROGRAM_SUFFIXES) or key in _PROGRAM_NAMES):
            add_program(out, f"{name} -D {key} program", split_words(value))
    for script in parsed.values("-P"):
        if from_stdin(script):
            out.finding(f"'{name} -P' runs a script read from stdin")


_CMAKE = Entry(
    ("cmake",),
    GNU,
    (
        val("-E", last=True),
        val("-C", finding="runs a cmake script first (it sets what the build runs)"),
        val("-P", last=True),
        val("-S"), val("-B"), val("-G"), val("-T"), val("-A"), val("-D"), val("-U"),
        val("--build", chdir=True), val("--install", chdir=True), val("--preset"),
        val("--toolchain"), val("--target -t"), val("-j --parallel"), val("--config"),
        val("--graphviz", writes=True), val("--log-level"), val("--prefix"),
        val("--component"), val("--trace-redirect", writes=True), val("--fresh"),
        flag("--verbose -v", inert=True), flag("--clean-first"), flag("-N"),
        flag("-L"), flag("-LA"), flag("-LH"), flag("--trace"), flag("-Wdev"),
    ),
    hooks=(_cmake,),
    reports=True,
)


def _ninja(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    if any(from_stdin(path) for path in parsed.values("-f")):
        out.finding(f"'{name} -f' reads its build file from stdin (the commands it runs)")
    tools = parsed.values("-t")
    if "msvc" in tools and "--" in argv:
        add_program(out, f"{name} -t msvc payload", argv[argv.index("--") + 1 :])
    if "browse" in tools:
        out.finding(f"'{name} -t browse' starts a web server")


_NINJA = Entry(
    ("ninja", "samu"),
    GNU_PREFIX,
    (val("-f"), val("-C", chdir=True), val("-t", last=True), val("-j"), val("-k"), val("-l"),
     val("-d"), val("-w"), flag("-n"), flag("-v --verbose", inert=True), flag("--quiet")),
    hooks=(_ninja,),
    no_canonical=True,
    reports=True,
)

ENTRIES: tuple[Entry, ...] = (_CMAKE, _NINJA)
