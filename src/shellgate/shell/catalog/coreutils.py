"""Catalog family: coreutils and the everyday file tools.

Two kinds of entries. Writers (``cp``, ``rm``, ``chmod``, ``dd``…) write their
operands; for most that is their whole purpose (``obvious_writer``: an admin who
allows ``touch *`` knows it writes), while ``sort -o``, ``uniq IN OUT``, ``file
-C`` and ``tree -o`` write through a side door, so those writes are also a finding.
cp, mv, ln and install ``-S``/``--suffix`` name the backup DEST+SUFFIX (``cp -b
-S onfig new .git/c`` makes ``.git/config``): a finding. patch writes the files
its diff names (from stdin or ``-i``), unseen here: always a finding; ``-o``,
``-r`` and ``-d`` name what it writes, so protected paths see them.
Read-only tools policies allow by name (``sort``, ``rg``, ``less``, ``man``,
``grep``, ``head``…) declare their value options, so the canonical form reads
their values right, and the options that run a program (``sort
--compress-program``, ``rg --pre``, ``man -P``) or load key bindings (``less -k``).
The pagers and searchers are in :mod:`.viewers`.
"""

from __future__ import annotations

import os
import re

from shellgate.shell.argv.engine import TREE, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    OperandWrites,
    Reading,
    flag,
    letters,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.viewers import VIEWERS, counted_words

#: A chmod mode operand: octal, or symbolic clauses (``u+x,go-w``).
_MODE = re.compile(r"[0-7]{1,4}|[ugoa]*[-+=][rwxXstugo]*(,[ugoa]*[-+=][rwxXstugo]*)*")

_VERBOSE = flag("-v --verbose", inert=True)
_TARGET = val("-t --target-directory")
#: ``-S SUF``: the backup of DEST is DEST+SUF, a file the analysis does not list.
_BACKUP = (
    flag("-b"), optional("--backup"),
    val("-S --suffix", finding="names backups DEST+SUFFIX (files it writes unseen)"),
)  # fmt: skip
_CONTEXT = (flag("-Z"), optional("--context"))
#: chmod, chown, chgrp: the tree walk and its root guard.
_RECURSIVE = (
    flag("-R --recursive"), flag("-c --changes", inert=True), flag("-f --silent --quiet"),
    _VERBOSE, flag("--dereference"), flag("-h --no-dereference"), flag("-H"), flag("-L"),
    flag("-P"), flag("--no-preserve-root"), flag("--preserve-root"), val("--reference"),
)  # fmt: skip


def _copy_writes(keep_sources: bool) -> OperandWrites:
    """cp (the last operand, or ``-t DIR``) and mv (every operand: sources go too)."""

    def writes(parsed: Parsed) -> list[str]:
        targets, operands = parsed.values("-t"), parsed.words
        if targets:
            return targets + (operands if keep_sources else [])
        if keep_sources:
            return operands
        return operands[-1:] if len(operands) >= 2 else []

    return writes


def _install(parsed: Parsed) -> list[str]:
    if parsed.has("-d"):  # install -d: every operand is a directory it creates
        return parsed.words
    return _copy_writes(False)(parsed)


def _ln(parsed: Parsed) -> list[str]:
    targets, operands = parsed.values("-t"), parsed.words
    if targets:
        return targets
    if len(operands) == 1:  # ln TARGET: a link of the same name in the cwd
        return [os.path.basename(operands[0].rstrip("/")) or operands[0]]
    return operands[-1:]


def _base(path: str) -> str:
    return os.path.basename(path.rstrip("/"))


def _names_made(parsed: Parsed, sources: list[str]) -> list[tuple[str, str]]:
    """``(link, source)`` for ln and ``cp -l/-s``: into ``-t DIR``, into the last
    operand (as a directory, and as the name itself when there is one source),
    or, for ``ln TARGET`` alone, a link of the same name in the cwd."""
    into, operands = parsed.values("-t"), parsed.words
    if into:
        return [(os.path.join(d, _base(s)), s) for d in into for s in operands]
    if len(operands) == 1:
        return [(os.path.basename(operands[0].rstrip("/")) or operands[0], operands[0])]
    last = operands[-1] if operands else ""
    made = [(os.path.join(last, _base(s)), s) for s in sources]
    if len(sources) == 1 and not parsed.has("-t"):
        made.append((last, sources[0]))
    return made


