"""Catalog family: wrappers, commands whose operands are a command they run.

Each wrapper's command becomes its own segment (an allow on the wrapper covers
the wrapper only); ``NAME=value`` words a wrapper takes (``env``, ``sudo``) are
that segment's environment, read like a shell prefix assignment.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU_PREFIX, GNU_PREFIX_ASSIGNMENTS, Parsed
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Reading,
    Runs,
    flag,
    letters,
    val,
    values,
)
from shellgate.shell.catalog.read import add_program, split_words


def _replace_program(argv: Argv, out: Reading, inner: Argv, parsed: Parsed) -> None:
    label = f"{argv[0]} payload"
    out.programs[:] = [p for p in out.programs if p.label != label]
    add_program(out, label, inner, parsed.assignments)


def _env(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``env -S 'CMD ARGS'`` splits its string into the command line; ``env -`` is ``-i``."""
    rest = argv[parsed.end :]
    if rest[:1] == ("-",):
        out.finding(f"'{argv[0]} -' runs its command with an empty environment")
        rest = rest[1:]
        _replace_program(argv, out, rest, parsed)
    split = [w for v in parsed.values("-S") for w in split_words(v)]
    if split:
        _replace_program(argv, out, (*split, *rest), parsed)

ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("env",),
        GNU_PREFIX_ASSIGNMENTS,
        options=(
            flag("-i --ignore-environment", finding="runs its command with an empty environment"),
            val("-u --unset", finding="unsets a variable of its command's environment"),
            val("-C --chdir", finding="runs its command in another directory"),
            val("-S --split-string", finding="splits a string into its command line"),
            flag("-0 --null", inert=True),
            flag("-v --debug", inert=True),
        ),
        runs=Runs(),
        hooks=(_env,),
    ),
    Entry(("timeout",), GNU_PREFIX, (*values("--signal --kill-after"), *letters("sk")),
          runs=Runs(skip=1)),
    Entry(("nice",), GNU_PREFIX, (val("-n --adjustment"),), runs=Runs()),
    Entry(("nohup",), GNU_PREFIX, runs=Runs()),
)  # fmt: skip
