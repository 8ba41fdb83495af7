"""The command catalog: one declarative entry per command.

An entry (:mod:`.entry`) declares a command's names, option dialect, which
options run a program, load code, write or delete files, and its subcommands;
:mod:`.read` is the one engine that applies entries; :mod:`.registry` finds an
entry by name. Entries live in family modules: ``wrappers``, ``debuggers``,
``interpreters``, ``builtins``, ``coreutils``, ``findutils``, ``vcs``,
``archivers``, ``network``, ``build``, ``system``. Adding or fixing a tool touches one entry.
"""

from shellgate.shell.catalog.read import read
from shellgate.shell.catalog.registry import entries, lookup

__all__ = ["entries", "lookup", "read"]
