"""Catalog family: build and developer tools policies allow by name.

An admin who allows ``make *``, ``cargo build *``, ``go test *``, ``tox *``,
``pytest *`` or ``kubectl get *`` allows the project's own build (or a read of
the cluster). Some options put *new* code in the command line instead: a
makefile in ``--eval`` or on stdin, a cargo ``--config`` runner, ``go test
-exec PROG`` (a program: its own segment), a tox ``--override`` of its
commands, a pytest plugin (``-p NAME``) or another ini file, a kubeconfig
whose exec credential plugin runs a program, ``mypy --install-types``. Files
they write through options (reports, profiles, ``-o``, target directories)
are write targets; pytest's ``--basetemp`` is emptied first (a deletion).

Option checks read past ``--`` (``Entry.through_double_dash``): it may be the
argument of the option before it (``make -o -- --eval=…``, ``kubectl get -L --
--kubeconfig=…``), and reading on only costs a question when it really ended
the options.
"""

from __future__ import annotations

import os
import re

from shellgate.shell.argv.engine import CLAP, GNU, GNU_PREFIX, NOPT, POSIX, Dialect, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Reading,
    Runs,
    aliases,
    flag,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.environment import is_sensitive_name
from shellgate.shell.catalog.read import add_program, in_repository, split_words

#: The go command reads flags up to the packages, but ``go test`` reads test
#: flags after them too (``go test ./... -run X``): read them everywhere.
GO_ANYWHERE = Dialect("go-anywhere", abbreviations=False, bundles=False, single_dash_long=True)

#: Makefile sources that are the command line itself, not a file in the project.
_STDIN_NAMES = re.compile(r"-|/dev/(stdin|fd/\d+)|/proc/(self|thread-self|\d+)/fd/\d+")
#: make variables that decide how every recipe line is run, or which makefiles
#: are read (MAKEFILES: extra makefiles, read even when set on the command line).
_MAKE_RUNNERS = frozenset({"SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKE", "MAKEFLAGS", "MFLAGS",
                           "GNUMAKEFLAGS", "MAKEFILES", "MAKEOVERRIDES"})  # fmt: skip
#: make variables naming a program its built-in rules (and most makefiles) run:
#: the value is a program of its own (``make CC=./evil``).
_MAKE_PROGRAMS = frozenset({"CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "PC", "RANLIB",
                            "STRIP", "OBJCOPY", "OBJDUMP", "NM", "LEX", "YACC", "M4",
                            "INSTALL", "PYTHON", "PERL", "RM", "CO", "GET", "MAKEINFO", "TEX",
                            "LINT", "HOSTCC", "CROSS_COMPILE"})  # fmt: skip
#: A command-line variable value that cannot become shell syntax in a recipe
#: (`CC='sh -c "…" x'` can: a blank, a quote, `$` or a backslash is enough).
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,/:+@%=~-]*")


def from_stdin(path: str) -> bool:
    """``-``, ``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``, in any lexical spelling."""
    if path.startswith("/"):
        path = "/" + os.path.normpath(path).lstrip("/")
    return _STDIN_NAMES.fullmatch(path) is not None


