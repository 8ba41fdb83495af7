"""Rule patterns read as commands: the canonical side of ``policy.csv`` patterns.

A plain pattern (not ``re:``) whose command has a catalog entry is read by the
same engine as a segment (``rm -rf *`` → ``rm -f -r``, a final `` *`` kept as
"any further words"), and compiled to a regex over canonical forms in which
the pattern's options are required in any order among any others
(``argv/canonical.pattern_regex``).
"""

from __future__ import annotations

from shellgate.shell.argv.canonical import pattern_regex
from shellgate.shell.catalog.read import read


def pattern_source(text: str) -> str | None:
    """The canonical regex source of pattern ``text``, or ``None`` when it has none."""
    words = text.split(" ")
    any_tail = len(words) > 1 and words[-1] == "*"
    if any_tail:
        words = words[:-1]
    if not words or "" in words or "*" in words[0]:
        return None
    reading = read(tuple(words))
    if reading is None or reading.canonical is None:
        return None
    return pattern_regex(reading.canonical, any_tail)
