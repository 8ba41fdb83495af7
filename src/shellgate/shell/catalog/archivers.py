"""Catalog family: archivers and copiers (tar, zip, unzip, rsync).

tar creates the file it is given (``-f``) and extracts into ``-C DIR`` or the
current directory: both are writes the ``write:`` rules decide, and an
extraction is a finding too (an archive's members can land anywhere below, and
name places that run code later). Its
program options run code: ``-I``/``--use-compress-program`` (split into
words), ``--to-command`` and ``--checkpoint-action=exec=`` (shell strings),
``-F``/``--info-script`` and ``--rsh-command`` (programs). An archive named
``HOST:FILE`` or ``USER@HOST:FILE`` (a colon with no slash before it) is remote
unless ``--force-local``: tar runs ``rsh HOST [-l USER] /usr/sbin/rmt`` (or the
``--rsh-command`` program), a segment of its own and a finding. rsync writes its last
operand when that is local; ``-e``/``--rsh`` is a program (split into words),
``--rsync-path`` a shell string (run on the remote side; read here anyway).
rsync's ``--backup-dir``, ``--partial-dir`` and ``-T``/``--temp-dir`` are
writes of that directory (a relative one also below DEST, where rsync puts
it); ``--suffix`` names the backup DEST+SUFFIX, a finding; ``--daemon`` runs a
daemon whose configuration runs commands (``pre-xfer exec``), a finding.
zip writes its archive (its first operand); ``-TT``/``--unzip-command`` is a
shell string it runs to test the archive. unzip extracts into ``-d DIR`` or
the current directory, a write like tar's extraction; listing, testing and
printing (``-l -t -v -z -p -c -Z``) write nothing.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, aliases, flag, optional, val
from shellgate.shell.catalog.read import add_program

#: tar's short options that take an argument (old-style bundles hand them the
#: next words in turn: ``tar cfC out.tgz dir`` is ``-c -f out.tgz -C dir``).
_TAR_VALUE_LETTERS = "bCfFgHIKLNTVX"
_REMOTE = re.compile(r"^[^/]*:")  # host:path (rsync, scp) is not a local write


def _tar_respell(argv: Argv) -> Argv:
    """``tar czf F DIR``: a first word without a dash is a bundle of letters."""
    if len(argv) < 2 or argv[1].startswith("-") or not argv[1].isalnum():
        return argv
    words = list(argv[2:])
    out = [argv[0]]
    for letter in argv[1]:
        out.append("-" + letter)
        if letter in _TAR_VALUE_LETTERS and words:
            out.append(words.pop(0))
    return (*out, *words)


def _tar_writes(parsed: Parsed) -> list[str]:
    if parsed.has("-c", "-r", "-u"):
        return parsed.values("-f")
    if parsed.has("-x"):
        return parsed.values("-C") or ["."]
    return []


def _tar(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``--checkpoint-action=exec=CMD`` runs CMD through the shell at each
    checkpoint; ``--remove-files`` deletes what it archived."""
    for action in parsed.values("--checkpoint-action"):
        kind, eq, command = action.partition("=")
        if kind == "exec" and eq:
            out.payloads.append(("tar --checkpoint-action command", command))
    if parsed.has("--remove-files"):
        out.deleted.extend(parsed.words)
    if parsed.has("-x"):
        where = (parsed.values("-C") or ["."])[-1]
        out.finding(f"'{argv[0]} -x' extracts whatever paths the archive holds below '{where}'")
    if not parsed.has("--force-local"):
        for archive in parsed.values("-f"):
            _remote_archive(argv[0], archive, parsed, out)


def _remote_archive(name: str, archive: str, parsed: Parsed, out: Reading) -> None:
    """GNU tar's ``_remdev``: a colon, not first, with no ``/`` before it, names
    an archive on another host, reached through rsh (or ``--rsh-command``)."""
    colon = archive.find(":")
    if colon <= 0 or "/" in archive[:colon]:
        return
    out.finding(
        f"'{name} -f {archive[:40]}' is a remote archive: tar runs rsh (or --rsh-command)"
        " to reach the host"
    )
    if parsed.has("--rsh-command"):
        return  # that program is a segment already
    user, at, host = archive[:colon].partition("@")  # USER@HOST: the first @
    login = ("-l", user) if at else ()
    rmt = (parsed.values("--rmt-command") or ["/usr/sbin/rmt"])[-1]
    add_program(out, f"{name} remote archive", ("rsh", host if at else user, *login, rmt))


