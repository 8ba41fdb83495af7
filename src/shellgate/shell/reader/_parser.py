"""The tree-sitter-bash parser, built on first use (nothing happens at import time).

py-tree-sitter parsers are not thread-safe, so each thread gets its own; the
language object is immutable and shared.
"""

from __future__ import annotations

import os
import sys
import threading

from tree_sitter import Language, Node, Parser

#: Node kinds that are no statement and hold no command of their own.
SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end"})

_local = threading.local()
_language: Language | None = None

_BINDING = "tree_sitter_bash._binding"


def _bash_language() -> object:
    """tree-sitter-bash's language pointer, without its package ``__init__``.

    That ``__init__`` imports ``importlib.resources`` (for a highlighting query
    shellgate never reads): 15-35 ms of every cold ``shellgate check`` and hook on
    the project machine. The grammar itself is the package's ``_binding``
    extension, loaded here directly; anything unexpected takes the ordinary import.
    """
    module = sys.modules.get(_BINDING)
    if module is None:
        try:
            import importlib.machinery
            import importlib.util

            spec = importlib.util.find_spec("tree_sitter_bash")  # finds; does not import
            where = spec.submodule_search_locations if spec is not None else None
            paths = [
                f"{folder}/_binding{suffix}"
                for folder in (where or ())
                for suffix in importlib.machinery.EXTENSION_SUFFIXES
            ]
            path = next(p for p in paths if os.path.isfile(p))
            loader = importlib.machinery.ExtensionFileLoader(_BINDING, path)
            found = importlib.util.spec_from_file_location(_BINDING, path, loader=loader)
            assert found is not None
            module = importlib.util.module_from_spec(found)
            loader.exec_module(module)
            sys.modules[_BINDING] = module
        except Exception:
            import tree_sitter_bash

            return tree_sitter_bash.language()
    return module.language()


def parse(source: bytes) -> Node:
    """Parse ``source`` as bash and return the root ``program`` node."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        global _language
        if _language is None:
            _language = Language(_bash_language())
        parser = Parser(_language)
        _local.parser = parser
    return parser.parse(source).root_node


def text(source: bytes, start: int, end: int) -> str:
    """Source text between two byte offsets (the command was str, so this decodes)."""
    return source[start:end].decode("utf-8", "surrogatepass")
