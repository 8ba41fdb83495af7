"""Catalog family: coreutils and the everyday file tools."""

from __future__ import annotations

from shellgate.shell.catalog.entry import Entry, flag, optional

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
            flag("-v --verbose", inert=True),
        ),
        writes="all",
        obvious_writer=True,
    ),
)
