"""The catalog's index: a command name to its entry, built on first use.

Each family module (listed in ``FAMILIES``) exports ``ENTRIES``,
and may export ``PATTERNS``: ``(regex, entry)`` pairs for names that come in
versions (``python3.12``, ``perl5.36``). A name listed twice is an error at
build time, so two entries can never disagree about one command.
"""

from __future__ import annotations

import importlib
import re
from functools import cache

from shellgate.shell.catalog.entry import Entry

FAMILIES = (
    "wrappers", "debuggers", "interpreters", "builtins", "coreutils", "findutils",
    "vcs", "archivers", "network", "build", "system", "clitools", "runners",
    "editors", "terminals", "compilers", "languages", "sockets", "textutils", "containers",
    "buildsystems", "devtools", "launchers", "systemtools",
)  # fmt: skip


@cache
def _index() -> tuple[dict[str, Entry], tuple[tuple[re.Pattern[str], Entry], ...]]:
    names: dict[str, Entry] = {}
    patterns: list[tuple[re.Pattern[str], Entry]] = []
    for family in FAMILIES:
        module = importlib.import_module(f"shellgate.shell.catalog.{family}")
        for entry in module.ENTRIES:
            for name in entry.names:
                if name in names:
                    raise ValueError(f"catalog: '{name}' has two entries ({family})")
                names[name] = entry
        for source, entry in getattr(module, "PATTERNS", ()):
            patterns.append((re.compile(source), entry))
    return names, tuple(patterns)


def lookup(name: str) -> Entry | None:
    """The entry for command ``name`` (a basename), or ``None``."""
    names, patterns = _index()
    found = names.get(name)
    if found is not None:
        return found
    for pattern, entry in patterns:
        if pattern.fullmatch(name):
            return entry
    return None


def entries() -> list[Entry]:
    """Every entry once (the catalog-driven tests walk these)."""
    names, patterns = _index()
    unique = {id(e): e for e in [*names.values(), *(e for _, e in patterns)]}
    return list(unique.values())
