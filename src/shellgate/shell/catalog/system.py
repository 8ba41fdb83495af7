"""Catalog family: system — signals, service managers, the machine's power.

Rules on these name what happens, and each tool has more than one spelling of it:

* ``kill``: the pids after ``--`` as bash reads them (``kill -9 -01`` is
  ``kill -9 -- -1``: every process), the signal words kept as written;
* ``systemctl``/``loginctl``: options dropped, so the verb follows the name
  (``systemctl --force -i reboot`` is ``systemctl reboot``).

Each such spelling is the entry's canonical form and also a deny-side form
(``Reading.forms``), so ``re:`` rules written for it meet it too.
"""

from __future__ import annotations

import re
import signal

from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val

#: bash's integer syntax (``legal_number``): blanks around, a sign, decimal digits.
_NUMBER = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)[ \t\n\v\f\r]*")
_KILL_OPTION_ARG = frozenset({"-s", "-n", "--signal", "-q", "--queue"})


def _number(spec: str) -> str | None:
    """A signal as its number (``KILL``, ``SIGKILL``, ``kill``, ``09`` are ``9``)."""
    if spec.isdigit():
        return str(int(spec))
    name = spec.upper()
    name = name if name.startswith("SIG") else "SIG" + name
    try:
        return str(signal.Signals[name].value)
    except KeyError:
        return None


def _signal_numbers(options: Argv) -> Argv:
    """``-s KILL``, ``-sKILL``, ``--signal=KILL``, ``-n 9``, ``-KILL``, ``-SIGKILL``
    all as ``-9``: a rule on ``kill -9 *`` meets every spelling of the signal."""
    out: list[str] = []
    i = 0
    while i < len(options):
        word, start = options[i], i
        spec: str | None = None
        if word in ("-s", "-n", "--signal") and i + 1 < len(options):
            spec, i = options[i + 1], i + 1
        elif word.startswith("--signal="):
            spec = word.partition("=")[2]
        elif word[:2] in ("-s", "-n") and len(word) > 2 and _number(word[2:]) is not None:
            spec = word[2:]
        elif word.startswith("-") and not word.startswith("--") and word not in ("-q",):
            spec = word[1:]
        number = _number(spec) if spec is not None else None
        if number is not None:
            out.append("-" + number)
        else:
            out.extend(options[start : i + 1])  # not a signal it knows: as written
        i += 1
    return tuple(out)


def kill_form(argv: Argv, *, numbers: bool = False) -> Argv | None:
    """``kill -9 -01`` → ``kill -9 -- -1``: the signal words, ``--``, the pids.

    As bash's ``kill`` reads it: ``-s SIG``/``-n NUM`` (and procps ``-q VALUE``),
    one ``-SIG`` word, ``--``; every word after those is a pid or job, and a
    number is read as an integer (``-01``, ``' -1'`` and ``-0001`` are ``-1``).
    ``None`` when it lists signals, names no pid, or is spelled so already.
    ``numbers``: every spelling of a known signal as its number (``-9``).
    """
    i, n = 1, len(argv)
    signal = False
    while i < n:
        word = argv[i]
        if word in ("-l", "-L", "--list", "--table") or word.startswith("--list="):
            return None  # lists signal names, sends nothing
        if word in _KILL_OPTION_ARG:
            signal |= word != "-q" and word != "--queue"
            i += 2
            continue
        if word == "--":
            i += 1
            break
        if word.startswith(("--signal=", "--queue=")) or (
            word[:2] in ("-s", "-n") and len(word) > 2
        ):
            signal |= not word.startswith("--queue=")
            i += 1
            continue
        if word.startswith("-") and len(word) > 1 and not signal:
            signal = True
            i += 1
            continue
        break
    options = argv[1 : min(i, n)]
    if numbers:
        options = _signal_numbers(options)
    if options[-1:] == ("--",):
        options = options[:-1]
    pids = []
    for word in argv[i:]:
        number = _NUMBER.fullmatch(word)
        if number is not None:  # as text: int() refuses more than 4300 digits
            sign, digits = number.group(1), number.group(2).lstrip("0") or "0"
            word = ("-" if sign == "-" and digits != "0" else "") + digits
        pids.append(word)
    form = (argv[0], *options, "--", *pids)
    return form if pids and form != argv else None


def _kill_words(argv: Argv, parsed: Parsed) -> list[str]:
    del parsed
    return list((kill_form(argv, numbers=True) or argv)[1:])


def _kill_form(argv: Argv, parsed: Parsed, out: Reading) -> None:
    del parsed
    # The signal as written (rules name `-s KILL`) and as its number (`-9`).
    for form in (kill_form(argv), kill_form(argv, numbers=True)):
        if form is not None and form not in out.forms:
            out.forms.append(form)


def _verb_form(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``systemctl --force reboot`` → ``systemctl reboot`` (getopt permutes)."""
    form = (argv[0], *parsed.words)
    if parsed.words and form != argv:
        out.forms.append(form)


#: Options taking an argument (systemd 252 and later); every other option is a flag.
_SYSTEMCTL = (
    val("-H --host"), val("-M --machine"), val("-t --type"), val("-p --property"), val("-P"),
    val("-s --signal"), val("-n --lines"), val("-o --output"), val("-C --capsule"),
    val("--state"), val("--job-mode"), val("--check-inhibitors"), val("--kill-whom"),
    val("--kill-who"), val("--kill-value"), val("--what"), val("--legend"), val("--preset-mode"),
    val("--root"), val("--image"), val("--image-policy"), val("--boot-loader-menu"),
    val("--boot-loader-entry"), val("--reboot-argument"), val("--timestamp"), val("--message"),
    val("--drop-in"), val("--when"),
)  # fmt: skip
_LOGINCTL = (
    val("-H --host"), val("-M --machine"), val("-p --property"), val("-P"), val("-n --lines"),
    val("-o --output"), val("-s --signal"), val("--kill-whom"), val("--kill-who"),
)  # fmt: skip
#: systemd's halt, poweroff and reboot: one binary, the same flags.
_POWER = (
    flag("--halt"), flag("-p --poweroff"), flag("--reboot"), flag("-f --force"),
    flag("-w --wtmp-only"), flag("-d --no-wtmp"), flag("-n --no-sync"), flag("--no-wall"),
)  # fmt: skip

ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("kill",),
        options=(val("-s --signal"), val("-n"), val("-q --queue"), flag("-l --list"),
                 flag("-L --table")),
        hooks=(_kill_form,),
        canonical_words=_kill_words,
    ),
    Entry(("systemctl",), options=_SYSTEMCTL, hooks=(_verb_form,), canonical_drops_options=True),
    Entry(("loginctl",), options=_LOGINCTL, hooks=(_verb_form,), canonical_drops_options=True),
    Entry(("halt", "poweroff", "reboot"), options=_POWER),
    Entry(("shutdown",), options=(flag("-H --halt"), flag("-P --poweroff"), flag("-r --reboot"),
                                  flag("-h"), flag("-k"), flag("--no-wall"), flag("-c"),
                                  flag("--show"))),
)  # fmt: skip
