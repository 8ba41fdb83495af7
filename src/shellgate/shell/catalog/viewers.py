"""Catalog family coreutils, continued: the searchers and pagers policies allow by name.

``grep``, ``rg``, ``less``, ``man`` and ``diff`` read; an admin allows them as
readers. Their entries declare the options that take a value (so the canonical
form reads the value as the option's, not as an operand), and the few that do
more than read: ``rg --pre``/``--hostname-bin`` and ``man -P``/``-H`` run a
program, ``less -k``/``--lesskey-src`` and ``man -C`` load settings that can,
``less -o``/``-O`` log to a file (on a terminal, which the gate never gives:
only where it would land matters).
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import CLAP, LESS, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, optional, val, values

#: An obsolete ``-NUM`` count (``head -20``, ``grep -3``): no option grammar.
_COUNT = re.compile(r"-[0-9]+")
_KEYS = "loads key bindings and settings"
_CONFIG = "loads a configuration that names the programs it runs"


def counted_words(argv: Argv, parsed: Parsed) -> list[str] | None:
    """An obsolete ``-NUM`` count is no bundle of digits: such an argv is spelled as written."""
    del parsed
    return list(argv[1:]) if any(_COUNT.fullmatch(w) for w in argv[1:]) else None


def _less_commands(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``less +CMD``: less types CMD at start. ``!`` and ``|`` run a shell, ``s`` and
    ``v`` write or edit, ``-`` sets options (``-o`` logs to a file); a one-line
    search runs nothing."""
    del parsed
    for word in argv[1:]:
        search = word[1:2] in ("/", "?") and "\n" not in word
        if word.startswith("+") and not search and any(c in word for c in "!|sv-\n"):
            out.finding(f"'{argv[0]} {word[:30]}' runs a less command at start")
            return


