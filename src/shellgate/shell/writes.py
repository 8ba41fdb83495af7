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

_MODE = re.compile(r"[0-7]{1,4}|[ugoa]*[-+=][rwxXstugo]*(,[ugoa]*[-+=][rwxXstugo]*)*")
_REMOTE = re.compile(r"^[^/]*:")  # host:path (rsync, scp) is not a local write


def _g(short: str = "", long: str = "", flags: str = "") -> Grammar:
    """``long``: long options taking an argument; ``flags``: those without one
    that decide what is written (named so their abbreviations resolve)."""
    return Grammar(short, frozenset(long.split()), long_flags=frozenset(flags.split()))


def _target_dir(options: list[Option]) -> list[str]:
    return values(options, "-t", "--target-directory")


def _copy_like(keep_sources: bool) -> Callable[[list[Option], list[str]], list[str]]:
    def operands(options: list[Option], args: list[str]) -> list[str]:
        targets = _target_dir(options)
        if targets:
            return targets + (args if keep_sources else [])
        if has(options, "-d", "--directory"):  # install -d: every operand is created
            return args
        if keep_sources:
            return args
        return args[-1:] if len(args) >= 2 else []

    return operands


def _ln(options: list[Option], args: list[str]) -> list[str]:
    targets = _target_dir(options)
    if targets:
        return targets
    if len(args) == 1:
        return [os.path.basename(args[0].rstrip("/")) or args[0]]
    return args[-1:]


def _all(options: list[Option], args: list[str]) -> list[str]:
    del options
    return args


def _mode_first(options: list[Option], args: list[str]) -> list[str]:
    if has(options, "--reference"):
        return args
    if args and _MODE.fullmatch(args[0]):
        return args[1:]
    return args


def _owner_first(options: list[Option], args: list[str]) -> list[str]:
    return args if has(options, "--reference") else args[1:]


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


def _sort(options: list[Option], args: list[str]) -> list[str]:
    del args
    return values(options, "-o", "--output")


def _tar(options: list[Option], args: list[str]) -> list[str]:
    names = {name for name, _ in options}
    if names & {"-c", "--create", "-r", "--append", "-u", "--update"}:
        return values(options, "-f", "--file")
    if "-x" in names or "--extract" in names or "--get" in names:
        return values(options, "-C", "--directory") or ["."]
    del args
    return []


def _uniq(options: list[Option], args: list[str]) -> list[str]:
    del options
    return args[1:2]  # uniq [INPUT [OUTPUT]]: the second operand is written


_TREE_SHORT_ARGS = frozenset("LPIoHT")
_TREE_LONG_ARGS = frozenset({"--charset", "--filelimit", "--timefmt", "--sort", "--gitfile",
                             "--infofile", "--hintro", "--houtro"})  # fmt: skip


def _tree_writes(form: Argv) -> list[str]:
    """tree's own option reader: no glued values; each value letter of a bundle
    takes the next word in turn (``-Lo 1 F``: level 1, output F)."""
    targets: list[str] = []
    operands: list[str] = []
    letters_seen: set[str] = set()
    i, n = 1, len(form)
    while i < n:
        word = form[i]
        i += 1
        if word == "--":
            operands.extend(form[i:])
            break
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            if name in _TREE_LONG_ARGS and not eq:
                i += 1
            continue
        if word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], start=2):
                letters_seen.add(letter)
                if letter in _TREE_SHORT_ARGS:
                    if letter == "o":
                        if i < n:
                            targets.append(form[i])
                        if word[at:]:
                            targets.append(word[at:])  # the glued reading too
                    i += 1
            continue
        operands.append(word)
    if {"R", "H"} <= letters_seen:
        # -R -H: an index file in every directory it lists (at the -L depth).
        targets += [os.path.join(d, "00Tree.html") for d in operands or ["."]]
    return targets


def _file(options: list[Option], args: list[str]) -> list[str]:
    # file -C compiles each -m magic file (default "magic") to BASENAME.mgc in the cwd.
    del args
    if not has(options, "-C", "--compile"):
        return []
    sources = [m for v in values(options, "-m", "--magic-file") for m in v.split(":")]
    return [os.path.basename(m.rstrip("/")) + ".mgc" for m in sources or ["magic"] if m]


def _find(options: list[Option], args: list[str]) -> list[str]:
    del options, args
    return []


WRITERS: dict[str, tuple[Grammar, Callable[[list[Option], list[str]], list[str]]]] = {
    "tee": (_g(), _all),
    "cp": (_g("tS", "--target-directory --suffix"), _copy_like(False)),
    "mv": (_g("tS", "--target-directory --suffix"), _copy_like(True)),
    "install": (_g("tSgmo", "--target-directory --suffix --group --mode --owner",
                   "--directory"), _copy_like(False)),
    "ln": (_g("tS", "--target-directory --suffix"), _ln),
    "touch": (_g("drt", "--date --reference"), _all),
    "truncate": (_g("sr", "--size --reference"), _all),
    "mkdir": (_g("m", "--mode"), _all),
    "rmdir": (_g(), _all),
    "rm": (_g(), _all),
    "unlink": (_g(), _all),
    "shred": (_g("ns", "--iterations --size"), _all),
    "chmod": (_g(), _mode_first),
    "chown": (_g(), _owner_first),
    "chgrp": (_g(), _owner_first),
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
    "sort": (_g("okStT", "--output --key --buffer-size --field-separator "
                "--temporary-directory"), _sort),
    "tar": (_g("fCbTXVNgKL", "--file --directory --exclude --files-from",
               "--create --extract --get --append --update"), _tar),
    "find": (_g(), _find),
    "uniq": (_g("fsw", "--skip-fields --skip-chars --check-chars"), _uniq),
    "file": (_g("mfFeP", "--magic-file --files-from --separator --exclude --exclude-quiet "
                "--parameter", "--compile"), _file),
}  # fmt: skip


def _find_writes(form: Argv) -> list[str]:
    out: list[str] = []
    for i, word in enumerate(form[:-1]):
        if word in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            out.append(form[i + 1])
    return out


def _dd_writes(form: Argv) -> list[str]:
    return [word[3:] for word in form[1:] if word.startswith("of=")]


def write_operands(form: Argv) -> list[str]:
    """Operands ``form`` writes to, as written (relative paths not yet resolved)."""
    if not form:
        return []
    name = form[0]
    if name == "dd":
        return _dd_writes(form)
    if name == "find":
        return _find_writes(form)
    if name == "tree":
        return _tree_writes(form)
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
