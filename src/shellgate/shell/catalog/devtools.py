"""Catalog family: developer tools with a way to run what nobody allowed.

* ``hg --config KEY=VALUE``: an ``alias.NAME=!CMD`` shell alias, a ``hooks.*``
  command, an ``extensions.*`` module, a program setting (``ui.editor``,
  ``ui.merge``, ``ui.ssh``, ``pager.pager``); ``hg serve`` serves the repository;
* ``gem open -e EDITOR`` and ``gem exec PROG``, ``bundle exec PROG``,
  ``cabal exec PROG`` (runners: the program is its own segment);
* ``fzf --bind 'KEY:execute(CMD)'`` (and ``become``, ``reload``, ``preview``…),
  ``--preview CMD``, ``--listen`` (takes actions over HTTP);
* ``task execute CMD`` (taskwarrior), ``code tunnel``/``serve-web`` (remote
  access to this machine), ``crontab FILE`` (jobs that run later);
* ``aws``: a ``file://``/``fileb://`` parameter value is a file it reads (a
  mention), ``--endpoint-url`` sends the request (and its signature) elsewhere,
  ``aws configure set`` changes its configuration (``credential_process`` runs
  a program).
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import CLAP, GNU, POSIX, Dialect, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, Runs, flag, optional, val, values
from shellgate.shell.catalog.read import in_repository
from shellgate.shell.catalog.runners import CLAP_PREFIX

# -- mercurial ------------------------------------------------------------------------

#: hg settings whose value is a program or a shell command it runs.
_HG_PROGRAMS = frozenset({"ui.editor", "ui.merge", "ui.ssh", "ui.remotecmd", "pager.pager",
                          "ui.askusername", "diff.external", "web.templates"})  # fmt: skip


def _hg(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    for setting in parsed.values("--config"):
        key, _, value = setting.partition("=")
        key = key.strip().lower()
        section = key.split(".", 1)[0]
        if section == "alias" and value.lstrip().startswith("!"):
            out.finding(f"'{name} --config {key}' defines a shell alias")
            out.payloads.append((f"{name} --config alias command", value.lstrip()[1:]))
        elif section == "hooks":
            out.finding(f"'{name} --config {key}' sets a hook (it runs on a repository event)")
            if not value.startswith("python:"):
                out.payloads.append((f"{name} --config hooks command", value))
        elif section == "extensions" or section.startswith("merge-tools") or section == "extdiff":
            out.finding(f"'{name} --config {key}' loads code or names a program it runs")
        elif key in _HG_PROGRAMS:
            out.payloads.append((f"{name} --config {key} command", value))
    if parsed.words[:1] == ["serve"]:
        out.finding(f"'{name} serve' serves the repository over HTTP")
    if parsed.has("--debugger"):
        out.finding(f"'{name} --debugger' starts the Python debugger (it runs what it reads)")


_HG = Entry(
    ("hg", "chg"),
    GNU,
    (val("--config"), val("-R --repository", chdir=True), val("--cwd", chdir=True),
     val("--encoding"), val("--encodingmode"), val("--color"), val("--pager"),
     flag("--debugger"), flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
     flag("-y --noninteractive"), flag("--traceback"), flag("--time"), flag("--profile")),
    hooks=(_hg,),
    no_canonical=True,
)

# -- fzf --------------------------------------------------------------------------------

#: fzf actions that run a command: ``execute(CMD)``, ``become:CMD``…
_FZF_ACTION = re.compile(
    r"(?:execute(?:-silent|-multi)?|become|reload(?:-sync)?|preview|change-preview|"
    r"transform(?:-\w+)?|print-query-then-execute)\s*(?:([(\[{<~!@#$%^&*;/|])|:)", re.IGNORECASE
)
_CLOSING = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _fzf_commands(binding: str) -> list[str]:
    """The commands of a ``--bind`` value (``enter:execute(vim {})+abort``)."""
    commands: list[str] = []
    for match in _FZF_ACTION.finditer(binding):
        opener = match.group(1)
        start = match.end()
        if opener is None:  # `action:CMD` runs to the end
            commands.append(binding[start:])
            continue
        end = binding.find(_CLOSING.get(opener, opener), start)
        commands.append(binding[start : end if end >= 0 else len(binding)])
    return commands


def _fzf(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    for binding in parsed.values("--bind"):
        for command in _fzf_commands(binding):
            out.payloads.append((f"{name} --bind command", command))
    for command in parsed.values("--preview"):
        out.payloads.append((f"{name} --preview command", command))
    if parsed.has("--listen", "--listen-unsafe"):
        out.finding(f"'{name} --listen' takes actions (commands) over HTTP")


_FZF = Entry(
    ("fzf", "sk"),
    GNU,
    (val("--bind"), val("--preview"), optional("--listen"), optional("--listen-unsafe"),
     val("--with-shell", finding="names the shell its commands run in"),
     *values("-q --query -f --filter -d --delimiter -n --nth --with-nth --height --layout "
             "--prompt --header --preview-window --color --tiebreak --expect -e --exact "
             "--history"), flag("-m --multi"), flag("-0 --exit-0"), flag("-1 --select-1")),
    hooks=(_fzf,),
    no_canonical=True,
)

# -- aws ------------------------------------------------------------------------------


def _aws(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    for word in argv[1:]:
        value = word.partition("=")[2] if word.startswith("--") and "=" in word else word
        for scheme in ("file://", "fileb://"):
            if value.startswith(scheme):
                out.mentions.append(value[len(scheme) :])
    if parsed.values("--endpoint-url"):
        out.finding(f"'{name} --endpoint-url' sends its request (signed with its credentials) "
                    "to a server of its choosing")
    if parsed.words[:2] in (["configure", "set"], ["configure", "import"]):
        out.finding(f"'{name} configure' changes its configuration (credential_process runs "
                    "a program)")


_AWS = Entry(("aws",), CLAP, (val("--endpoint-url"), *values(
    "--profile --region --output --query --cli-input-json --cli-input-yaml --ca-bundle "
    "--color --cli-read-timeout --cli-connect-timeout")), hooks=(_aws,), no_canonical=True)

# -- gem, bundle, cabal, task, code, crontab ------------------------------------------

_RUNNER = Entry(("exec",), CLAP_PREFIX, values("--gemfile --project-file --builddir"),
                runs=Runs(via=True))
_GEM = Entry(("gem",), POSIX, subcommands={
    "open": Entry(("open",), GNU, (val("-e --editor", runs="shell"), val("-v --version"))),
    "exec": _RUNNER,
    "build": Entry(("build",), GNU, values("-C -o --output --platform")),
})  # fmt: skip


def _task(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``task execute CMD``: taskwarrior runs CMD through the shell."""
    words = list(parsed.words)
    if "execute" in words:
        rest = words[words.index("execute") + 1 :]
        if rest:
            out.payloads.append((f"{argv[0]} execute command", " ".join(rest)))


