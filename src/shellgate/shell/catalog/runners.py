"""Catalog family: package runners (``uv run``, ``uvx``, ``yarn exec``, ``pnpm dlx``, ``bunx``…).

A runner runs a program it names: ``uv run pytest -q`` runs ``pytest -q``,
``pnpm exec eslint .`` runs ``eslint .``. That program is a segment of its own,
decided on its own, and it carries the runner's spelling (``Runs(via=True)``,
``Program.via``): an allow naming the program through the runner (``uv run
pytest *``, ``pnpm exec eslint *``) covers it, one naming the runner alone
(``uv *``, ``pnpm exec *``) does not: that one would allow every program.

Options that change where packages come from (``--index-url``, ``--find-links``,
a package to fetch and run first on ``PATH``: ``uvx --from``, ``pnpm dlx
--package``) or what environment the program gets (``--env-file``) are
findings. ``uv run x.py`` runs the script with Python: its program is ``python
x.py``.

``yarn NAME``/``pnpm NAME``/``yarn run NAME`` run a script of the project's
``package.json`` when one has that name, as ``npm test`` does: rules decide them
by name, and they are not read as runners.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import Dialect, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Program,
    Reading,
    Runs,
    flag,
    val,
    values,
)

#: clap with a trailing command: options stop at the first operand, no prefixes.
CLAP_PREFIX = Dialect("clap-prefix", permute=False, abbreviations=False)
#: yarn berry / pnpm (clipanion, their own parsers): the same shape.
JS_PREFIX = CLAP_PREFIX

_SOURCE = "chooses where packages come from (an index or links of its choosing)"
_PACKAGE = "fetches a package whose programs run (first on PATH)"
_ENV_FILE = "loads environment variables from a file (PATH, LD_PRELOAD…)"
_CONFIG = "reads another configuration (indexes, Python downloads, build settings)"

#: uv's options that choose package sources: the same on every subcommand.
_UV_SOURCES = (
    val("-i --index-url", finding=_SOURCE),
    val("--extra-index-url", finding=_SOURCE),
    val("--index", finding=_SOURCE),
    val("--default-index", finding=_SOURCE),
    val("-f --find-links", finding=_SOURCE),
    val("--allow-insecure-host --trusted-host", finding=_SOURCE),
    val("--keyring-provider", finding="runs a keyring program for index credentials"),
)
#: uv's global options (accepted before and after the subcommand).
_UV_GLOBAL = (
    *(flag(name, inert=True) for name in (
        "-q --quiet", "-v --verbose", "--no-progress", "--native-tls", "--offline",
        "-n --no-cache", "--no-config", "--preview", "--no-python-downloads", "--frozen",
        "--locked", "--no-sync", "--isolated", "--managed-python", "--no-managed-python")),
    val("--color", inert=True),
    val("--cache-dir", inert=True),
    val("--directory", chdir=True),
    val("--project", chdir=True),
    val("--config-file", finding=_CONFIG),
    val("--python-preference"),
    *_UV_SOURCES,
)  # fmt: skip
_UV_RUN_VALUES = values(
    "--extra --group --only-group --no-group --package -p --python --resolution "
    "--prerelease --exclude-newer --upgrade-package -P --reinstall-package --link-mode "
    "--python-platform --no-binary-package --no-build-package --refresh-package "
    "--index-strategy --config-setting -C --max-recursion-depth"
)
_UVX_OPTIONS = (
    *_UV_GLOBAL,
    *_UV_RUN_VALUES,
    val("--from", finding=_PACKAGE),
    val("--with", finding=_PACKAGE),
    val("--with-editable", finding=_PACKAGE),
    val("--with-requirements", finding=_PACKAGE),
    val("--env-file", finding=_ENV_FILE),
)
_UVX = Entry(("uvx",), CLAP_PREFIX, _UVX_OPTIONS, runs=Runs(via=True))
_UV_TOOL_RUN = Entry(("run",), CLAP_PREFIX, _UVX_OPTIONS, runs=Runs(via=True))
#: uv's other subcommands: they take the global options and the package sources.
_UV_COMMAND = Entry(("uv-command",), Dialect("clap"), (*_UV_GLOBAL, *_UV_RUN_VALUES))
_UV_SUBCOMMANDS = ("sync", "lock", "add", "remove", "export", "tree", "init", "build",
                   "publish", "venv", "cache", "self", "version", "python", "help", "format")
_UV_PIP = Entry(("pip",), CLAP_PREFIX, _UV_GLOBAL, subcommands=dict.fromkeys(
    ("install", "sync", "compile", "uninstall", "freeze", "list", "show", "tree", "check"),
    _UV_COMMAND))  # fmt: skip
_UV_TOOL = Entry(("tool",), CLAP_PREFIX, _UV_GLOBAL, subcommands={
    "run": _UV_TOOL_RUN,
    **dict.fromkeys(("install", "upgrade", "list", "uninstall", "update-shell", "dir"),
                    _UV_COMMAND),
})  # fmt: skip


def _python_script(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``uv run x.py ARGS`` (or ``--script x``) runs the script with Python: the
    program is ``python x.py ARGS``, spelled through the runner as written."""
    label = f"{argv[0]} payload"
    for at, found in enumerate(out.programs):
        if found.label == label and (found.argv[0].endswith((".py", ".pyw")) or parsed.has("-s")):
            out.programs[at] = Program(label, ("python", *found.argv), found.assignments,
                                       found.via, found.via_at)


