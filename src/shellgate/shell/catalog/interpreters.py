"""Catalog family: shells, language interpreters, and the awk and sed languages.

A shell's ``-c`` string is parsed as commands (each decided on its own); one
reading its script from stdin is a finding and gets the bare form ``(name,)``
that policies deny (``curl … | sh``). An interpreter running code given on its
command line (``python -c``, ``perl -e``, ``node --eval``…) or read from stdin
is a finding: that code is not shell, so no rule can read it. A script operand
is not: rules may match the script by name. ``python -m TOOL`` is read as
``TOOL`` by the tool's own entry. awk and sed, whose programs are small
languages of their own, have their entries in :mod:`.scripts`.

Versioned names (``python3.12``, ``perl5.36``, ``lua5.4``) come through ``PATTERNS``.
"""

from __future__ import annotations

import re
import shlex

from shellgate.shell.argv.engine import CLAP, GNU_PREFIX, POSIX, Parsed
from shellgate.shell.argv.spellings import SHELL_NAMES
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Hook,
    Reading,
    flag,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.read import read
from shellgate.shell.catalog.scripts import AWK, SED, in_place

#: Shells: ``-c`` payloads are parsed, and one reading its script from stdin gets
#: the bare form ``(name,)`` (policies/default denies each name on that form).
SHELLS = SHELL_NAMES
INLINE = "runs inline code"
_STDIN_CODE = "reads code from stdin"
_VERSION_FLAGS = frozenset({"--version", "-V", "--help", "-h", "-v"})
#: Script operands that are the program's own stdin (paths as ``canonical_path``
#: spells them: ``//dev/stdin`` and ``/proc/self/root/dev/stdin`` are forms too).
_STDIN_FILE = re.compile(
    r"-|/dev/stdin|/dev/fd/0|/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/0"
)
#: A ``-c`` payload using these runs the words after it (``bash -c '"$@"' x rm …``).
_POSITIONAL = re.compile(r"\$(?:[@*1-9]|\{[@*1-9#!])")


def shell_invocation(form: Argv) -> tuple[str | None, bool]:
    """For a shell form: (the ``-c`` payload or None, reads commands from stdin).

    Read by hand, not by the option engine: ``+O``/``+o`` options take a value too.
    """
    i, n = 1, len(form)
    inline = stdin = False
    while i < n:
        word = form[i]
        if word in ("-", "--"):
            i += 1
            stdin = word == "-"
            break
        if word.startswith("--"):
            i += 2 if word in ("--rcfile", "--init-file") else 1
            continue
        if len(word) > 1 and word[0] in "-+":
            letters = word[1:]
            inline |= word[0] == "-" and "c" in letters
            stdin |= "s" in letters
            i += 2 if ("o" in letters or "O" in letters) else 1
            continue
        break
    if inline:
        return (form[i] if i < n else None), False
    if i < n and _STDIN_FILE.fullmatch(form[i]):
        return None, True
    if set(form[1:]) & {"--version", "--help"}:
        return None, False
    return None, stdin or i >= n


def _shell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    name = argv[0]
    payload, stdin = shell_invocation(argv)
    if payload is not None:
        out.payloads.append(("-c payload", payload))
        if _POSITIONAL.search(payload):
            # $0 is the word after the payload; "$@" runs the ones after that.
            at = len(argv) - 1 - argv[::-1].index(payload)
            if at + 2 < len(argv):
                out.finding(f"'{name} -c' runs its positional arguments")
                out.payloads.append(("-c arguments", shlex.join(argv[at + 2 :])))
    elif stdin:
        out.finding(f"'{name}' reads commands from stdin")
        out.stdin_shell = True
        out.forms.append((name,))


def _stdin_code(*code: str) -> Hook:
    """A finding when none of the ``code`` options is given and the script is stdin."""

    def hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
        if parsed.has(*code) or set(argv[1:]) & _VERSION_FLAGS:
            return
        if not parsed.words or _STDIN_FILE.fullmatch(parsed.words[0]):
            out.finding(f"'{argv[0]}' {_STDIN_CODE}")

    return hook