#: rsync options that delete from the destination (``--del`` is ``--delete-during``).
_RSYNC_DELETES = ("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay",
                  "--delete-after", "--delete-excluded", "--delete-missing-args")  # fmt: skip


def _local_path(operand: str) -> str:
    """The path part of an rsync operand (``host:dir/x`` is ``dir/x``)."""
    return _REMOTE.sub("", operand, count=1)


def _rsync_writes(parsed: Parsed) -> list[str]:
    """DEST, and DEST/NAME for each SOURCE without a trailing slash (rsync copies
    the directory or file itself there: ``rsync -a src/.git .`` writes ``./.git``);
    with ``-R`` the source's whole relative path (after any ``/./``) lands there."""
    operands = parsed.words
    if len(operands) < 2 or _REMOTE.match(operands[-1]):
        return []
    dest = operands[-1]
    written = [dest]
    relative = parsed.has("-R")
    for source in operands[:-1]:
        path = _local_path(source)
        if relative:
            head, marker, tail = path.partition("/./")
            name = (tail if marker else head).lstrip("/")
        elif path.endswith("/"):
            continue
        else:
            name = path.rsplit("/", 1)[-1]
        if name and name not in (".", ".."):
            written.append(dest.rstrip("/") + "/" + name if dest.rstrip("/") else "/" + name)
    return written