def _crontab(argv: Argv, parsed: Parsed, out: Reading) -> None:
    if parsed.has("-l", "-r"):
        return
    out.finding(f"'{argv[0]}' installs jobs that run later (its file, stdin or an editor)")


ENTRIES: tuple[Entry, ...] = (
    _HG,
    _FZF,
    _AWS,
    _GEM,
    Entry(("bundle", "bundler"), POSIX, values("--gemfile"),
          subcommands={"exec": _RUNNER}),
    Entry(("cabal",), POSIX, values("--project-file --builddir"),
          subcommands={"exec": _RUNNER}),
    Entry(("task",), Dialect("task", permute=True, bundles=False), hooks=(_task,),
          no_canonical=True),
    Entry(("code", "code-insiders", "codium"), POSIX, values("--install-extension -r -g"),
          subcommands={verb: Entry((verb,), GNU, finding="opens this machine to remote "
                                   "access (a tunnel or a web server)")
                       for verb in ("tunnel", "serve-web")}),
    # pre-commit runs git (and the hooks its configuration names) in its repository.
    Entry(("pre-commit",), GNU, values("-c --config --color"), hooks=(in_repository,)),
    Entry(("tsc",), GNU, (*(val(name, writes=True) for name in (
        "--outFile --out", "--outDir", "--declarationDir", "--tsBuildInfoFile",
        "--generateTrace")), *values("-p --project --target -t --module -m --lib --jsx")),
        reports=True, no_canonical=True),
    Entry(("crontab",), GNU, (flag("-l"), flag("-r"), flag("-e"), flag("-i"), val("-u")),
          hooks=(_crontab,)),
)