def _man_browsers(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``man -HBROWSER``/``--html=BROWSER``: a colon-separated list of browser
    commands (``%s`` the page), tried in turn through the shell."""
    for value in parsed.values("-H"):
        for command in value.split(":"):
            if command:
                out.payloads.append((f"{argv[0]} --html browser", command))


_GREP = (
    val("-e --regexp"), val("-f --file"), val("-m --max-count"), val("-A --after-context"),
    val("-B --before-context"), val("-C --context"), val("--include"), val("--exclude"),
    val("--exclude-from"), val("--exclude-dir"), val("--label"), val("-d --directories"),
    val("-D --devices"), val("--binary-files"), val("--group-separator"),
    optional("--color --colour"), flag("-r --recursive"), flag("-R --dereference-recursive"),
    flag("-i --ignore-case"), flag("-v --invert-match"), flag("-n --line-number"),
    flag("-l --files-with-matches"), flag("-L --files-without-match"), flag("-c --count"),
    flag("-E --extended-regexp"), flag("-F --fixed-strings"), flag("-P --perl-regexp"),
    flag("-w --word-regexp"), flag("-x --line-regexp"), flag("-o --only-matching"),
    flag("-q --quiet --silent"), flag("-s --no-messages"), flag("-H --with-filename"),
    flag("-h --no-filename"), flag("-a --text"), flag("-z --null-data"), flag("-Z --null"),
)  # fmt: skip

VIEWERS: tuple[Entry, ...] = (
    Entry(("grep", "egrep", "fgrep"), options=_GREP, canonical_words=counted_words),
    Entry(
        ("rg",),
        CLAP,
        (
            val("-A --after-context"), val("-B --before-context"), val("-C --context"),
            val("-E --encoding"), val("-e --regexp"), val("-f --file"), val("-g --glob"),
            val("-j --threads"), val("-M --max-columns"), val("-m --max-count"),
            val("-r --replace"), val("-t --type"), val("-T --type-not"), val("-d --max-depth"),
            *values("--color --colors --context-separator --dfa-size-limit --engine "
                    "--field-context-separator --field-match-separator --iglob --ignore-file "
                    "--max-filesize --path-separator --pre-glob --regex-size-limit --sort "
                    "--sortr --type-add --type-clear --hyperlink-format --generate"),
            # rg runs PROG FILE for each file it searches, and PROG for its host name.
            val("--pre", runs="program"), val("--hostname-bin", runs="program"),
            flag("-i --ignore-case"), flag("-s --case-sensitive"), flag("-S --smart-case"),
            flag("-n --line-number"), flag("-N --no-line-number"), flag("-l --files-with-matches"),
            flag("-v --invert-match"), flag("-w --word-regexp"), flag("-x --line-regexp"),
            flag("-F --fixed-strings"), flag("-P --pcre2"), flag("-U --multiline"),
            flag("-L --follow"), flag("-u --unrestricted"), flag("-z --search-zip"),
            flag("-c --count"), flag("-o --only-matching"), flag("-q --quiet"),
        ),
        # `rg -e -- --pre=sh`: -e takes the `--` as its pattern.
        through_double_dash=True,
    ),
    Entry(
        ("less",),
        LESS,
        (
            val("-k --lesskey-file", finding=_KEYS), val("--lesskey-src", finding=_KEYS),
            val("--lesskey-content", finding=_KEYS),
            # --LOG-FILE reads as --log-file (long names in any case): a write either way.
            val("-o --log-file", writes=True), val("-O", writes=True),
            val("-b --buffers"), val("-h --max-back-scroll"), val("-j --jump-target"),
            val("-p --pattern"), val("-P --prompt"), val("-t --tag"), val("-T --tag-file"),
            val("-x --tabs"), val("-y --max-forw-scroll"), val("-z --window"),
            val("-D --color"), val("-# --shift"),
            *values("--header --intr --line-num-width --rscroll --status-col-width "
                    "--wheel-lines"),
        ),
        hooks=(_less_commands,),
        # On a terminal less copies its input to -o FILE; the gate gives it none.
        reports=True,
    ),
    Entry(
        ("man",),
        options=(
            # man-db splits the pager into words and runs it; a config file names
            # the pager, troff and browser it runs.
            val("-P --pager", runs="words"),
            val("-C --config-file", finding=_CONFIG),
            optional("-H --html"),
            val("-R --recode"), val("-L --locale"), val("-m --systems"), val("-M --manpath"),
            val("-S -s --sections"), val("-e --extension"), val("-r --prompt"),
            val("-E --encoding"), val("-p --preprocessor"), optional("-T --troff-device"),
            optional("-X --gxditview"), optional("--warnings"),
            flag("-a --all"), flag("-f --whatis"), flag("-k --apropos"),
            flag("-K --global-apropos"), flag("-l --local-file"),
            flag("-w --where --path --location"), flag("-W --where-cat --location-cat"),
            flag("-c --catman"), flag("-d --debug"), flag("-D --default"), flag("-u --update"),
            flag("-i --ignore-case"), flag("-I --match-case"), flag("-t --troff"),
            flag("-Z --ditroff"), flag("-7 --ascii"),
        ),
        hooks=(_man_browsers,),
    ),
    Entry(
        ("diff",),
        options=(
            flag("-c"), val("-C"), optional("--context"), flag("-u"), val("-U"),
            optional("--unified"), val("-I --ignore-matching-lines"),
            val("-F --show-function-line"), val("-x --exclude"), val("-X --exclude-from"),
            val("-S --starting-file"), val("-W --width"), val("-L --label"), val("-D --ifdef"),
            optional("--color"), flag("-r --recursive"), flag("-N --new-file"),
            flag("-q --brief"), flag("-s --report-identical-files"), flag("-i --ignore-case"),
            flag("-w --ignore-all-space"), flag("-b --ignore-space-change"),
            flag("-B --ignore-blank-lines"), flag("-a --text"), flag("-y --side-by-side"),
            *values("--from-file --to-file --line-format --old-line-format --new-line-format "
                    "--unchanged-line-format --old-group-format --new-group-format "
                    "--changed-group-format --unchanged-group-format --horizon-lines "
                    "--tabsize --palette"),
        ),
        canonical_words=counted_words,
    ),
)  # fmt: skip
