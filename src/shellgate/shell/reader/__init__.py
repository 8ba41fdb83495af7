"""Reading bash: the parser, its known misreadings, heredocs, words, redirects,
and the walker that drafts one segment per simple command.

This room knows the shell language and nothing about particular commands: what
a command runs, loads or writes is the catalog's (``shell/catalog``), applied to
each draft through ``Sink.finish``.
"""
