"""Which paths a command writes (or deletes), for the protected-paths layer.

``write_operands`` knows the operand grammar of common writing commands; the
walker adds output-redirection targets. ``resolve`` makes a target absolute
against the directory the shell will be in, lexically (``os.path.normpath``):
the file system is never consulted, so a symlink can still point elsewhere
(a documented limit; the sandbox is the backstop).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from shellgate.shell.options import Grammar, Option, has, scan_all, values

Argv = tuple[str, ...]

_REMOTE = re.compile(r"^[^/]*:")  # host:path (rsync, scp) is not a local write


def _g(short: str = "", long: str = "", flags: str = "") -> Grammar:
    """``long``: long options taking an argument; ``flags``: those without one
    that decide what is written (named so their abbreviations resolve)."""
    return Grammar(short, frozenset(long.split()), long_flags=frozenset(flags.split()))


def _rsync(options: list[Option], args: list[str]) -> list[str]:
    del options
    return [a for a in args[-1:] if len(args) >= 2 and not _REMOTE.match(a)]


def _url_name(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path.rsplit("/", 1)[-1] if "/" in path else ""


def _curl(options: list[Option], args: list[str]) -> list[str]:
    targets = values(options, "-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar",
                     "--trace", "--trace-ascii")  # fmt: skip
    if has(options, "-O", "--remote-name", "--remote-name-all"):
        base = (values(options, "--output-dir") or ["."])[0]
        targets += [os.path.join(base, name) for name in map(_url_name, args) if name]
    return targets


def _wget(options: list[Option], args: list[str]) -> list[str]:
    targets = values(options, "-O", "--output-document", "-o", "--output-file", "-a",
                     "--append-output")  # fmt: skip
    if not values(options, "-O", "--output-document"):
        base = (values(options, "-P", "--directory-prefix") or ["."])[0]
        targets += [os.path.join(base, name) for name in map(_url_name, args) if name]
    return targets


def _sed(options: list[Option], args: list[str]) -> list[str]:
    if not any(name in ("-i", "--in-place") for name, _ in options):
        return []
    scripted = has(options, "-e", "--expression", "-f", "--file")
    return args if scripted else args[1:]


def _tar(options: list[Option], args: list[str]) -> list[str]:
    names = {name for name, _ in options}
    if names & {"-c", "--create", "-r", "--append", "-u", "--update"}:
        return values(options, "-f", "--file")
    if "-x" in names or "--extract" in names or "--get" in names:
        return values(options, "-C", "--directory") or ["."]
    del args
    return []




_SED_GRAMMAR = _g("efl", "--expression --file --line-length", "--in-place")

WRITERS: dict[str, tuple[Grammar, Callable[[list[Option], list[str]], list[str]]]] = {
    "rsync": (_g("efBTM", "--exclude --include --filter --rsh --rsync-path --temp-dir "
                 "--exclude-from --include-from --files-from --partial-dir --compare-dest "
                 "--copy-dest --link-dest --backup-dir --suffix --chmod --log-file "
                 "--password-file --out-format --timeout --port --bwlimit --chown"), _rsync),
    "curl": (_g("oDcdHuAeXxrTKFEwmzY", "--output --dump-header --cookie-jar --trace "
                "--trace-ascii --output-dir --data --header --user --user-agent --referer "
                "--request --proxy --range --upload-file --config --form --cert --max-time",
                "--remote-name --remote-name-all"), _curl),
    "wget": (_g("OoaPeUt", "--output-document --output-file --append-output "
                "--directory-prefix --execute --user-agent --tries"), _wget),
    "sed": (_SED_GRAMMAR, _sed),
    "gsed": (_SED_GRAMMAR, _sed),
    "tar": (_g("fCbTXVNgKL", "--file --directory --exclude --files-from",
               "--create --extract --get --append --update"), _tar),
}  # fmt: skip


def write_operands(form: Argv) -> list[str]:
    """Operands ``form`` writes to, as written (relative paths not yet resolved)."""
    if not form:
        return []
    name = form[0]
    if name == "tar" and len(form) > 1 and not form[1].startswith("-"):
        # Old-style bundled letters (tar czf out.tgz dir): make them ordinary options.
        form = (name, "-" + form[1], *form[2:])
    writer = WRITERS.get(name)
    if writer is None:
        return []
    grammar, pick = writer
    # Both readings of every long option: as the abbreviation of a known one
    # (`cp --targ=D`) and as written (`rsync --partial` is no `--partial-dir`).
    options, operands = scan_all(form, grammar)
    targets = pick(options, operands)
    if any(word.startswith("--") for word in form[1:]):
        options, operands = scan_all(form, grammar, expand=False)
        targets += pick(options, operands)
    return [target for target in dict.fromkeys(targets) if target]


def resolve(path: str, cwd: str) -> str:
    """Absolute, lexically normalised ``path`` as seen from ``cwd``."""
    joined = path if path.startswith("/") else os.path.join(cwd, path)
    normal = os.path.normpath(joined)
    # POSIX lets "//x" differ from "/x"; no Linux path does, and rules expect one slash.
    return "/" + normal.lstrip("/")