_UV_RUN = Entry(
    ("run",),
    CLAP_PREFIX,
    (
        *_UV_GLOBAL,
        *_UV_RUN_VALUES,
        val("--with", finding=_PACKAGE),
        val("--with-editable", finding=_PACKAGE),
        val("--with-requirements", finding=_PACKAGE),
        val("--env-file", finding=_ENV_FILE),
        # `uv run -m MOD ARGS` runs module MOD, read as program MOD (as `python -m`).
        flag("-m --module"),
        flag("-s --script"),
    ),
    runs=Runs(via=True),
    hooks=(_python_script,),
)

# -- yarn, pnpm, bun, pipx, poetry --------------------------------------------------

_YARN_EXEC = Entry(("exec",), JS_PREFIX, values("--cwd"), runs=Runs(via=True))
_DLX_OPTIONS = (
    val("-p --package", finding=_PACKAGE),
    flag("-q --quiet", inert=True),
    flag("--silent", inert=True),
    flag("-c --shell-mode", finding="runs its command through a shell"),
    *values("--cwd"),
)
_DLX = Entry(("dlx",), JS_PREFIX, _DLX_OPTIONS, runs=Runs(via=True))
_PNPM_EXEC = Entry(
    ("exec",),
    JS_PREFIX,
    (
        flag("-c --shell-mode", finding="runs its command through a shell"),
        flag("-r --recursive"), flag("--parallel"), flag("--no-bail"),
        *values("--filter -F --workspace-concurrency --resume-from --report-summary"),
    ),
    runs=Runs(via=True),
)  # fmt: skip
_PNPM_DLX = Entry(("dlx",), JS_PREFIX, _DLX_OPTIONS, runs=Runs(via=True))
_JS_GLOBAL = (
    val("-C --dir --cwd", chdir=True),
    *values("--filter -F --registry --loglevel"),
    flag("-s --silent", inert=True),
)
_PIPX_RUN = Entry(
    ("run",),
    CLAP_PREFIX,
    (
        val("--spec", finding=_PACKAGE),
        val("--index-url -i", finding=_SOURCE),
        val("--pip-args", finding="hands pip arguments of its choosing (indexes, links)"),
        flag("--no-cache"), flag("--path"), flag("--pypackages"),
        val("--python"), val("--backend"),
        flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
    ),
    runs=Runs(via=True),
)  # fmt: skip
_POETRY_RUN = Entry(
    ("run",),
    CLAP_PREFIX,
    (val("-C --directory", chdir=True), val("-P --project", chdir=True),
     flag("-q --quiet", inert=True), flag("-v --verbose", inert=True), flag("--no-plugins")),
    runs=Runs(via=True),
)  # fmt: skip

ENTRIES: tuple[Entry, ...] = (
    Entry(("uv",), CLAP_PREFIX, _UV_GLOBAL, subcommands={
        "run": _UV_RUN, "tool": _UV_TOOL, "pip": _UV_PIP,
        **dict.fromkeys(_UV_SUBCOMMANDS, _UV_COMMAND),
    }),
    _UVX,
    Entry(("yarn",), JS_PREFIX, _JS_GLOBAL, subcommands={"exec": _YARN_EXEC, "dlx": _DLX}),
    Entry(("pnpm",), JS_PREFIX, _JS_GLOBAL, subcommands={"exec": _PNPM_EXEC, "dlx": _PNPM_DLX}),
    Entry(("pnpx", "bunx"), JS_PREFIX, _DLX_OPTIONS, runs=Runs(via=True)),
    Entry(("pipx",), CLAP_PREFIX, (flag("-q --quiet", inert=True),
                                   flag("-v --verbose", inert=True)),
          subcommands={"run": _PIPX_RUN}),
    Entry(("poetry",), CLAP_PREFIX, _POETRY_RUN.options, subcommands={"run": _POETRY_RUN}),
)  # fmt: skip
