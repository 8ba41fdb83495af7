"""Catalog family: bash builtins that run strings, define names, or set variables.

``eval``, ``trap``, ``alias`` values and ``mapfile -C`` callbacks are shell
strings: parsed as commands (deny rules see them) and a finding. Builtins that
assign a variable (``printf -v``, ``read``, ``mapfile``) must not set one that
changes what later commands do (``PATH``, ``IFS``…), and a name or an integer
operand with an array subscript (``a[$(cmd)]``) runs the subscript's
substitutions: see :mod:`.environment`. The same holds for names they set or
remove (``getopts``, ``wait -p``, ``unset``). ``set`` and ``shopt`` options
outside a harmless list change how later words are read (``set -k``) and are a
finding.

Builtins read options like bash's internal getopt: up to the first operand, no
long options (``POSIX``).
"""

from __future__ import annotations

from shellgate.shell.argv.engine import POSIX, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Hook, Reading, flag, val, values
from shellgate.shell.catalog.environment import check_subscript, check_variable_name

_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})

#: ``set`` options that change nothing a later command runs, reads or is read as
#: (errexit, xtrace, noglob…). Others (``-k`` keyword: later ``NAME=value``
#: operands become assignments; ``-P`` physical; ``-p`` privileged; ``posix``;
#: ``histexpand``) are a finding.
_SET_LETTERS = frozenset("abefhmnuvxBCET")
_SET_NAMES = frozenset(
    {"allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall",
     "history", "ignoreeof", "interactive-comments", "monitor", "noclobber", "noexec",
     "noglob", "notify", "nounset", "pipefail", "verbose", "vi", "xtrace"}
)  # fmt: skip
#: ``shopt`` options that change only globbing results, history or job control
#: (``extglob`` changes how later lines parse, ``expand_aliases`` runs aliases,
#: ``dotglob`` lets ``*`` match dot files, ``sourcepath``, ``execfail``… are findings).
_SHOPT_NAMES = frozenset(
    {"checkjobs", "checkwinsize", "cmdhist", "failglob", "globstar", "histappend",
     "huponexit", "inherit_errexit", "lastpipe", "lithist", "nocaseglob", "nocasematch",
     "nullglob"}
)  # fmt: skip


