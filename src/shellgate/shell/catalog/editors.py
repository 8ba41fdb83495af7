"""Catalog family: text editors run from the command line.

An editor opened on a file is a reader and a writer an admin allows by name.
What its options make it *do* at start is more: vi's ``-c CMD``, ``+CMD`` and
``--cmd CMD`` are Ex commands (``:!sh``, ``:shell``, ``:terminal``, ``:w FILE``,
``:redir``, ``:py``, ``:lua``…), ``-S FILE`` and ``-u FILE`` source a script,
emacs' ``--eval``/``-l``/``-f`` run Lisp, nano's ``--speller``/``-s`` names a
program. Each is a finding: an editor command line runs what nobody allowed,
and reading Ex or Lisp for the harmless few is not worth the hole. A plain
line number (``+42``) or search (``+/text``) is no command.

``ed`` and ``red`` read their commands from stdin (``!CMD`` runs a shell, ``w
FILE`` writes): a finding unless they only print (``-s`` with no stdin is still
commands from the terminal, which the gate never gives: a finding too).
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import GNU, POSIX, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val, values

_EX = "runs editor commands at start (:!, :shell, :w, :py…)"
_SOURCE = "sources an editor script (its commands run)"
_LISP = "runs Lisp code at start"
#: ``+N`` (a line) and ``+/PATTERN``/``+?PATTERN`` on one line run no command.
_HARMLESS_PLUS = re.compile(r"\+(?:\d*|[/?][^\n|]*)")


def _vi_plus(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``vi +CMD FILE``: CMD is an Ex command run after the file is read."""
    del parsed
    for word in argv[1:]:
        if word == "--":
            return
        if word.startswith("+") and not _HARMLESS_PLUS.fullmatch(word):
            out.finding(f"'{argv[0]} {word[:30]}' {_EX}")
            return


_VI_OPTIONS = (
    val("-c", finding=_EX),
    val("--cmd", finding=_EX),
    val("-S", finding=_SOURCE),
    val("-u", finding=_SOURCE, when=lambda v: v not in ("NONE", "NORC", "DEFAULTS")),
    val("-U", finding=_SOURCE, when=lambda v: v != "NONE"),
    val("-s", finding="reads editor commands from a script file"),
    val("-w -W", writes=True),  # records what was typed into a file
    val("-i", writes=True),  # the viminfo file it writes on exit
    *values("-T -t -q --servername --remote --remote-silent --remote-tab"),
    val("--remote-send", finding="types keys into another vim (its commands run there)"),
    val("--remote-expr", finding="evaluates an expression in another vim"),
    flag("-e -E", finding="runs in Ex mode, reading commands from stdin"),
    flag("-y"), flag("-R"), flag("-Z"), flag("-n"), flag("-b"), flag("-N"), flag("-d"),
    flag("-o"), flag("-O"), flag("-p"), flag("--clean"), flag("--noplugin"),
)
_VI = Entry(
    ("vi", "vim", "view", "rvim", "rview", "vimdiff", "nvim", "gvim", "gview", "evim",
     "vim.basic", "vim.tiny", "vim.nox", "nvi", "elvis", "vis"),
    GNU, _VI_OPTIONS, hooks=(_vi_plus,), no_canonical=True,
)  # fmt: skip
_EMACS = Entry(
    ("emacs", "emacs-nox", "emacs-gtk", "xemacs", "emacsclient"),
    GNU,
    (
        val("--eval", finding=_LISP),
        val("-e --execute", finding=_LISP),
        val("-l --load", finding=_LISP),
        val("-f --funcall", finding=_LISP),
        val("--script", finding=_LISP),
        val("-x", finding=_LISP),
        val("--init-directory", finding=_LISP),
        val("--insert", finding="reads a file into the buffer"),
        val("-L --directory"),
        val("-a --alternate-editor", runs="words"),
        flag("--batch"), flag("-Q --quick"), flag("-nw"), flag("-q --no-init-file"),
        *values("-d --display --fg --bg --font -s --socket-name -T --title --daemon"),
    ),
    hooks=(_vi_plus,),
    no_canonical=True,
)
_NANO = Entry(
    ("nano", "pico", "rnano"),
    GNU,
    (
        val("-s --speller", runs="words"),
        val("-f --rcfile", finding="reads another nanorc (it names programs it runs)"),
        val("-o --operatingdir"), val("-Y --syntax"), val("-T --tabsize"), val("-r --fill"),
        val("-X --wordchars"), val("-Q --quotestr"), val("-C --backupdir", writes=True),
        val("-J --guidestripe"),
    ),
    hooks=(_vi_plus,),
    no_canonical=True,
)


def _ed(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """ed reads its commands from stdin: a known heredoc is not read (``!CMD`` runs a
    shell, ``w FILE`` writes), so stdin is a finding."""
    del parsed
    out.finding(f"'{argv[0]}' reads editor commands from stdin (! runs a shell, w writes)")


_ED = Entry(("ed", "red"), POSIX, (val("-p"), flag("-s"), flag("-G"), flag("-v")),
            hooks=(_ed,), no_canonical=True)
_JOE = Entry(("joe", "jmacs", "jstar", "jpico", "rjoe"), GNU, hooks=(_ed,), no_canonical=True)

#: ex (and vi -e) is Ex mode: it reads editor commands from stdin, as ed does.
_EX_MODE = Entry(("ex", "nex"), GNU, _VI_OPTIONS, hooks=(_vi_plus, _ed), no_canonical=True)

ENTRIES: tuple[Entry, ...] = (_VI, _EX_MODE, _EMACS, _NANO, _ED, _JOE)
