"""Catalog family: shells, language interpreters, and the awk and sed languages.

A shell's ``-c`` string is parsed as commands (each decided on its own); one
reading its script from stdin is a finding and gets the bare form ``(name,)``
that policies deny (``curl … | sh``). Code an interpreter runs itself — given
on its command line (``python -c``, ``perl -e``, ``node --eval``…), or read
from a stdin the analysis can see (``python - <<EOF``, ``cat <<EOF | node``) —
is covered by the allow of that invocation (``python *`` allows ``python -c
…``); it is read for what it visibly does beyond computing (starting programs,
the network, native code: :mod:`.inline_code`), each a finding, and for the
paths it names. Code from a stdin the analysis cannot see, and code in a
language it cannot read (PowerShell, AppleScript), are findings. A script
operand is not: rules may match the script by name. ``python -m TOOL`` is read
as ``TOOL`` by the tool's own entry. awk and sed, whose programs are small
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
from shellgate.shell.catalog.inline_code import read_code
from shellgate.shell.catalog.read import add_program
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


def _stdin_code(language: str | None, *code: str) -> Hook:
    """When none of the ``code`` options is given and the script is stdin, the code
    is what stdin holds: read when it is known (``Reading.stdin_code``); a finding
    for a language the analysis cannot read."""

    def hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
        if parsed.has(*code) or set(argv[1:]) & _VERSION_FLAGS:
            return
        if not parsed.words or _STDIN_FILE.fullmatch(parsed.words[0]):
            if language is None:
                out.finding(f"'{argv[0]}' {_STDIN_CODE}")
            else:
                out.stdin_code = language

    return hook


def _code(language: str | None, *options: str) -> Hook:
    """The code given with any of ``options`` is the program's own: read for what it
    visibly does and the paths it names (``None``: a language not read, a finding)."""

    def hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
        for hit in parsed.hits:
            if hit.name not in options or hit.value is None:
                continue
            label = f"'{argv[0]} {hit.spelled.partition('=')[0]}'"
            if language is None:
                out.finding(f"{label} {INLINE}")
                continue
            code = read_code(language, hit.value, label)
            for text in code.findings:
                out.finding(text)
            out.mentions.extend(code.mentions)

    return hook


def _module(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``python -m TOOL ARGS`` runs TOOL: a program of its own (``TOOL ARGS``,
    read by TOOL's entry), so ``pip install *`` meets ``python -m pip install``;
    an allow of ``python *`` does not cover it, one naming the module does
    (``python -m pytest *``, through ``Program.via``, or ``pytest *``)."""
    hit = next((h for h in parsed.hits if h.name == "-m" and h.value), None)
    if hit is None or hit.value is None:
        return
    sub = (hit.value, *argv[parsed.end :])
    # The module's own word, when it stands alone after -m (not glued: -mpytest).
    at = hit.at + 1 if argv[hit.at] == hit.spelled and hit.at + 1 < len(argv) else 0
    via = argv if at and argv[at] == hit.value else ()
    add_program(out, f"{argv[0]} -m module", sub, via=via, via_at=at if via else 0)


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
        val("-c", last=True),
        val("-m", last=True),
        *values("-W -X -Q --check-hash-based-pycs"),
    ),
    hooks=(_module, _code("python", "-c"), _stdin_code("python", "-c", "-m")),
)
_PERL = Entry(
    ("perl",),
    POSIX,
    options=(
        val("-e"),
        val("-E"),
        val("-I"),
        optional("-M", finding="puts code in a 'use' line", when=_code_in_use_line),
        optional("-m", finding="puts code in a 'use' line", when=_code_in_use_line),
        optional("-d", finding="runs the debugger (it runs the commands it reads)"),
        *(optional(name) for name in ("-i", "-x", "-C", "-D", "-F")),
    ),
    writes=in_place("-e", "-E"),
    hooks=(_code("perl", "-e", "-E"), _stdin_code("perl", "-e", "-E")),
)
_RUBY = Entry(
    ("ruby",),
    POSIX,
    options=(
        val("-e"),
        *values(
            "-I -r -C -E --encoding --enable --disable --external-encoding "
            "--internal-encoding --dump"
        ),
        *(optional(name) for name in ("-i", "-x", "-F", "-0", "-W", "-T", "-K")),
    ),
    writes=in_place("-e"),
    hooks=(_code("ruby", "-e"), _stdin_code("ruby", "-e")),
)
_NODE = Entry(
    ("node", "nodejs", "bun"),
    POSIX,
    options=(
        val("-e --eval"),
        val("-p --print"),
        flag("-i --interactive", finding=_STDIN_CODE),
        val("--import", finding=INLINE, when=_data_url),
        val("--loader --experimental-loader", finding=INLINE, when=_data_url),
        *values(
            "-r --require -C --conditions --input-type --title --env-file "
            "--redirect-warnings --icu-data-dir --openssl-config --stack-trace-limit"
        ),
    ),
    hooks=(_code("javascript", "-e", "-p"), _stdin_code("javascript", "-e", "-p")),
)
_PHP = Entry(
    ("php",),
    POSIX,
    options=(
        val("-r --run"),
        val("-B --process-begin"),
        val("-R --process-code"),
        val("-E --process-end"),
        val("-F --process-file"),
        val("-f --file", last=True),
        val("-d --define", finding="sets a php.ini entry (auto_prepend_file loads code)"),
        val("-c --php-ini", finding="reads another php.ini (it can load code)"),
        val("-z --zend-extension", finding="loads a Zend extension"),
        val("-S --server", finding="serves the directory over HTTP, running its PHP files"),
        flag("-a --interactive", finding=_STDIN_CODE),
        *values("-t --docroot --rf --rc --re --rz --ri"),
    ),
    hooks=(_code("php", "-r", "-B", "-R", "-E"),
           _stdin_code("php", "-r", "-B", "-R", "-E", "-F", "-f")),
)
_LUA = Entry(
    ("lua", "luajit"),
    POSIX,
    options=(
        val("-e"),
        val("-l"),
        flag("-i", finding=_STDIN_CODE),
        val("-j", finding="runs a LuaJIT control module (it can write files)"),
        val("-b", last=True, finding="saves bytecode (writes its output file)"),
        optional("-O"),
    ),
    hooks=(_code("lua", "-e"), _stdin_code("lua", "-e", "-b")),
)
_RSCRIPT = Entry(
    ("Rscript",),
    POSIX,
    options=(val("-e"), *values("-l -s --default-packages")),
    hooks=(_code("r", "-e"), _stdin_code("r", "-e")),
)
_OSASCRIPT = Entry(
    ("osascript",),
    POSIX,
    options=(val("-e"), *values("-l -s")),
    hooks=(_code(None, "-e"), _stdin_code(None, "-e")),
)
_EXPECT = Entry(
    ("expect",),
    POSIX,
    options=(val("-c"), *values("-f -b -D")),
    hooks=(_code("tcl", "-c"), _stdin_code("tcl", "-c", "-f", "-b")),
)
#: No inline code option: only their stdin (an interactive prompt) is a finding.
_PROMPTING = Entry(
    ("tclsh", "wish"),
    POSIX,
    options=values("-encoding"),
    hooks=(_stdin_code("tcl"),),
)
_IRB = Entry(("irb",), POSIX, options=values("-r -I"), hooks=(_stdin_code("ruby"),))
_JSHELL = Entry(
    ("jshell",), POSIX, options=values("--class-path --module-path --startup -R -J"),
    hooks=(_stdin_code(None),),
)  # fmt: skip

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
    """``deno eval CODE``: the code is its first operand."""
    code = read_code("javascript", parsed.words[0], "'deno eval'") if parsed.words else None
    if code is None:
        out.finding(f"'deno eval' {_STDIN_CODE}")
        return
    for text in code.findings:
        out.finding(text)
    out.mentions.extend(code.mentions)