def _eval(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    if argv[1:]:
        out.payloads.append(("eval payload", " ".join(argv[1:])))


def _alias(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    for word in argv[1:]:
        if "=" in word:
            out.payloads.append(("alias value", word.partition("=")[2]))


def _trap(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    args = argv[1:]
    if args[:1] == ("--",):
        args = args[1:]
    if args and not args[0].startswith("-"):
        out.payloads.append(("trap payload", args[0]))


def _fc(argv: Argv, parsed: Parsed, out: Reading) -> None:
    if not parsed.has("-l"):
        out.finding(f"'{argv[0]}' runs commands again from the history (edited or not)")


def _bind(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``bind -x '"\\C-x": CMD'``: the command after the key sequence runs on the key."""
    for binding in parsed.values("-x"):
        command = binding.partition(":")[2].strip()
        if command:
            out.payloads.append((f"{argv[0]} -x command", command.strip("\"'")))


def _compgen(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for name in parsed.values("-V"):
        check_variable_name(name, f"{argv[0]} -V", out)


def _printf(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``printf -v NAME``: bash assigns NAME (and evaluates ``$(…)`` in a subscript)."""
    del argv
    for name in parsed.values("-v"):
        check_variable_name(name, "printf -v", out)


def _test(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``[[ -v 'a[$(cmd)]' ]]``, ``[[ X -eq Y ]]``: names and operands bash evaluates."""
    del parsed
    for i, word in enumerate(argv):
        if word == "-v" and i + 1 < len(argv):
            check_subscript(argv[i + 1], f"{argv[0]} -v", out)
        elif word in _ARITHMETIC_TESTS:
            for operand in (argv[i - 1], argv[i + 1] if i + 1 < len(argv) else ""):
                check_subscript(operand, f"{argv[0]} {word}", out)


def _read(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for name in [*parsed.words, *parsed.values("-a")]:
        check_variable_name(name, argv[0], out)


def _mapfile(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for name in parsed.words[:1]:
        check_variable_name(name, argv[0], out)


def _declare(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``declare -i x='a[$(cmd)]'``: an integer variable's value is arithmetic."""
    del parsed
    letters = "".join(w[1:] for w in argv[1:] if w.startswith("-") and "=" not in w)
    if "i" not in letters:
        return
    for word in argv[1:]:
        name, eq, value = word.partition("=")
        if eq:
            check_subscript(value, f"{argv[0]} -i {name}", out)


def _set_option(name: str, where: str, out: Reading) -> None:
    if name == "allexport" and "-" in where:
        out.finding(f"'{where} {name}' exports every later assignment to the commands")
    elif name not in _SET_NAMES:
        out.finding(f"'{where} {name[:40]}' changes how later commands are read or run")


def _set(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``set -euo pipefail`` is harmless; ``set -k``, ``set -o keyword``, ``set -P``…
    change what later words mean (bash's own option loop, ``-``/``+`` alike)."""
    del parsed
    words = argv[1:]
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-", "--") or word[:1] not in ("-", "+") or len(word) < 2:
            return  # the rest are positional parameters
        for letter in word[1:]:
            if letter == "o":
                i += 1
                if i < len(words):
                    _set_option(words[i], f"{argv[0]} {word[0]}o", out)
            elif letter == "a" and word[0] == "-":
                # A bare NAME=value is a shell variable no program sees; allexport
                # makes it every later command's environment.
                out.finding(f"'{argv[0]} -a' exports every later assignment to the commands")
            elif letter not in _SET_LETTERS:
                out.finding(f"'{argv[0]} {word[0]}{letter}' changes how later commands are "
                            "read or run")
        i += 1


def _shopt(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``shopt -s|-u NAME…``: a setting outside the harmless list is a finding;
    ``-o`` names are ``set -o`` names. Without ``-s``/``-u`` it only prints."""
    letters = "".join(w[1:] for w in argv[1:] if w.startswith("-") and w != "--")
    if not ({"s", "u"} & set(letters)):
        return
    for name in parsed.words:
        if "o" in letters:
            _set_option(name, f"{argv[0]} -o", out)
        elif name not in _SHOPT_NAMES:
            out.finding(f"'{argv[0]} {name[:40]}' changes how later commands are read or run")


def _unset(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``unset NAME``: unsetting ``PATH`` makes bash run ``./NAME``; ``a[$(cmd)]``
    is evaluated (a function name under ``-f`` is checked the same, conservatively)."""
    for name in parsed.words:
        check_variable_name(name, argv[0], out)


def _getopts(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``getopts OPTSTRING NAME [ARG…]`` assigns NAME (and OPTARG, OPTIND)."""
    for name in parsed.words[1:2]:
        check_variable_name(name, argv[0], out)


def _wait(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``wait -p NAME`` assigns the finished job's pid to NAME."""
    for name in parsed.values("-p"):
        check_variable_name(name, f"{argv[0]} -p", out)


def _history(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``history -s TEXT; history -w FILE`` writes text the command chose to FILE
    (``.envrc``, ``~/.bashrc``); ``-r``/``-n FILE`` read a file into the list,
    which ``history`` then prints."""
    if parsed.has("-w", "-a"):
        out.finding(f"'{argv[0]} -w/-a' writes the history list, which commands can set, "
                    "to a file")
        out.writes.extend(parsed.words[:1])
    if parsed.has("-r", "-n"):
        out.finding(f"'{argv[0]} -r/-n' reads a file into the history list")


def _literal(names: tuple[str, ...], *, finding: str = "", hooks: tuple[Hook, ...] = ()) -> Entry:
    """A builtin read as written: its canonical form is its argv (no options to respell)."""
    return Entry(names, POSIX, finding=finding, hooks=hooks, no_canonical=True,
                 canonical_drops_options=True)  # fmt: skip


def _source(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``source FILE ARGS`` / ``. FILE ARGS``: the file is the admin's trust, by name."""
    del parsed
    out.sourced = argv[1] if len(argv) > 1 else ""


def _cd(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``cd DIR``: the directory the next commands run in; a bare ``cd`` goes home."""
    del argv
    words = parsed.words
    out.chdir = words[0] if len(words) == 1 else ("~" if not words else "")


def _pushd(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``pushd DIR`` moves there; ``pushd`` alone or ``+N``/``-N`` rotates the
    stack: where the shell is then is not known here."""
    del argv
    words = parsed.words
    plain = len(words) == 1 and not words[0].startswith(("+", "-"))
    out.chdir = words[0] if plain else ""


def _popd(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``popd`` goes to the directory on the stack: not known here."""
    del argv, parsed
    out.chdir = ""


_CD = (flag("-L"), flag("-P"), flag("-e"), flag("-@"))

ENTRIES: tuple[Entry, ...] = (
    Entry(("cd",), POSIX, _CD, hooks=(_cd,)),
    Entry(("pushd",), POSIX, (flag("-n"),), hooks=(_pushd,)),
    Entry(("popd",), POSIX, (flag("-n"),), hooks=(_popd,)),
    _literal(("eval",), finding="runs a string as a command", hooks=(_eval,)),
    _literal(("source", "."), hooks=(_source,)),
    _literal(("alias",), finding="defines a command name", hooks=(_alias,)),
    _literal(("trap",), finding="runs a string as a command later", hooks=(_trap,)),
    _literal(("let",), finding="evaluates arithmetic (array subscripts run commands)"),
    Entry(("enable",), POSIX, (
        val("-f", finding="loads a builtin from a shared library"),
        flag("-n", finding="disables a builtin (its name then runs a file)"),
    )),
    Entry(("fc",), POSIX, (val("-e", runs="program", when=lambda editor: editor != "-"),),
          hooks=(_fc,)),
    Entry(("bind",), POSIX, (
        val("-x", finding="binds a key to a shell command"),
        val("-f", finding="reads key bindings from a file (they can bind commands)"),
        *values("-m -q -u -r"),
    ), hooks=(_bind,)),
    Entry(("complete", "compgen"), POSIX, (
        val("-C", runs="shell", finding="runs a command to complete words"),
        val("-F", finding="runs a shell function to complete words"),
        val("-W", finding="expands a word list (its command substitutions run)"),
        *values("-A -G -P -S -X -o -V"),
    ), hooks=(_compgen,)),
    Entry(("hash",), POSIX, (val("-p", finding="changes which file a command name runs"),)),
    Entry(("printf",), POSIX, (val("-v"),), hooks=(_printf,)),
    _literal(("test", "[", "[["), hooks=(_test,)),
    Entry(("read",), POSIX, values("-a -d -i -n -N -p -t -u"), hooks=(_read,)),
    Entry(("mapfile", "readarray"), POSIX, (
        val("-C", runs="shell", finding="evaluates a callback command"),
        *values("-c -d -n -O -s -u"),
    ), hooks=(_mapfile,)),
    _literal(("declare", "typeset", "local"), hooks=(_declare,)),
    _literal(("set",), hooks=(_set,)),
    Entry(("shopt",), POSIX, (flag("-p"), flag("-q"), flag("-s"), flag("-u"), flag("-o")),
          hooks=(_shopt,)),
    Entry(("unset",), POSIX, (flag("-f"), flag("-v"), flag("-n")), hooks=(_unset,)),
    Entry(("getopts",), POSIX, (), hooks=(_getopts,)),
    Entry(("history",), POSIX, (
        flag("-c"), val("-d"), flag("-a"), flag("-n"), flag("-r"), flag("-w"), flag("-p"),
        flag("-s"),
    ), hooks=(_history,)),
    Entry(("wait",), POSIX, (flag("-f"), flag("-n"), val("-p")), hooks=(_wait,)),
)  # fmt: skip