def _rsync(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``--remove-source-files`` deletes the (local) sources it sent; ``--delete``
    and its kin delete from DEST what the sources lack; the backup, partial and
    temp directories are written (a relative one is relative to DEST too)."""
    dest = parsed.words[-1] if len(parsed.words) >= 2 else ""
    local = bool(dest) and not _REMOTE.match(dest)
    for directory in parsed.values("--backup-dir", "--partial-dir", "-T"):
        out.writes.append(directory)
        if local and not directory.startswith("/"):
            out.writes.append(dest.rstrip("/") + "/" + directory)
    if parsed.values("--suffix"):
        out.finding(f"'{argv[0]} --suffix' names backups DEST+SUFFIX (files it writes)")
    if parsed.has("--remove-source-files"):
        out.deleted.extend(a for a in parsed.words[:-1] if not _REMOTE.match(a))
    operands = parsed.words
    if parsed.has(*_RSYNC_DELETES) and len(operands) >= 2:
        dest = operands[-1]
        if _REMOTE.match(dest):
            out.finding(f"'{argv[0]} --delete' deletes files on the remote side ({dest[:40]})")
        else:
            out.deleted.append(dest)


def _zip(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-TT CMD``/``--unzip-command CMD`` (glued, after ``=``, or the next word;
    any long prefix of it, and ``TT`` inside a bundle): zip runs CMD through the
    shell to test the archive. Read from the raw words: zip's own option parser
    is no getopt, so this over-reads rather than miss one."""
    del parsed
    for at, word in enumerate(argv[1:], start=1):
        if word.startswith("--unz") and "--unzip-command".startswith(word.split("=", 1)[0]):
            glued = word.partition("=")[2] if "=" in word else None
        elif word.startswith("-") and not word.startswith("--") and "TT" in word:
            glued = word[word.index("TT") + 2 :].removeprefix("=") or None
        else:
            continue
        command = glued if glued is not None else (argv[at + 1] if at + 1 < len(argv) else "")
        out.finding(f"'{argv[0]} {word[:40]}' runs a shell command to test the archive")
        if command:
            out.payloads.append((f"{argv[0]} --unzip-command payload", command))


#: unzip's modes that list, test or print members and extract nothing.
_UNZIP_READS = ("-l", "-t", "-v", "-z", "-p", "-c", "-Z")


def _unzip_writes(parsed: Parsed) -> list[str]:
    if parsed.has(*_UNZIP_READS):
        return []
    return parsed.values("-d") or ["."]


def _unzip(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Extraction writes whatever paths the archive's members name, below DIR."""
    for where in _unzip_writes(parsed):
        out.finding(f"'{argv[0]}' extracts whatever paths the archive holds below '{where}'")


ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("tar", "gtar"),
        options=(
            flag("-c --create"), flag("-x --extract --get"), flag("-t --list"),
            flag("-r --append"), flag("-u --update"), flag("-A --catenate --concatenate"),
            flag("-d --diff --compare"), flag("--delete"), flag("--remove-files"),
            flag("-z --gzip --gunzip --ungzip"), flag("-j --bzip2"), flag("-J --xz"),
            flag("-a --auto-compress"), flag("--zstd"),
            val("-f --file"), val("-C --directory", chdir=True), val("-T --files-from"),
            val("-X --exclude-from"),
            val("-I --use-compress-program", runs="words"),
            val("-F --info-script --new-volume-script", runs="shell"),  # run by sh -c
            val("--rsh-command", runs="program"),
            val("--rmt-command", runs="program"),
            val("--to-command", runs="shell"),
            val("--index-file", writes=True),
            val("-g --listed-incremental", writes=True),
            val("--volno-file", writes=True),
            *aliases("-b --blocking-factor, -H --format, -K --starting-file, -L --tape-length, "
                     "-N --newer --after-date, -V --label, --exclude, --owner, --group, "
                     "--mode, --mtime, --transform, --xform, --strip-components, --suffix, "
                     "--newer-mtime, --record-size, --sort, --warning, --quoting-style, "
                     "--checkpoint-action, --exclude-tag, --exclude-tag-under, "
                     "--exclude-tag-all, --level, --hole-detection, --owner-map, --group-map, "
                     "--xattrs-include, --xattrs-exclude, --atime-preserve, --pax-option"),
            optional("--checkpoint"), optional("--backup"), optional("--occurrence"),
            optional("--one-top-level"),
            flag("--force-local"),
            flag("-v --verbose", inert=True), flag("--totals", inert=True),
        ),
        writes=_tar_writes,
        hooks=(_tar,),
        respell=_tar_respell,
    ),
    Entry(
        ("zip",),
        options=(
            val("-b --temp-path"), val("-O --output-file", writes=True),
            val("--logfile-path", writes=True), val("-n --suffixes"), val("-t --from-date"),
            flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
        ),
        writes=lambda parsed: parsed.words[:1],
        obvious_writer=True,
        no_canonical=True,
        hooks=(_zip,),
    ),
    Entry(
        ("unzip",),
        options=(
            val("-d"), flag("-l"), flag("-t"), flag("-v"), flag("-z"), flag("-p"), flag("-c"),
            flag("-Z"), val("-P"), flag("-o"), flag("-n"), flag("-q", inert=True),
        ),
        writes=_unzip_writes,
        hooks=(_unzip,),
    ),
    Entry(
        ("rsync",),
        options=(
            val("-e --rsh", runs="words"),
            val("--rsync-path", runs="shell"),
            val("--log-file", writes=True),
            val("--write-batch --only-write-batch", writes=True),
            flag("--partial"), flag("-b --backup"), flag("--remove-source-files"),
            flag("--daemon", finding="runs an rsync daemon (its configuration runs commands)"),
            val("--config"),
            flag("-R --relative"), *(flag(name) for name in _RSYNC_DELETES),
            flag("-v --verbose", inert=True), flag("--progress", inert=True),
            *aliases("-f --filter, --exclude, --include, --exclude-from, --include-from, "
                     "--files-from, -T --temp-dir, --partial-dir, --compare-dest, --copy-dest, "
                     "--link-dest, --backup-dir, --suffix, --chmod, --log-file-format, "
                     "--password-file, --out-format, --timeout, --contimeout, --port, "
                     "--bwlimit, --chown, --usermap, --groupmap, -B --block-size, -M "
                     "--remote-option, --max-size, --min-size, --max-delete, --modify-window, "
                     "--iconv, --checksum-choice, --compress-choice, --compress-level, "
                     "--skip-compress, --address, --sockopts, --outbuf, --read-batch, "
                     "--protocol, --info, --debug, --stop-after, --stop-at, --copy-as, "
                     "--early-input"),
        ),
        writes=_rsync_writes,
        obvious_writer=True,
        hooks=(_rsync,),
    ),
)  # fmt: skip