def _ln_links(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """ln names existing files: a hard link's target is written through the link
    (every later write), a symlink's is resolved from the link's directory."""
    del argv
    symbolic = parsed.has("-s")
    sources = parsed.words[:-1] if len(parsed.words) > 1 and not parsed.values("-t") else []
    for link, target in _names_made(parsed, sources or parsed.words[:1]):
        out.links.append((link, target, symbolic))


def _cp_links(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``cp -l`` hard-links and ``cp -s`` symlinks its sources instead of copying."""
    del argv
    if not (parsed.has("-l") or parsed.has("-s")):
        return
    sources = parsed.words[:-1] if not parsed.values("-t") else parsed.words
    for link, target in _names_made(parsed, sources):
        out.links.append((link, target, parsed.has("-s")))


def _mode_first(parsed: Parsed) -> list[str]:
    operands = parsed.words
    if parsed.has("--reference") or not operands or not _MODE.fullmatch(operands[0]):
        return operands  # the mode may be an option word: chmod -x f
    return operands[1:]


def _owner_first(parsed: Parsed) -> list[str]:
    return parsed.words if parsed.has("--reference") else parsed.words[1:]


def _mktemp(parsed: Parsed) -> list[str]:
    dirs, templates = parsed.values("-p", "--tmpdir"), parsed.words
    return [*dirs, *(os.path.join(d, t) for d in dirs for t in templates), *templates]


def _dd_writes(parsed: Parsed) -> list[str]:
    return [word[3:] for word in parsed.words if word.startswith("of=")]


def _dd_words(argv: Argv, parsed: Parsed) -> list[str]:
    """``of=`` then ``if=`` then the other operands as written: order means
    nothing to dd. What it writes comes first, so the rule admins write,
    ``dd of=/dev/*``, meets ``dd if=x of=/dev/sda bs=1M`` (its ``*`` runs on)."""
    del parsed
    rank = {"of": 0, "if": 1}
    return sorted(argv[1:], key=lambda word: rank.get(word.partition("=")[0], 2))


def _uniq(parsed: Parsed) -> list[str]:
    return parsed.words[1:2]  # uniq [INPUT [OUTPUT]]: the second operand is written


def _sort(parsed: Parsed) -> list[str]:
    # Listed as operand writes, not option outputs: sort is allowed as a reader,
    # so a write anywhere is news (the finding), not only one outside the workdir.
    return parsed.values("-o")


def _file(parsed: Parsed) -> list[str]:
    """file -C compiles each -m magic file (default ``magic``) to BASENAME.mgc in the cwd."""
    if not parsed.has("-C"):
        return []
    sources = [m for v in parsed.values("-m") for m in v.split(":")]
    return [os.path.basename(m.rstrip("/")) + ".mgc" for m in sources or ["magic"] if m]


def _tree(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """tree -o FILE; -R -H writes 00Tree.html in every directory it lists.

    tree reads no glued value, but a glued ``-oFILE`` is listed too: a reading
    that costs a question at worst, where missing it would let a write by.
    """
    for hit in parsed.hits:
        if hit.name == "-o":
            if hit.value:
                out.writes.append(hit.value)
            word = argv[hit.at]
            glued = word[word.index("o") + 1 :] if not word.startswith("--") else ""
            if glued:
                out.writes.append(glued)
    if parsed.has("-R") and parsed.has("-H"):
        out.writes.extend(os.path.join(d, "00Tree.html") for d in parsed.words or ["."])


_COPY = (
    _TARGET, flag("-T --no-target-directory"), *_BACKUP, flag("-f --force"),
    flag("-i --interactive"), flag("-n --no-clobber"), flag("-u"), optional("--update"),
    flag("--strip-trailing-slashes"), flag("--debug"), *_CONTEXT, _VERBOSE,
)  # fmt: skip

ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("rm",),
        options=(
            flag("-f --force"),
            flag("-r -R --recursive"),
            flag("-d --dir"),
            flag("-i"),
            flag("-I"),
            optional("--interactive"),
            flag("--one-file-system"),
            flag("--no-preserve-root"),
            optional("--preserve-root"),
            _VERBOSE,
        ),
        writes="all",
        obvious_writer=True, cwd_operands=True),
    Entry(("tee",), options=(flag("-a --append"), flag("-i --ignore-interrupts"), flag("-p"),
                             optional("--output-error")), writes="all", obvious_writer=True),
    Entry(
        ("cp",),
        options=(
            *_COPY, flag("-r -R --recursive"), flag("-a --archive"), flag("-d"),
            flag("-H"), flag("-l --link"), flag("-L --dereference"), flag("-P --no-dereference"),
            flag("-p"), optional("--preserve"), val("--no-preserve"), flag("--parents"),
            flag("-s --symbolic-link"), flag("-x --one-file-system"), optional("--reflink"),
            val("--sparse"), flag("--attributes-only"), flag("--copy-contents"),
            flag("--remove-destination"), flag("--keep-directory-symlink"),
        ),
        writes=_copy_writes(False),
        obvious_writer=True,
        hooks=(_cp_links,),
    ),
    Entry(("mv",), options=(*_COPY, flag("--exchange"), flag("--no-copy")),
          writes=_copy_writes(True), obvious_writer=True),
    Entry(
        ("install",),
        options=(
            *_COPY, flag("-c"), flag("-C --compare"), flag("-d --directory"), flag("-D"),
            val("-g --group"), val("-m --mode"), val("-o --owner"),
            flag("-p --preserve-timestamps"), flag("-s --strip"), flag("--preserve-context"),
            val("--strip-program", runs="program"),
        ),
        writes=_install,
        obvious_writer=True,
    ),
    Entry(
        ("ln",),
        options=(
            _TARGET, flag("-T --no-target-directory"), *_BACKUP, flag("-d -F --directory"),
            flag("-f --force"), flag("-i --interactive"), flag("-L --logical"),
            flag("-n --no-dereference"), flag("-P --physical"), flag("-r --relative"),
            flag("-s --symbolic"), _VERBOSE,
        ),
        writes=_ln,
        obvious_writer=True,
        hooks=(_ln_links,),
    ),
    Entry(("touch",), options=(flag("-a"), flag("-c --no-create"), val("-d --date"), flag("-f"),
                               flag("-h --no-dereference"), flag("-m"), val("-r --reference"),
                               val("-t"), val("--time")), writes="all", obvious_writer=True),
    Entry(("truncate",), options=(flag("-c --no-create"), flag("-o --io-blocks"),
                                  val("-r --reference"), val("-s --size")),
          writes="all", obvious_writer=True, cwd_operands=True),
    Entry(("mkdir",), options=(val("-m --mode"), flag("-p --parents"), _VERBOSE, *_CONTEXT),
          writes="all", obvious_writer=True),
    Entry(("rmdir",), options=(flag("--ignore-fail-on-non-empty"), flag("-p --parents"), _VERBOSE),
          writes="all", obvious_writer=True, cwd_operands=True),
    Entry(("unlink",), writes="all", obvious_writer=True),
    Entry(("shred",), options=(flag("-f --force"), val("-n --iterations"), val("--random-source"),
                               val("-s --size"), flag("-u"), optional("--remove"), _VERBOSE,
                               flag("-x --exact"), flag("-z --zero")),
          writes="all", obvious_writer=True, cwd_operands=True),
    Entry(("chmod",), options=_RECURSIVE, writes=_mode_first, obvious_writer=True,
          cwd_operands=True),
    Entry(("chown",), options=(*_RECURSIVE, val("--from")), writes=_owner_first,
          obvious_writer=True, cwd_operands=True),
    Entry(("chgrp",), options=_RECURSIVE, writes=_owner_first, obvious_writer=True,
          cwd_operands=True),
    Entry(("mktemp",), options=(flag("-d --directory"), flag("-u --dry-run"), flag("-q --quiet"),
                                val("--suffix"), val("-p"), optional("--tmpdir"), flag("-t")),
          writes=_mktemp, obvious_writer=True),
    Entry(("mkfifo",), options=(val("-m --mode"), *_CONTEXT), writes="all", obvious_writer=True),
    Entry(("mknod",), options=(val("-m --mode"), *_CONTEXT),
          writes=lambda parsed: parsed.words[:1], obvious_writer=True),
    Entry(("dd",), writes=_dd_writes, obvious_writer=True, canonical_words=_dd_words,
          cwd_operands=True, path_keys=("if", "of")),
    Entry(
        ("sort",),
        options=(
            flag("-b --ignore-leading-blanks"), flag("-d --dictionary-order"),
            flag("-f --ignore-case"), flag("-g --general-numeric-sort"),
            flag("-i --ignore-nonprinting"), flag("-M --month-sort"),
            flag("-h --human-numeric-sort"), flag("-n --numeric-sort"), flag("-R --random-sort"),
            flag("-r --reverse"), flag("-V --version-sort"), flag("-c"), optional("--check"),
            flag("-C"), flag("-m --merge"), flag("-s --stable"), flag("-u --unique"),
            flag("-z --zero-terminated"), flag("--debug"), val("--random-source"), val("--sort"),
            val("--batch-size"), val("--files0-from"), val("-k --key"), val("-o --output"),
            val("-S --buffer-size"), val("-t --field-separator"),
            val("-T --temporary-directory"), val("--parallel"),
            # It runs PROG to compress its temporary files (and PROG -d to read them).
            val("--compress-program", runs="program"),
        ),
        writes=_sort,
        # `sort --random-source -- --compress-program=sh`: the `--` may be a value.
        through_double_dash=True,
    ),
    Entry(
        ("uniq",),
        options=(
            flag("-c --count"), flag("-d --repeated"), flag("-D"), optional("--all-repeated"),
            val("-f --skip-fields"), optional("--group"), flag("-i --ignore-case"),
            val("-s --skip-chars"), flag("-u --unique"), flag("-z --zero-terminated"),
            val("-w --check-chars"),
        ),
        writes=_uniq,
    ),
    Entry(("head",), options=(val("-c --bytes"), val("-n --lines"), flag("-q --quiet --silent"),
                              flag("-v --verbose"), flag("-z --zero-terminated")),
          canonical_words=counted_words),
    Entry(("tail",), options=(val("-c --bytes"), val("-n --lines"), flag("-f"),
                              optional("--follow"), flag("-F"), val("-s --sleep-interval"),
                              val("--pid"), val("--max-unchanged-stats"), flag("--retry"),
                              flag("-q --quiet --silent"), flag("-v --verbose"),
                              flag("-z --zero-terminated")),
          canonical_words=counted_words),
    Entry(("cat",), options=(flag("-A --show-all"), flag("-b --number-nonblank"),
                             flag("-E --show-ends"), flag("-n --number"),
                             flag("-s --squeeze-blank"), flag("-T --show-tabs"),
                             flag("-v --show-nonprinting")), echoes_stdin=True),
    Entry(("wc",), options=(flag("-c --bytes"), flag("-m --chars"), flag("-l --lines"),
                            flag("-L --max-line-length"), flag("-w --words"),
                            val("--files0-from"), val("--total"))),
    Entry(("cut",), options=(val("-b --bytes"), val("-c --characters"), val("-d --delimiter"),
                             val("-f --fields"), val("--output-delimiter"), flag("--complement"),
                             flag("-s --only-delimited"), flag("-z --zero-terminated"))),
    Entry(
        ("file",),
        options=(
            flag("-C --compile"), val("-e --exclude"), val("--exclude-quiet"),
            val("-F --separator"), val("-f --files-from"), val("-m --magic-file"),
            val("-P --parameter"),
        ),
        writes=_file,
        through_double_dash=True,  # `file -F -- -C`: -F takes the `--`
    ),
    Entry(
        ("tree",),
        TREE,
        (*letters("LPIoHT"), *values("--charset --filelimit --timefmt --sort --gitfile "
                                     "--infofile --hintro --houtro")),
        hooks=(_tree,),
    ),
    Entry(
        ("patch",),
        options=(
            val("-o --output", writes=True), val("-r --reject-file", writes=True),
            # every file the patch names lands below DIR
            val("-d --directory", writes=True, chdir=True),
            val("-i --input"), val("-p --strip"), val("-B --prefix"), val("-Y --basename-prefix"),
            val("-z --suffix"), val("-D --ifdef"), val("-F --fuzz"), val("-V --version-control"),
            val("-g --get"), val("-x --debug"), val("--quoting-style"), val("--read-only"),
            val("--reject-format"), optional("--merge"), flag("--dry-run"),
            flag("-b --backup"), flag("-E --remove-empty-files"), flag("-f --force"),
            flag("-N --forward"), flag("-R --reverse"), flag("-t --batch"),
            flag("-s --silent --quiet", inert=True), flag("--verbose", inert=True),
        ),
        writes=lambda parsed: parsed.words[:1],  # patch [OPTIONS] [ORIGFILE [PATCHFILE]]
        obvious_writer=True,
        finding="writes the files named in its patch, which the analysis cannot see",
    ),
    *VIEWERS,
)  # fmt: skip
