"""The capability table: what programs can do through their options, by name.

``capabilities.csv`` (beside this module) lists programs that can run other
programs (``run``), load libraries (``load``) or write files (``write``)
through their options or input, with an optional phrase saying how. It is data
about programs the catalog may not have an entry for: a program listed here
*with* an entry has its options read by that entry; one *without* is matched
as written, and what it runs is not seen. :func:`unmodelled` answers for the
second kind; ``policy lint`` and ``check`` say so to the admin
(:mod:`shellgate.policy.unmodelled`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from shellgate.shell.catalog.registry import lookup

#: The capabilities a row may name, in the order messages list them.
KINDS = ("run", "load", "write")


@dataclass(frozen=True)
class Capability:
    """One row of the table."""

    program: str
    kinds: tuple[str, ...]  # of KINDS
    how: str = ""  # shellgate's own phrase: "julia -e runs code"

    def risk(self) -> str:
        """What an allow of the program lets the agent do."""
        parts = {"run": "run any program", "load": "load a library of its choosing",
                 "write": "write files its options name"}  # fmt: skip
        return " and ".join(parts[kind] for kind in KINDS if kind in self.kinds)


def parse(text: str) -> dict[str, Capability]:
    """Rows ``program, kinds[, how]``; ``#`` comments and blank lines are skipped.
    An unknown kind or a repeated program is an error (the table is checked by a test)."""
    table: dict[str, Capability] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split(",", 2)]
        if len(fields) < 2:
            raise ValueError(f"capabilities.csv:{number}: expected 'program, kinds[, how]'")
        program, kinds = fields[0], tuple(fields[1].split())
        unknown = set(kinds) - set(KINDS)
        if unknown or not kinds or program in table:
            raise ValueError(f"capabilities.csv:{number}: bad row {line!r}")
        table[program] = Capability(program, kinds, fields[2] if len(fields) > 2 else "")
    return table


@cache
def table() -> dict[str, Capability]:
    """The packaged table (read once)."""
    text = resources.files("shellgate.shell.catalog").joinpath("capabilities.csv")
    return parse(text.read_text(encoding="utf-8"))


def unmodelled(program: str) -> Capability | None:
    """The row of ``program`` (a basename) when the catalog has no entry for it."""
    row = table().get(program)
    return row if row is not None and lookup(program) is None else None
