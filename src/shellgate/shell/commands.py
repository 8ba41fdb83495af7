"""What particular commands do that static reading cannot prove harmless.

Each check looks at one normalised form (after wrappers were peeled) and returns
findings plus shell strings to parse recursively. The lists are judgement calls
documented in ``docs/analysis.md``; erring towards a finding only costs a
question to a person, missing one can cost an auto-allowed command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from shellgate.shell.options import Grammar, has, scan_all, values
from shellgate.shell.tools import TOOLS

Argv = tuple[str, ...]

#: Shells: ``-c`` payloads are parsed, and one reading its script from stdin gets
#: the bare form ``(name,)`` (policies/default denies each name on that form).
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish",
     "csh", "tcsh", "ksh93", "rksh", "lksh", "oksh", "loksh", "pdksh", "rzsh"}
)  # fmt: skip

#: Environment variables whose assignment cannot change what a command runs.
SAFE_ASSIGNMENTS = frozenset(
    {"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC",
     "LC_TIME", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS",
     "LINES", "TERM", "CI", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
     "RUST_BACKTRACE", "RUST_LOG", "DEBIAN_FRONTEND", "GIT_TERMINAL_PROMPT"}
)  # fmt: skip

_VERSION_FLAGS = frozenset({"--version", "-V", "--help", "-h", "-v"})
#: Script operands that are the shell's own stdin (paths as ``canonical_path``
#: spells them: ``//dev/stdin`` and ``/proc/self/root/dev/stdin`` are forms too).
_STDIN_FILE = re.compile(
    r"-|/dev/stdin|/dev/fd/0|/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/0"
)
#: A ``-c`` payload using these runs the words after it (``bash -c '"$@"' x rm …``).
_POSITIONAL = re.compile(r"\$(?:[@*1-9]|\{[@*1-9#!])")


@dataclass(frozen=True)
class _Interp:
    inline: str = ""  # short letters that take inline code (-c, -e)
    inline_long: frozenset[str] = frozenset()
    arg_letters: str = ""  # short letters taking an argument
    operand_letters: str = ""  # letters whose argument is the program (python -m)


_INTERPRETERS: list[tuple[re.Pattern[str], _Interp]] = [
    (re.compile(r"python[\d.]*|pypy[\d.]*"), _Interp("c", arg_letters="WXQ", operand_letters="m")),
    (re.compile(r"perl[\d.]*"), _Interp("eE")),
    (re.compile(r"ruby[\d.]*|jruby"), _Interp("e", arg_letters="IrC")),
    (re.compile(r"node|nodejs|bun"), _Interp("ep", frozenset({"--eval", "--print"}), "r")),
    (re.compile(r"php[\d.]*"), _Interp("rBRE", arg_letters="dcz", operand_letters="f")),
    (re.compile(r"lua[\d.]*|luajit"), _Interp("e", arg_letters="l")),
    (re.compile(r"Rscript|osascript|expect"), _Interp("ec")),
    (re.compile(r"tclsh[\d.]*|wish[\d.]*|irb|jshell"), _Interp()),
]
_PYTHON = _INTERPRETERS[0][0]
_ANY_INTERPRETER = re.compile("|".join(f"(?:{p.pattern})" for p, _ in _INTERPRETERS))
_BUILTIN_NAMES = frozenset(
    {"eval", "source", ".", "alias", "trap", "let", "enable", "fc", "bind", "complete",
     "compgen", "mapfile", "readarray", "hash", "deno"}
)  # fmt: skip
_POWERSHELL = frozenset({"pwsh", "powershell", "powershell.exe", "pwsh.exe"})
_PS_INLINE = frozenset({"-c", "-command", "-e", "-ec", "-encodedcommand"})
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_AWK_RISK = re.compile(r"system\s*\(|\||getline|>|@load|@include|ENVIRON|PROCINFO")
_SEDS = frozenset({"sed", "gsed"})
_SED_ADDR = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)"
_SED_RISK = re.compile(
    rf"(?:^|[;\n{{}}])\s*(?:{_SED_ADDR}(?:\s*,\s*{_SED_ADDR})?)?\s*!?\s*[ewWrR](?:\s|$|;)"
    r"|s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImM0-9]*[ewW]"
)


@dataclass
class Reading:
    findings: list[str] = field(default_factory=list)
    payloads: list[tuple[str, str]] = field(default_factory=list)  # (context label, source)
    stdin_shell: bool = False  # a shell reading its commands from stdin
    #: Extra forms: ``(name,)`` for a shell reading stdin, so a rule on the bare
    #: shell name (``sh``: "curl … | sh") matches ``sh -x``, ``bash /dev/stdin``…
    forms: list[Argv] = field(default_factory=list)


def shell_invocation(form: Argv) -> tuple[str | None, bool]:
    """For a shell form: (the ``-c`` payload or None, reads commands from stdin)."""
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


def _interpreter(form: Argv, spec: _Interp, out: Reading) -> None:
    name, n = form[0], len(form)
    i = 1
    while i < n:
        word = form[i]
        if word == "-" or (word == "--" and i + 1 >= n):
            break
        if word == "--" or not word.startswith("-"):
            return  # a script operand: the file decides, rules may match it by name
        if word.startswith("--"):
            if word.partition("=")[0] in spec.inline_long:
                out.findings.append(f"'{name}' runs inline code ({word.partition('=')[0]})")
                return
            i += 1
            continue
        for j, letter in enumerate(word[1:], start=1):
            if letter in spec.inline:
                out.findings.append(f"'{name}' runs inline code (-{letter})")
                return
            if letter in spec.operand_letters:
                return
            if letter in spec.arg_letters:
                i += 0 if j + 1 < len(word) else 1
                break
        i += 1
    if not set(form[1:]) & _VERSION_FLAGS:
        out.findings.append(f"'{name}' reads code from stdin")


def _powershell(form: Argv, out: Reading) -> None:
    lowered = {word.lower() for word in form[1:]}
    if lowered & _PS_INLINE:
        out.findings.append(f"'{form[0]}' runs inline code (-Command)")
    elif not any(not word.startswith("-") for word in form[1:]):
        out.findings.append(f"'{form[0]}' reads code from stdin")


def _awk(form: Argv, out: Reading) -> None:
    options, operands = scan_all(
        form,
        Grammar(
            "Ffvei", frozenset({"--file", "--assign", "--field-separator", "--source", "--include"})
        ),
    )
    if has(options, "-f", "--file", "-i", "--include"):
        out.findings.append(f"'{form[0]}' runs a program read from a file")
    programs = values(options, "-e", "--source") or operands[:1]
    for program in programs:
        if _AWK_RISK.search(program):
            out.findings.append(
                f"'{form[0]}' program can run commands or write files (system, pipes, >)"
            )


def _sed(form: Argv, out: Reading) -> None:
    options, operands = scan_all(
        form, Grammar("efl", frozenset({"--expression", "--file", "--line-length"}))
    )
    if has(options, "-f", "--file"):
        out.findings.append(f"'{form[0]}' runs a script read from a file")
    scripts = values(options, "-e", "--expression")
    if not scripts and not has(options, "-f", "--file"):
        scripts = operands[:1]
    for script in scripts:
        if _SED_RISK.search(script):
            out.findings.append(f"'{form[0]}' script can run commands or write files (e, w, r)")


def _builtin(form: Argv, out: Reading) -> None:
    name, args = form[0], form[1:]
    if name == "eval":
        out.findings.append("eval runs a string as a command")
        if args:
            out.payloads.append(("eval payload", " ".join(args)))
    elif name in ("source", "."):
        out.findings.append(f"'{name}' runs the commands of a file in this shell")
    elif name == "alias":
        out.findings.append("alias defines a command name")
        for word in args:
            if "=" in word:
                out.payloads.append(("alias value", word.partition("=")[2]))
    elif name == "trap":
        out.findings.append("trap runs a string as a command later")
        if args[:1] == ("--",):
            args = args[1:]
        if args and not args[0].startswith("-"):
            out.payloads.append(("trap payload", args[0]))
    elif name in ("let", "enable", "fc", "bind", "complete", "compgen", "mapfile", "readarray"):
        if name == "let" or any(a.startswith(("-C", "-x", "-f", "-F", "-e", "-s")) for a in args):
            out.findings.append(f"'{name}' can evaluate code or load it from a file")
    elif name == "hash" and any(a.startswith("-p") for a in args):
        out.findings.append("hash -p changes which file a command name runs")


def _module(form: Argv, out: Reading) -> None:
    """``python -m mypy …``: the module's own options, read by the catalog. What it
    would run is a finding here (this path cannot make it a segment of its own)."""
    from shellgate.shell import catalog

    module = catalog.read(form)
    if module is None:
        return
    out.findings.extend(module.findings)
    out.payloads.extend(module.payloads)
    out.findings.extend(
        f"'{form[0]}' runs a program ({' '.join(p.argv)[:40]}, {p.label})" for p in module.programs
    )


def read_form(form: Argv, out: Reading) -> None:
    """Add the findings and payloads of one normalised form to ``out``."""
    if not form:
        return
    name = form[0]
    tool = TOOLS.get(name)
    if tool is not None:
        tool(form, out)
        return
    if len(form) > 2 and form[1] == "-m" and _PYTHON.fullmatch(name):
        _module(form[2:], out)
    if name not in _INTERESTING and _ANY_INTERPRETER.fullmatch(name) is None:
        return  # the common case: a command with no inline code to find
    if name in SHELLS:
        payload, stdin = shell_invocation(form)
        if payload is not None:
            out.payloads.append(("-c payload", payload))
            if _POSITIONAL.search(payload):
                # $0 is the word after the payload; "$@" runs the ones after that.
                at = len(form) - 1 - form[::-1].index(payload)
                if at + 2 < len(form):
                    out.findings.append(f"'{name} -c' runs its positional arguments")
                    out.payloads.append(("-c arguments", shlex.join(form[at + 2 :])))
        elif stdin:
            out.findings.append(f"'{name}' reads commands from stdin")
            out.stdin_shell = True
            out.forms.append((name,))
        return
    for pattern, spec in _INTERPRETERS:
        if pattern.fullmatch(name):
            _interpreter(form, spec, out)
            return
    if name in _POWERSHELL:
        _powershell(form, out)
    elif name in _AWKS:
        _awk(form, out)
    elif name in _SEDS:
        _sed(form, out)
    elif name == "deno" and form[1:2] == ("eval",):
        out.findings.append("'deno eval' runs inline code")
    else:
        _builtin(form, out)


def read_forms(forms: Sequence[Argv]) -> Reading:
    out = Reading()
    for form in forms:
        read_form(form, out)
    return out


_INTERESTING = SHELLS | _BUILTIN_NAMES | _POWERSHELL | _AWKS | _SEDS
