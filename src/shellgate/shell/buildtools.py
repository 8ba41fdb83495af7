"""Build and developer tools that policies allow by name, and their options that
run code the policy never saw.

An admin who allows ``make *``, ``cargo build *``, ``go test *``, ``tox *`` or
``kubectl get *`` allows the project's own build (or a read of the cluster).
Some options put *new* code in the command line instead: a makefile in
``--eval`` or on stdin, a cargo ``--config`` runner or rustc wrapper, ``go test
-exec PROG``, a tox ``--override`` of its commands, a kubeconfig (from stdin or
any file) whose exec credential plugin runs a program, ``mypy --install-types``
(pip installs, and so runs, packages). Each is a finding, so the allow rule
cannot auto-allow it. Writes these tools make (``--output`` files, pytest's
``--basetemp``, which it also empties) are in ``writes.py``.

Option checks do not stop at ``--``: it may be the argument of the option before
it (``make -o -- --eval=…``, ``kubectl get -L -- --kubeconfig=…``), and reading
on only costs a question when it really ended the options.
Option grammars follow each tool's parser: GNU getopt_long and Python's argparse
accept unambiguous prefixes of long options (``--ev`` is make's ``--eval``),
clap (cargo, ruff) does not; Go's flag package takes ``-flag`` or ``--flag``,
with ``=value`` or the next word.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Protocol

from shellgate.shell.options import abbreviates

Argv = tuple[str, ...]


class Out(Protocol):
    findings: list[str]
    payloads: list[tuple[str, str]]


#: Makefile sources that are the command line itself, not a file in the project.
_STDIN_NAMES = re.compile(r"-|/dev/(stdin|fd/\d+)|/proc/(self|thread-self|\d+)/fd/\d+")
#: make variables that decide how every recipe line is run, or which makefiles
#: are read (MAKEFILES: extra makefiles, read even when set on the command line).
_MAKE_RUNNERS = frozenset({"SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKE", "MAKEFLAGS", "MFLAGS",
                           "GNUMAKEFLAGS", "MAKEFILES", "MAKEOVERRIDES"})  # fmt: skip
#: A command-line variable value that cannot become shell syntax in a recipe
#: (`CC='sh -c "…" x'` can: a blank, a quote, `$` or a backslash is enough).
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,/:+@%=~-]*")


def _value(form: Argv, i: int) -> str:
    """The argument of the option at ``form[i]``: glued after ``=`` or the next word."""
    word = form[i]
    if "=" in word:
        return word.partition("=")[2]
    return form[i + 1] if i + 1 < len(form) else ""


def _makefile_option(word: str) -> bool:
    return abbreviates(word, "--file", 3) or abbreviates(word, "--makefile", 4)


def _from_stdin(path: str) -> bool:
    """``-``, ``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``, in any lexical spelling."""
    if path.startswith("/"):
        path = "/" + os.path.normpath(path).lstrip("/")
    return _STDIN_NAMES.fullmatch(path) is not None


def _make(form: Argv, out: Out) -> None:
    for i, word in enumerate(form[1:], start=1):
        if word.startswith("--"):
            if abbreviates(word, "--eval", 4):
                out.findings.append(f"'{form[0]} --eval' runs a makefile given on the command line")
            elif _makefile_option(word) and _from_stdin(_value(form, i)):
                out.findings.append(f"'{form[0]} {word[:20]}' reads its makefile from stdin")
            continue
        if word.startswith("-") and len(word) > 1:
            letters = word[1:]
            for j, letter in enumerate(letters):
                rest = letters[j + 1 :] or (form[i + 1] if i + 1 < len(form) else "")
                if letter == "E":
                    out.findings.append(f"'{form[0]} -E' runs a makefile given on the command line")
                elif letter == "f" and _from_stdin(rest):
                    out.findings.append(f"'{form[0]} -f {rest}' reads its makefile from stdin")
                if letter in "CEfIloOWj":  # options taking an argument end the bundle
                    break
            continue
        name, eq, value = word.partition("=")
        # `X!=cmd` runs cmd through the shell right away, whatever cmd is.
        runs = name.endswith("!") or name.strip(" :+?!") in _MAKE_RUNNERS
        if eq and (runs or not _PLAIN_VALUE.fullmatch(value)):
            out.findings.append(
                f"'{form[0]} {word[:40]}' sets a variable that can change what recipes run"
            )


def _cargo(form: Argv, out: Out) -> None:
    for word in form[1:]:
        if word == "--config" or word.startswith("--config="):
            out.findings.append(
                f"'{form[0]} --config' can set a runner, linker or rustc wrapper that runs programs"
            )
            return
        if word.startswith(("-Z", "--manifest-path=/dev/")):
            out.findings.append(f"'{form[0]} {word[:30]}' changes what cargo builds or runs")
            return


_GO_RUNNERS = ("exec", "toolexec", "vettool")


def _go(form: Argv, out: Out) -> None:
    for word in form[2:]:
        name = word.lstrip("-").partition("=")[0]
        if word.startswith("-") and name in _GO_RUNNERS:
            out.findings.append(f"'{form[0]} {form[1]} -{name}' runs a program of its choosing")
            return


def _kubectl(form: Argv, out: Out) -> None:
    for word in form[1:]:
        name = word.partition("=")[0]
        if name == "--kubeconfig":
            out.findings.append(
                f"'{form[0]} --kubeconfig': a kubeconfig's exec credential plugin runs a program"
            )
            return
        if name in ("--server", "-s", "--insecure-skip-tls-verify", "--token", "--as"):
            # Another API server gets the current context's credentials.
            out.findings.append(f"'{form[0]} {name}' changes where its credentials go")
            return


def _tox(form: Argv, out: Out) -> None:
    for word in form[1:]:
        if word[:1] == "-" and word[1:2] != "-" and "x" in word:  # -x, -rx, -xKEY=V
            out.findings.append(f"'{form[0]} -x' overrides its configuration (what it runs)")
            return
        if word.startswith("--") and abbreviates(word, "--override", 5):
            out.findings.append(f"'{form[0]} --override' overrides the commands it runs")
            return


def _mypy(form: Argv, out: Out) -> None:
    for word in form[1:]:
        if word.startswith("--") and abbreviates(word, "--install-types", 5):
            out.findings.append(f"'{form[0]} --install-types' installs (and so runs) packages")
            return
        if word.startswith("--") and abbreviates(word, "--python-executable", 5):
            out.findings.append(f"'{form[0]} --python-executable' runs that program")
            return
        if word.startswith("@"):  # arguments read from a file: unseen options
            out.findings.append(f"'{form[0]} {word[:30]}' reads more arguments from a file")
            return


_NPM_RUNNERS = ("--script-shell", "--node-options", "--userconfig", "--globalconfig")


def _npm(form: Argv, out: Out) -> None:
    for word in form[1:]:
        # nopt strips any number of leading dashes and takes any unambiguous
        # prefix: -script-shell, ---node-opt are --script-shell, --node-options.
        name = "--" + word.partition("=")[0].lstrip("-")
        known = len(name) >= 5 and any(full.startswith(name) for full in _NPM_RUNNERS)
        if word.startswith("-") and known:
            out.findings.append(f"'{form[0]} {name}' changes what npm scripts run")
            return


TOOLS: dict[str, Callable[[Argv, Out], None]] = {
    "make": _make,
    "gmake": _make,
    "cargo": _cargo,
    "go": _go,
    "kubectl": _kubectl,
    "tox": _tox,
    "mypy": _mypy,
    "dmypy": _mypy,
    "npm": _npm,
}


# -- files they write through an option ------------------------------------------

_GIT_GLOBAL_ARGS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                              "--exec-path", "--config-env", "--super-prefix"})  # fmt: skip


def _git_outputs(form: Argv) -> tuple[list[str], list[str]]:
    """``git log/show/diff --output=F``, ``format-patch -o D``, ``archive -o F``,
    ``bundle create F``; relative ones under ``git -C DIR``."""
    base = ""
    i, n = 1, len(form)
    while i < n and form[i].startswith("-"):  # global options before the subcommand
        word = form[i]
        if word in _GIT_GLOBAL_ARGS:
            if word == "-C" and i + 1 < n:
                base = _join(base, form[i + 1])
            i += 2
        else:
            i += 1
    sub = form[i] if i < n else ""
    out: list[str] = []
    words = form[i + 1 :]
    for j, word in enumerate(words):
        name = word.partition("=")[0]
        if name.startswith("--output-indicator"):
            continue
        if len(name) >= 5 and any(o.startswith(name) for o in ("--output", "--output-directory")):
            out.append(_value(words, j))
        elif word == "-o" and sub in ("format-patch", "archive") and j + 1 < len(words):
            out.append(words[j + 1])
        elif word.startswith("-o") and len(word) > 2 and sub in ("format-patch", "archive"):
            out.append(word[2:])
    if sub == "bundle" and words[:1] == ("create",) and len(words) > 1:
        out.append(words[1])
    return [_join(base, t) for t in out if t], []


def _join(base: str, path: str) -> str:
    return path if not base or path.startswith(("/", "~")) else f"{base.rstrip('/')}/{path}"


_PYTEST_FILES = ("--junitxml", "--junit-xml", "--result-log", "--resultlog", "--log-file",
                 "--html", "--json-report-file", "--report-log", "--debug")  # fmt: skip


def _pytest_outputs(form: Argv) -> tuple[list[str], list[str]]:
    """Report and log files; ``--basetemp`` is emptied first, so it is a deletion."""
    files: list[str] = []
    wiped: list[str] = []
    for i, word in enumerate(form[1:], start=1):
        name = word.partition("=")[0]
        if word[:1] == "-" and word[1:2] != "-" and "o" in word:
            # -o KEY=VALUE (also -oKEY=V, -xo KEY=V): an ini override; a key that
            # names a file or directory (log_file, cache_dir…) is written.
            glued = word[word.index("o") + 1 :]
            files.extend(_ini_path(v) for v in (glued, form[i + 1] if i + 1 < len(form) else ""))
            continue
        if not word.startswith("--") or len(name) < 5:
            continue
        if "--basetemp".startswith(name):
            wiped.append(_value(form, i))
        elif name == "--debug":
            files.append(word.partition("=")[2] or "pytestdebug.log")
        elif any(full.startswith(name) for full in _PYTEST_FILES):
            files.append(_value(form, i))
        elif "--cov-report".startswith(name):
            _, colon, path = _value(form, i).partition(":")
            if colon:
                files.append(path)
        elif "--override-ini".startswith(name):
            files.append(_ini_path(_value(form, i)))
    return [f for f in files if f], [w for w in wiped if w]


def _ini_path(setting: str) -> str:
    """The path an ini override ``KEY=VALUE`` names ("" if its key names none)."""
    key, eq, value = setting.partition("=")
    return value if eq and any(part in key for part in ("file", "dir", "path")) else ""


_MYPY_REPORTS = ("--junit-xml", "--cache-dir", "--html-report", "--txt-report",
                 "--xml-report", "--linecount-report", "--linecoverage-report",
                 "--lineprecision-report", "--any-exprs-report", "--cobertura-xml-report",
                 "--memory-xml-report", "--xslt-html-report", "--xslt-txt-report")  # fmt: skip


def _mypy_outputs(form: Argv) -> tuple[list[str], list[str]]:
    out = []
    for i, word in enumerate(form[1:], start=1):
        name = word.partition("=")[0]
        known = len(name) >= 5 and any(r.startswith(name) for r in _MYPY_REPORTS)
        if known and word.startswith("--"):
            out.append(_value(form, i))
    return [o for o in out if o], []


def _ruff_outputs(form: Argv) -> tuple[list[str], list[str]]:
    out = []
    for i, word in enumerate(form[1:], start=1):
        name = word.partition("=")[0]
        if name in ("--output-file", "--cache-dir"):
            out.append(_value(form, i))
        elif word[:1] == "-" and word[1:2] != "-" and "o" in word:
            # clap bundles: -o FILE, -oFILE, -eo FILE (-e is --exit-zero).
            glued = word[word.index("o") + 1 :]
            out.append(glued or (form[i + 1] if i + 1 < len(form) else ""))
    return [o for o in out if o], []


_GO_FILES = frozenset({"o", "coverprofile", "cpuprofile", "memprofile", "blockprofile",
                       "mutexprofile", "trace", "outputdir", "pkgdir"})  # fmt: skip


def _go_outputs(form: Argv) -> tuple[list[str], list[str]]:
    out = []
    for i, word in enumerate(form[2:], start=2):
        name = word.lstrip("-").partition("=")[0]
        if word.startswith("-") and name in _GO_FILES:
            out.append(_value(form, i))
    return [o for o in out if o], []


#: Directories and files other build tools write through an option.
_DIR_OPTIONS = {
    "cargo": ("--target-dir", "--artifact-dir", "--out-dir", "--lockfile-path"),
    "tox": ("--result-json", "--workdir", "--root", "--installpkg"),
    "npm": ("--cache", "--logs-dir", "--prefix"),
}


def _dir_outputs(form: Argv) -> tuple[list[str], list[str]]:
    names = _DIR_OPTIONS.get(form[0], ())
    out = [_value(form, i) for i, w in enumerate(form) if w.partition("=")[0] in names]
    return [o for o in out if o], []


OUTPUTS: dict[str, Callable[[Argv], tuple[list[str], list[str]]]] = {
    "cargo": _dir_outputs,
    "tox": _dir_outputs,
    "npm": _dir_outputs,
    "git": _git_outputs,
    "pytest": _pytest_outputs,
    "py.test": _pytest_outputs,
    "mypy": _mypy_outputs,
    "dmypy": _mypy_outputs,
    "ruff": _ruff_outputs,
    "go": _go_outputs,
}


def output_operands(form: Argv) -> tuple[list[str], list[str]]:
    """(files ``form`` writes through an option, paths it empties or deletes).

    A tool run as ``python -m TOOL`` is read as ``TOOL``.
    """
    if len(form) > 2 and form[1] == "-m" and form[0].startswith(("python", "pypy")):
        form = form[2:]
    pick = OUTPUTS.get(form[0]) if form else None
    return pick(form) if pick is not None else ([], [])