def _module(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``python -m TOOL ARGS`` is ``TOOL ARGS``, read by TOOL's own entry."""
    module = next((h.value for h in parsed.hits if h.name == "-m" and h.value), None)
    if module is None:
        return
    sub = (module, *argv[parsed.end :])
    found = read(sub)
    if found is None:
        return
    for text in found.findings:
        out.finding(text)
    out.payloads.extend(found.payloads)
    out.programs.extend(found.programs)
    out.guesses.extend(found.guesses)
    out.forms.extend(found.forms)
    out.writes.extend(found.writes)
    out.outputs.extend(found.outputs)
    out.deleted.extend(found.deleted)
    out.stdin_shell |= found.stdin_shell


def _code_in_use_line(value: str) -> bool:
    """``-M'POSIX; system q(id)'``: perl puts the value in ``use …;``, code and all."""
    return re.fullmatch(r"-?[\w:]+(?:=[\w,:./-]*)?", value) is None


def _data_url(value: str) -> bool:
    return value.startswith("data:")


_PYTHON = Entry(
    ("python",),
    POSIX,
    canonical_name="python",  # python3, python3.12, pypy3: one name to rules
    options=(
        val("-c", last=True, finding=INLINE),
        val("-m", last=True),
        *values("-W -X -Q --check-hash-based-pycs"),
    ),
    hooks=(_module, _stdin_code("-c", "-m")),
)
_PERL = Entry(
    ("perl",),
    POSIX,
    options=(
        val("-e", finding=INLINE),
        val("-E", finding=INLINE),
        val("-I"),
        optional("-M", finding="puts code in a 'use' line", when=_code_in_use_line),
        optional("-m", finding="puts code in a 'use' line", when=_code_in_use_line),
        optional("-d", finding="runs the debugger (it runs the commands it reads)"),
        *(optional(name) for name in ("-i", "-x", "-C", "-D", "-F")),
    ),
    writes=in_place("-e", "-E"),
    hooks=(_stdin_code("-e", "-E"),),
)
_RUBY = Entry(
    ("ruby",),
    POSIX,
    options=(
        val("-e", finding=INLINE),
        *values(
            "-I -r -C -E --encoding --enable --disable --external-encoding "
            "--internal-encoding --dump"
        ),
        *(optional(name) for name in ("-i", "-x", "-F", "-0", "-W", "-T", "-K")),
    ),
    writes=in_place("-e"),
    hooks=(_stdin_code("-e"),),
)
_NODE = Entry(
    ("node", "nodejs", "bun"),
    POSIX,
    options=(
        val("-e --eval", finding=INLINE),
        flag("-p --print", finding=INLINE),
        flag("-i --interactive", finding=_STDIN_CODE),
        val("--import", finding=INLINE, when=_data_url),
        val("--loader --experimental-loader", finding=INLINE, when=_data_url),
        *values(
            "-r --require -C --conditions --input-type --title --env-file "
            "--redirect-warnings --icu-data-dir --openssl-config --stack-trace-limit"
        ),
    ),
    hooks=(_stdin_code("-e", "-p"),),
)
_PHP = Entry(
    ("php",),
    POSIX,
    options=(
        val("-r --run", finding=INLINE),
        val("-B --process-begin", finding=INLINE),
        val("-R --process-code", finding=INLINE),
        val("-E --process-end", finding=INLINE),
        val("-F --process-file"),
        val("-f --file", last=True),
        val("-d --define", finding="sets a php.ini entry (auto_prepend_file loads code)"),
        val("-c --php-ini", finding="reads another php.ini (it can load code)"),
        val("-z --zend-extension", finding="loads a Zend extension"),
        val("-S --server", finding="serves the directory over HTTP, running its PHP files"),
        flag("-a --interactive", finding=_STDIN_CODE),
        *values("-t --docroot --rf --rc --re --rz --ri"),
    ),
    hooks=(_stdin_code("-r", "-B", "-R", "-E", "-F", "-f"),),
)
_LUA = Entry(
    ("lua", "luajit"),
    POSIX,
    options=(
        val("-e", finding=INLINE),
        val("-l"),
        flag("-i", finding=_STDIN_CODE),
        val("-j", finding="runs a LuaJIT control module (it can write files)"),
        val("-b", last=True, finding="saves bytecode (writes its output file)"),
        optional("-O"),
    ),
    hooks=(_stdin_code("-e", "-b"),),
)
_INLINE_E = Entry(
    ("Rscript", "osascript"),
    POSIX,
    options=(val("-e", finding=INLINE), *values("-l -s --default-packages")),
    hooks=(_stdin_code("-e"),),
)
_EXPECT = Entry(
    ("expect",),
    POSIX,
    options=(val("-c", finding=INLINE), *values("-f -b -D")),
    hooks=(_stdin_code("-c", "-f", "-b"),),
)
#: No inline code option: only their stdin (an interactive prompt) is a finding.
_PROMPTING = Entry(
    ("tclsh", "wish", "irb", "jshell"),
    POSIX,
    options=values("-encoding -r -I --class-path --module-path --startup"),
    hooks=(_stdin_code(),),
)

_PS_CODE = ("command", "commandwithargs", "encodedcommand")
_PS_VALUES = ("file", "executionpolicy", "workingdirectory", "inputformat", "outputformat",
              "configurationname", "configurationfile", "settingsfile", "windowstyle",
              "custompipename", "version", "psconsolefile")  # fmt: skip
_PS_ALIASES = {"c": "command", "e": "encodedcommand", "ec": "encodedcommand", "f": "file",
               "ep": "executionpolicy", "ex": "executionpolicy", "wd": "workingdirectory",
               "cwa": "commandwithargs", "if": "inputformat", "of": "outputformat",
               "w": "windowstyle", "v": "version"}  # fmt: skip


def _ps_names(word: str) -> list[str]:
    """The parameters a PowerShell switch spells (case-insensitive, any unique
    prefix, ``-``, ``--`` or ``/``; a prefix of several is read as each)."""
    name = word.lstrip("-/").split(":", 1)[0].lower()
    if not name:
        return []
    if name in _PS_ALIASES:
        return [_PS_ALIASES[name]]
    return [full for full in (*_PS_CODE, *_PS_VALUES) if full.startswith(name)]


def _powershell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-Command``/``-EncodedCommand`` in any spelling; Windows PowerShell also runs
    a bare operand as a command (pwsh runs it as a script file)."""
    del parsed
    name, i, script = argv[0], 1, False
    operands: list[str] = []
    while i < len(argv):
        word = argv[i]
        i += 1
        switch = word[:1] == "-" or (word[:1] == "/" and "/" not in word[1:])
        if not switch or len(word) < 2:
            operands.append(word)
            continue
        names = _ps_names(word)
        if set(names) & set(_PS_CODE):
            out.finding(f"'{name} {word}' {INLINE}")
            return
        script |= "file" in names
        if set(names) & set(_PS_VALUES) and ":" not in word:
            i += 1
    windows = name.lower().startswith("powershell")
    if operands and windows and not script:
        out.finding(f"'{name} {operands[0][:30]}' {INLINE} (its default is -Command)")
    elif not operands and not script:
        out.finding(f"'{name}' {_STDIN_CODE}")


def _deno_eval(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del argv, parsed
    out.finding(f"'deno eval' {INLINE}")


def _sql_shell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``sqlite3 DB SQL``, ``psql -c SQL``, or either reading SQL from stdin: SQL
    shells run programs (sqlite3 ``.shell``/``.system`` and ``load_extension``, psql
    ``\\!``, mysql ``system``), so their SQL is code no rule can read."""
    if set(argv[1:]) & _VERSION_FLAGS:
        return
    out.finding(f"'{argv[0]}' runs SQL, and SQL shells run programs (.shell, \\!, system)")


ENTRIES: tuple[Entry, ...] = (
    Entry(
        tuple(sorted(SHELLS)),
        GNU_PREFIX,
        options=(
            flag("-c"),
            flag("-s"),
            *values("-o -O --rcfile --init-file"),
            val("--command", runs="shell"),  # fish
            val("--init-command", runs="shell"),  # fish
        ),
        hooks=(_shell,),
    ),
    _NODE,
    _INLINE_E,
    _EXPECT,
    _PROMPTING,
    Entry(("pwsh", "powershell", "pwsh.exe", "powershell.exe"), hooks=(_powershell,),
          no_canonical=True, canonical_drops_options=True),
    Entry(("deno",), POSIX, (val("-L --log-level"),), subcommands={
        "eval": Entry(("eval",), CLAP, hooks=(_deno_eval,)),
        "repl": Entry(("repl",), CLAP, (val("--eval", finding=INLINE),
                                        val("--eval-file", finding="runs code from files first"))),
    }),
    Entry(("sqlite3", "psql", "mysql", "mariadb", "duckdb"), hooks=(_sql_shell,),
          no_canonical=True, canonical_drops_options=True),
    AWK,
    SED,
)  # fmt: skip

PATTERNS: tuple[tuple[str, Entry], ...] = (
    (r"python[\d.]*|pypy[\d.]*", _PYTHON),
    (r"perl[\d.]*", _PERL),
    (r"ruby[\d.]*|jruby", _RUBY),
    (r"php[\d.]*", _PHP),
    (r"lua[\d.]*|luajit", _LUA),
    (r"tclsh[\d.]*|wish[\d.]*", _PROMPTING),
)
