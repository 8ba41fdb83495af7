"""Catalog family: text and data converters that can write a file of their choosing.

``xxd``, ``shuf``, ``split``, ``csplit``, ``iconv``, ``pandoc``, ``base64`` and
their kin read and print; an admin allows them as filters. Their output
options and operands name files they write: ``shuf -o F``, ``iconv -o F``,
``pandoc -o F``, ``xxd [-r] IN OUT`` (the second operand), ``split``'s and
``csplit``'s prefix (the pieces land there). ``split --filter=CMD`` hands
each piece to ``sh -c CMD``: a shell string, its commands segments of their own.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, optional, val, values


def _second(parsed: Parsed) -> list[str]:
    """``xxd IN OUT``: the second operand is written."""
    return parsed.words[1:2]


def _prefix(parsed: Parsed) -> list[str]:
    """``split [FILE [PREFIX]]``: the pieces are PREFIX + suffix (``x`` by default)."""
    prefix = parsed.words[1] if len(parsed.words) > 1 else "x"
    suffixes = parsed.values("--additional-suffix")
    return [prefix + "aa" + (suffixes[-1] if suffixes else "")]


def _csplit(parsed: Parsed) -> list[str]:
    prefix = (parsed.values("-f") or ["xx"])[-1]
    return [prefix + "00"]


def _split_filter(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for command in parsed.values("--filter"):
        out.payloads.append((f"{argv[0]} --filter command", command))


ENTRIES: tuple[Entry, ...] = (
    # xxd also takes -cols, -len…: read by their letter, as xxd reads them (-c -l…).
    Entry(("xxd",), GNU, (*values("-c -g -l -o -s -n"), *(flag(f"-{c}") for c in "rpibeuaCd")),
          writes=_second),
    Entry(("shuf",), GNU, (val("-o --output", writes=True), val("-n --head-count"),
                           val("-i --input-range"), val("--random-source"), flag("-e --echo"),
                           flag("-r --repeat"), flag("-z --zero-terminated"))),
    Entry(("split",), GNU, (val("--filter"), val("-a --suffix-length"),
                            val("--additional-suffix"), val("-b --bytes"),
                            val("-C --line-bytes"), val("-l --lines"), val("-n --number"),
                            val("-t --separator"), optional("-d --numeric-suffixes"),
                            optional("-x --hex-suffixes"), flag("-e --elide-empty-files"),
                            flag("-u --unbuffered"), flag("--verbose", inert=True)),
          writes=_prefix, hooks=(_split_filter,)),
    Entry(("csplit",), GNU, (val("-f --prefix"), val("-b --suffix-format"), val("-n --digits"),
                             flag("-k --keep-files"), flag("-s -q --quiet --silent"),
                             flag("-z --elide-empty-files"), flag("--suppress-matched")),
          writes=_csplit),
    Entry(("iconv",), GNU, (val("-o --output", writes=True), val("-f --from-code"),
                            val("-t --to-code"), flag("-c"), flag("-s --silent"),
                            flag("-l --list"))),
    Entry(("pandoc",), GNU, (val("-o --output", writes=True),
                             val("--extract-media", writes=True),
                             val("--lua-filter", finding="runs a Lua filter (code) from a file"),
                             val("-F --filter", runs="program"),
                             val("--pdf-engine", runs="program"),
                             val("--pdf-engine-opt"),
                             *values("-f -r --from --read -t -w --to --write -s -M --metadata "
                                     "-V --variable --template -H -B -A --css --resource-path "
                                     "--data-dir --defaults -d --bibliography --csl")),
          no_canonical=True),
)
