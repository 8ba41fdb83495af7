"""Catalog family: network."""

from __future__ import annotations

from shellgate.shell.catalog.entry import Entry

ENTRIES: tuple[Entry, ...] = ()
