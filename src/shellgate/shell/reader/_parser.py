"""The tree-sitter-bash parser, built on first use (nothing happens at import time).

py-tree-sitter parsers are not thread-safe, so each thread gets its own; the
language object is immutable and shared.
"""

from __future__ import annotations

import threading

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

#: Node kinds that are no statement and hold no command of their own.
SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end"})

_local = threading.local()
_language: Language | None = None


def parse(source: bytes) -> Node:
    """Parse ``source`` as bash and return the root ``program`` node."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        global _language
        if _language is None:
            _language = Language(tree_sitter_bash.language())
        parser = Parser(_language)
        _local.parser = parser
    return parser.parse(source).root_node


def text(source: bytes, start: int, end: int) -> str:
    """Source text between two byte offsets (the command was str, so this decodes)."""
    return source[start:end].decode("utf-8", "surrogatepass")