def _make(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Command-line variables that change how recipes run (or run at once: ``X!=cmd``).

    make exports command-line variables to every recipe's environment: a
    sensitive name (``PATH``, ``LD_PRELOAD``…) changes what recipes run; a
    program variable (``CC=PROG``) is a program of its own."""
    for word in parsed.words:
        name, eq, value = word.partition("=")
        bare = name.strip(" :+?!")
        runs = name.endswith("!") or bare in _MAKE_RUNNERS or is_sensitive_name(bare)
        if eq and (runs or not _PLAIN_VALUE.fullmatch(value)):
            out.finding(f"'{argv[0]} {word[:40]}' sets a variable that can change what recipes run")
        elif eq and bare in _MAKE_PROGRAMS and value:
            add_program(out, f"{argv[0]} {bare}= program", split_words(value))


# -- go ---------------------------------------------------------------------------

_EXTLD = re.compile(r"--?(?:extld|extar)(?:=(.*))?")
#: Tool flags (``-gcflags``, ``-ldflags``, ``-asmflags``, ``-gccgoflags``) whose
#: value is a file the compiler, assembler or linker writes.
_TOOL_WRITES = frozenset({"o", "cpuprofile", "memprofile", "blockprofile", "mutexprofile",
                          "trace", "traceprofile", "asmhdr", "linkobj", "bench", "tmpdir",
                          "benchmarkprofile"})  # fmt: skip
_TOOL_FLAG = re.compile(r"--?([A-Za-z][\w.-]*)(?:=(.*))?", re.DOTALL)
_GO_TOOL_FLAGS = ("-gcflags", "-ldflags", "-asmflags", "-gccgoflags")
#: Test flags whose value is a file (or directory) the test binary writes; go
#: test takes each as ``-NAME`` and as ``-test.NAME``.
_GO_TEST_WRITES = ("coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile",
                   "trace", "outputdir", "fuzzcachedir", "gocoverdir", "testlogfile")
_GO_TEST_VALUES = ("run", "skip", "bench", "benchtime", "count", "cpu", "list", "parallel",
                   "timeout", "shuffle", "fuzz", "fuzztime", "fuzzminimizetime",
                   "memprofilerate", "blockprofilerate", "mutexprofilefraction", "coverpkg",
                   "covermode")  # fmt: skip
#: Profiles the test binary writes relative to ``-outputdir`` (when it is given).
_GO_PROFILES = ("coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile",
                "trace")
_GCCGO = "hands flags to gcc (-B DIR runs programs from DIR, -fplugin= loads code)"


def _tool_words(flags: str) -> Argv:
    """The words of one ``-gcflags`` value, without its ``pattern=`` prefix."""
    head, eq, rest = flags.partition("=")
    if eq and not head.startswith("-") and " " not in head:
        flags = rest  # a package pattern before the flags
    return split_words(flags)


def _tool_flags(words: Argv) -> list[tuple[str, str | None, int]]:
    """``(name, glued value or None, index)`` of each flag word in a tool's flags."""
    found: list[tuple[str, str | None, int]] = []
    for i, word in enumerate(words):
        match = _TOOL_FLAG.fullmatch(word)
        if match is not None:
            found.append((match.group(1), match.group(2), i))
    return found


def _go_ldflags(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-ldflags='[pattern=]-extld=PROG'`` (or ``-extld PROG``, ``-extar``): the
    linker runs PROG; ``-extldflags`` hands flags to the external linker (gcc's
    ``-B DIR`` runs programs from DIR): a finding."""
    for flags in parsed.values("-ldflags"):
        words = _tool_words(flags)
        for i, word in enumerate(words):
            if re.fullmatch(r"--?extldflags(?:=.*)?", word, re.DOTALL):
                out.finding(f"'{argv[0]} -ldflags -extldflags' {_GCCGO}")
                continue
            match = _EXTLD.fullmatch(word)
            if match is None:
                continue
            program = match.group(1) if match.group(1) is not None else (
                words[i + 1] if i + 1 < len(words) else "")
            if program:
                add_program(out, f"{argv[0]} -ldflags -extld program", split_words(program))


def _go_paths(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Files the tools write through flags inside ``-gcflags``/``-ldflags``/…
    (``-cpuprofile=F``), profiles placed under ``-outputdir``, every relative
    write under ``-C DIR``; gccgo (``-gccgoflags``, ``-compiler=gccgo``) is a finding."""
    written: list[str] = []
    for flags in parsed.values(*_GO_TOOL_FLAGS):
        words = _tool_words(flags)
        for name, value, i in _tool_flags(words):
            if name == "json" and value and "," in value:
                value = value.split(",", 1)[1].removeprefix("file://")
            elif name not in _TOOL_WRITES:
                continue
            elif value is None:
                value = words[i + 1] if i + 1 < len(words) else ""
            if value:
                written.append(value)
    if parsed.values("-gccgoflags"):
        out.finding(f"'{argv[0]} -gccgoflags' {_GCCGO}")
    if any(v.strip() == "gccgo" for v in parsed.values("-compiler")):
        out.finding(f"'{argv[0]} -compiler=gccgo' builds with gcc, {_GCCGO}")
    own = [h.value for h in parsed.hits if h.opt is not None and h.opt.writes and h.value]
    profiles = [h.value for h in parsed.hits if h.value and h.opt is not None
                and h.opt.canonical.removeprefix("-").removeprefix("test.") in _GO_PROFILES]
    for outdir in parsed.values("-outputdir", "-test.outputdir"):
        written.extend(os.path.join(outdir, p) for p in profiles if not p.startswith("/"))
    # -modfile=F.mod: go also reads and writes F.sum beside it.
    written.extend(m[:-4] + ".sum" for m in parsed.values("-modfile") if m.endswith(".mod"))
    for chdir in parsed.values("-C"):
        written.extend(os.path.join(chdir, p) for p in [*own, *written] if not p.startswith("/"))
    out.outputs.extend(written)


_GO_FLAGS = (
    val("-exec", runs="words"),
    val("-toolexec", runs="words"),
    val("-vettool", runs="program"),
    *(val(f"-{name}", writes=True) for name in (
        "o", "pkgdir", "modfile", "debug-actiongraph", "debug-trace", "debug-runtime-trace")),
    *(val(f"-{name} -test.{name}", writes=True) for name in _GO_TEST_WRITES),
    *(val(f"-{name} -test.{name}") for name in _GO_TEST_VALUES),
    val("-C", chdir=True),
    *values("-p -asmflags -buildmode -buildvcs -compiler -gccgoflags -gcflags "
            "-installsuffix -ldflags -mod -overlay -pgo -tags"),
)  # fmt: skip
_GO_COMMAND = Entry(("go-command",), GO_ANYWHERE, _GO_FLAGS, hooks=(_go_ldflags, _go_paths),
                    through_double_dash=True, reports=True)
_GO_SUBCOMMANDS = ("test", "vet", "run", "list", "get", "clean", "generate",
                   "mod", "work", "tool", "env", "fmt", "doc", "fix", "version", "bug")
#: go build and go install stamp the binary with version-control information by
#: running git in the module's repository (-buildvcs): that repository is read.
_GO_BUILD = Entry(("go-build",), GO_ANYWHERE, _GO_FLAGS,
                  hooks=(_go_ldflags, _go_paths, in_repository),
                  through_double_dash=True, reports=True)


# -- python tools -----------------------------------------------------------------

def _ini_path(setting: str) -> str:
    """The path an ini override ``KEY=VALUE`` names ("" if its key names none)."""
    key, eq, value = setting.partition("=")
    return value if eq and any(part in key for part in ("file", "dir", "path")) else ""


#: ini keys whose override loads code: more options (``addopts=-p evil``),
#: plugins, files imported as tests, import paths, conftest.py reach, a
#: settings module (pytest-django); ``filterwarnings`` is read like ``-W``.
_PYTEST_CODE_KEYS = frozenset({"addopts", "pytest_plugins", "required_plugins", "python_files",
                               "pythonpath", "confcutdir", "django_settings_module"})


def _imports_category(spec: str) -> bool:
    """A warning filter ``action:message:category:module:lineno`` whose category
    has a module path (``evilmod.W``): Python imports that module to find it."""
    parts = spec.split(":")
    return len(parts) > 2 and "." in parts[2]


def _pytest(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``--debug[=FILE]`` (default pytestdebug.log), ``--cov-report=TYPE:PATH``,
    ``-o KEY=VALUE`` overrides whose key names a file or directory (written) or
    loads code (a finding), and warning filters that import a module."""
    if parsed.has("--debug"):
        out.outputs.extend([v for v in parsed.values("--debug") if v] or ["pytestdebug.log"])
    for report in parsed.values("--cov-report"):
        _, colon, path = report.partition(":")
        if colon and path:
            out.outputs.append(path)
    out.outputs.extend(p for p in map(_ini_path, parsed.values("-o")) if p)
    for setting in parsed.values("-o"):
        key, _, value = setting.partition("=")
        key = key.strip().lower()
        if key in _PYTEST_CODE_KEYS or (key == "filterwarnings" and _imports_category(value)):
            out.finding(f"'{argv[0]} -o {key}=' overrides an ini setting that loads code")
    for spec in parsed.values("-W"):
        if _imports_category(spec):
            out.finding(f"'{argv[0]} -W {spec[:40]}' imports the module of a warning category")


def _mypy(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """argparse reads more arguments from any ``@FILE`` word: options not seen here."""
    del parsed
    for word in argv[1:]:
        if word.startswith("@"):
            out.finding(f"'{argv[0]} {word[:30]}' reads more arguments from a file")
            return


_MYPY_REPORTS = ("--junit-xml", "--cache-dir", "--html-report", "--txt-report",
                 "--xml-report", "--linecount-report", "--linecoverage-report",
                 "--lineprecision-report", "--any-exprs-report", "--cobertura-xml-report",
                 "--memory-xml-report", "--xslt-html-report", "--xslt-txt-report",
                 "--status-file", "--log-file")  # fmt: skip
_NPM_SCRIPTS = "changes what npm scripts run"
_NPM_PACKAGE = "installs a package whose programs run (first on PATH)"

_NPM_OPTIONS = (
    val("--script-shell", runs="program", finding=_NPM_SCRIPTS),
    *(val(name, finding=_NPM_SCRIPTS)
      for name in ("--node-options", "--userconfig", "--globalconfig")),
    # -c is npm's short spelling of --call (nopt shorthands).
    val("-c --call", runs="shell"),
    # Flags that are prefixes of value options: declared, so `--global`
    # is not read as `--globalconfig=NEXT`.
    *(flag(name) for name in ("--global", "--save", "--silent", "--force")),
    *(val(name, writes=True) for name in ("--cache", "--logs-dir", "--prefix")),
    *values("--registry --workspace --tag --loglevel --otp --scope --omit "
            "--include --access --before --location"),
)  # fmt: skip
def _npm_call(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-cCMD`` glued: nopt reads it as ``--call CMD`` too; every such word is a
    shell string (a payload only adds checks)."""
    del parsed
    for word in argv[1:]:
        if word.startswith("-c") and len(word) > 2 and word[2] != "=":
            out.payloads.append(("npm -c", word[2:]))


#: ``npm exec``/``npm x``/``npx``: the first operand (or what follows ``--``)
#: is a program npm runs (from the project's bins, a package, or PATH).
_NPM_EXEC = Entry(("npx",), Dialect("nopt-prefix", permute=False, any_dashes=True),
                  (*_NPM_OPTIONS, val("-p --package", finding=_NPM_PACKAGE)), runs=Runs(via=True),
                  hooks=(_npm_call,),
                  through_double_dash=True, reports=True)
_NPM_CONFIG_READS = frozenset({"get", "list", "ls"})


def _npm_config(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``npm config set|edit|delete|fix``: its config names programs npm runs
    (script-shell, node-options, shell, editor, git, browser, onload-script…)."""
    verb = parsed.words[0] if parsed.words else ""
    if verb not in _NPM_CONFIG_READS:
        out.finding(f"'npm {argv[0]} {verb[:20]}' {_NPM_CONFIG}")


_NPM_CONFIG = "changes npm's configuration (it names programs npm runs)"
_NPM_CONFIG_ENTRY = Entry(("npm-config",), NOPT, _NPM_OPTIONS, hooks=(_npm_config,),
                          through_double_dash=True, reports=True)
_NPM_SET = Entry(("npm-set",), NOPT, _NPM_OPTIONS, finding=_NPM_CONFIG,
                 through_double_dash=True, reports=True)
#: npm takes a command's unique prefix too (`npm exe`, `npm conf`).
_NPM_SUBCOMMANDS = {**dict.fromkeys(("exec", "exe", "x"), _NPM_EXEC),
                    **dict.fromkeys(("config", "confi", "conf", "con", "c"), _NPM_CONFIG_ENTRY),
                    "set": _NPM_SET}  # fmt: skip

#: pip's general options: the subcommand follows (`pip -q install x`); options
#: that change nothing a rule cares about are inert, so rules meet `pip install`.
#: Every subcommand takes them too (`pip list --log=F`): it reads them again.
_PIP_OPTIONS = (
    *(flag(name, inert=True) for name in (
        "-v --verbose", "-q --quiet", "--isolated", "--no-cache-dir", "--no-color",
        "--no-input", "--disable-pip-version-check", "--require-virtualenv",
        "--no-python-version-warning")),
    *(val(name, inert=True) for name in (
        "--proxy", "--retries", "--timeout", "--exists-action", "--trusted-host",
        "--cert", "--client-cert", "--cache-dir", "--use-feature", "--use-deprecated")),
    val("--log --log-file", writes=True),
    val("--python", runs="program"),
    # `pip config edit --editor CMD` runs CMD through the shell on the config file.
    val("--editor", runs="shell"),
    *(val(name, finding="chooses where packages come from (an index or links of its "
          "choosing)") for name in ("-i --index-url", "--extra-index-url", "-f --find-links")),
)  # fmt: skip
_PIP_COMMAND = Entry(("pip-command",), GNU, _PIP_OPTIONS)


def _pip_config(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``pip config set|unset|edit``: pip's configuration names its index and editor."""
    verb = parsed.words[0] if parsed.words else ""
    if verb not in ("get", "list", "debug", ""):
        out.finding(f"'pip {argv[0]} {verb[:20]}' changes pip's configuration (its index, "
                    "its editor)")


_PIP_CONFIG = Entry(("pip-config",), GNU, _PIP_OPTIONS, hooks=(_pip_config,))
_PIP_SUBCOMMANDS = ("install", "download", "uninstall", "freeze", "inspect", "list", "show",
                    "check", "config", "search", "cache", "index", "wheel", "hash",
                    "completion", "debug", "help", "lock")  # fmt: skip
_PIP = Entry(("pip", "pip3"), GNU_PREFIX, _PIP_OPTIONS, canonical_name="pip",
             subcommands={**dict.fromkeys(_PIP_SUBCOMMANDS, _PIP_COMMAND),
                          "config": _PIP_CONFIG})
PATTERNS = ((r"pip\d+(?:\.\d+)*", _PIP),)

ENTRIES: tuple[Entry, ...] = (
    _PIP,
    Entry(
        ("make", "gmake"),
        options=(
            val("-E --eval", finding="runs a makefile given on the command line"),
            val("-f --file --makefile", finding="reads its makefile from stdin", when=from_stdin),
            val("-C --directory", chdir=True), val("-I --include-dir"),
            val("-o --old-file --assume-old"),
            val("-W --what-if --new-file --assume-new"), val("--jobserver-style"),
            optional("-j --jobs"), optional("-l --load-average --max-load"),
            optional("-O --output-sync"), optional("--debug"), optional("--shuffle"),
            flag("-s --silent --quiet", inert=True),
        ),
        hooks=(_make,),
        through_double_dash=True, reports=True),
    Entry(
        ("cargo",),
        CLAP,
        options=(
            val("--config", finding="can set a runner, linker or rustc wrapper that runs programs"),
            val("-Z", finding="turns on unstable behaviour that changes what cargo builds or runs"),
            val("--manifest-path", finding="reads its manifest from stdin", when=from_stdin),
            *(val(name, writes=True)
              for name in ("--target-dir", "--artifact-dir", "--out-dir", "--lockfile-path")),
            *aliases("-p --package, --bin, --example, --test, --bench, -F --features, "
                     "--target, -j --jobs, --profile, --color, --message-format, --exclude, -C, "
                     "--registry, --index, --git, --branch, --tag, --rev, --path, --root, "
                     "--version"),
            flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
        ),
        through_double_dash=True, reports=True),
    Entry(("go",), POSIX, subcommands={**dict.fromkeys(_GO_SUBCOMMANDS, _GO_COMMAND),
                                       "build": _GO_BUILD, "install": _GO_BUILD},
          reports=True),
    Entry(
        ("kubectl",),
        CLAP,
        options=(
            val("--kubeconfig",
                finding="names a kubeconfig whose exec credential plugin runs a program"),
            *(val(name, finding="changes where its credentials go") for name in (
                "-s --server", "--token", "--as", "--as-group", "--as-uid")),
            flag("--insecure-skip-tls-verify", finding="changes where its credentials go"),
            val("--profile-output", writes=True), val("--profile"),
            val("--www", finding="serves a directory over HTTP (kubectl proxy: an upload)"),
            *aliases("--context, --cluster, --user, -n --namespace, --certificate-authority, "
                     "--client-certificate, --client-key, --request-timeout, "
                     "--tls-server-name, --cache-dir, -v, -o --output, -l --selector, -L "
                     "--label-columns, -f --filename, --field-selector, --sort-by, --template, "
                     "-c --container, --since, --tail, --chunk-size"),
        ),
        through_double_dash=True, reports=True),
    Entry(
        ("tox",),
        options=(
            val("-x --override", finding="overrides its configuration (what it runs)"),
            val("-c --conf", finding="reads another configuration (what it runs)"),
            *(val(name, writes=True)
              for name in ("--result-json", "--workdir", "--root", "--installpkg")),
            *aliases("-e, -m, -f, --hashseed, --runner, --colored, --exit-and-dump-after, -i "
                     "--index-url, --discover"),
            optional("-p --parallel"),
            flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
        ),
        through_double_dash=True, reports=True),
    Entry(
        ("mypy", "dmypy"),
        options=(
            flag("--install-types", finding="installs (and so runs) packages"),
            val("--python-executable", runs="program"),
            val("--config-file", finding="reads another configuration (its plugins run)"),
            *(val(name, writes=True) for name in _MYPY_REPORTS),
            *aliases("-m --module, -p --package, -c --command, --python-version, --platform, "
                     "--exclude, --follow-imports, --always-true, --always-false, "
                     "--disable-error-code, --enable-error-code, --custom-typeshed-dir, "
                     "--custom-typing-module, --junit-format, --soft-error-limit, "
                     "--find-occurrences, --timeout"),
            val("--shadow-file", takes=2),
        ),
        hooks=(_mypy,),
        through_double_dash=True, reports=True),
    Entry(
        ("pytest", "py.test"),
        options=(
            val("-p", finding="loads a plugin", when=lambda name: not name.startswith("no:")),
            val("-c --config-file --inifile", finding="reads another ini file (plugins, options)"),
            val("--basetemp", deletes=True),
            val("--junitxml --junit-xml", writes=True),
            *(val(name, writes=True) for name in (
                "--result-log", "--resultlog", "--log-file", "--html", "--json-report-file",
                "--report-log")),
            optional("--debug"), val("--cov-report"), val("-o --override-ini"),
            val("--pdbcls", finding="imports a debugger class"),
            val("--cov-config", finding="reads another coverage configuration (its plugins run)"),
            *(val(name, finding="changes which conftest.py files load")
              for name in ("--rootdir", "--confcutdir")),
            flag("--pyargs", finding="imports packages by name"),
            val("--pastebin", finding="uploads test output to a pastebin service (an upload)"),
            *aliases("-k, -m, -r, --tb, --deselect, --ignore, --ignore-glob, --maxfail, "
                     "--durations, --durations-min, -W --pythonwarnings, --import-mode, "
                     "--capture, --log-level, --log-format, --log-date-format, "
                     "--log-cli-level, --log-cli-format, --log-file-level, --log-file-format, "
                     "--cov, --cov-fail-under, -n --numprocesses, --dist, "
                     "--junit-prefix, --timeout, --reruns, "
                     "--random-order-seed, --color"),
            flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
        ),
        hooks=(_pytest,),
        through_double_dash=True, reports=True),
    Entry(
        ("ruff",),
        CLAP,
        options=(
            val("-o --output-file", writes=True), val("--cache-dir", writes=True),
            flag("-e --exit-zero"),
            *values("--select --ignore --extend-select --extend-ignore --config "
                    "--target-version --line-length --output-format --exclude "
                    "--extend-exclude --per-file-ignores --extend-per-file-ignores --fixable "
                    "--unfixable --extend-fixable --stdin-filename --dummy-variable-rgx "
                    "--range"),
        ),
        through_double_dash=True, reports=True),
    Entry(("npm",), NOPT, _NPM_OPTIONS, subcommands=_NPM_SUBCOMMANDS,
          through_double_dash=True, reports=True),
    _NPM_EXEC,
)  # fmt: skip