#: Options of the SQL shells whose value is SQL they run.
_SQL_OPTIONS = frozenset({"-c", "--command", "-e", "--execute", "-cmd"})
#: Options that take a value (the database, the user …) rather than being flags.
_SQL_VALUES = frozenset({"-d", "--dbname", "-h", "--host", "-p", "--port", "-U", "--username",
                         "-u", "--user", "-D", "--database", "-f", "--file", "-init",
                         "-separator", "-nullvalue", "-newline", "-o", "--output", "-v",
                         "--set", "-L", "--log-file", "-P", "--pset", "-F", "-R",
                         "--defaults-file", "-S", "--socket"})  # fmt: skip


def _database_file(operand: str) -> str:
    """The file a sqlite3/duckdb database operand names (``file:PATH?mode=rw`` is
    PATH; ``:memory:`` and an empty name are none)."""
    if operand.startswith("file:"):
        operand = operand[len("file:") :].split("?", 1)[0].split("#", 1)[0]
        if operand.startswith("//"):  # file://HOST/PATH: the path after the authority
            operand = "/" + operand[2:].split("/", 1)[-1] if "/" in operand[2:] else ""
    return "" if operand in ("", ":memory:") else operand


def _sql_shell(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``sqlite3 DB SQL``, ``psql -c SQL``, ``mysql -e SQL``, or SQL from stdin:
    the SQL is the shell's own code, read for what runs programs, loads
    extensions or writes files (``.shell``, ``\\!``, ``COPY … PROGRAM``,
    ``.output``…, :mod:`.inline_code`), each a finding; plain SQL is covered by
    the allow of the shell (``sqlite3 -readonly db 'SELECT …'``)."""
    del parsed
    if set(argv[1:]) & _VERSION_FLAGS:
        return
    name, sqlite = argv[0], argv[0] in ("sqlite3", "duckdb")
    if sqlite:
        # sqlite3 takes every option with one dash or two (--readonly, --cmd SQL).
        argv = tuple(w[1:] if w.startswith("--") and len(w) > 2 else w for w in argv)
    sql: list[str] = []
    operands: list[str] = []
    script = False
    i = 1
    while i < len(argv):
        word = argv[i]
        flag_name, eq, glued = word.partition("=")
        if flag_name in _SQL_OPTIONS:
            value = glued if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            sql.append(value)
            i += 1 if eq else 2
            continue
        if flag_name in _SQL_VALUES:
            script |= flag_name in ("-f", "--file", "-init")
            i += 1 if eq else 2
            continue
        if not word.startswith("-"):
            operands.append(word)
        i += 1
    if script:
        out.finding(f"'{name}' runs SQL from a file the analysis cannot see (SQL shells "
                    "run programs: .shell, \\!, system)")
    safe = sqlite and "-safe" in argv  # no .shell, .system, .output, ATTACH, load_extension…
    if sqlite and operands and "-readonly" not in argv:
        database = _database_file(operands[0])
        if database:
            out.writes.append(database)  # SQL writes its database (UPDATE, CREATE…)
    if sqlite and len(operands) > 1:
        sql.extend(operands[1:])  # sqlite3 DB SQL…: each operand is SQL it runs
    for text in sql:
        code = read_code("sql", text, f"'{name}'")
        for finding in code.findings:
            out.finding(finding)
        out.mentions.extend(code.mentions)
    if not sql and not script and not (sqlite and len(operands) > 1) and not safe:
        out.stdin_code = "sql"


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
    _IRB,
    _JSHELL,
    _RSCRIPT,
    _OSASCRIPT,
    _EXPECT,
    _PROMPTING,
    Entry(("pwsh", "powershell", "pwsh.exe", "powershell.exe"), hooks=(_powershell,),
          no_canonical=True, canonical_drops_options=True),
    Entry(("deno",), POSIX, (val("-L --log-level"),), subcommands={
        "eval": Entry(("eval",), CLAP, hooks=(_deno_eval,)),
        "repl": Entry(("repl",), CLAP, (val("--eval"),
                                        val("--eval-file", finding="runs code from files first")),
                      hooks=(_code("javascript", "--eval"),)),
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

#: The hooks other families build their interpreters' entries with (``languages``).
code_option = _code
code_from_stdin = _stdin_code
