"""``shellgate hook claude-code`` / ``shellgate hook gemini-cli``: shellgate's policy on a
host's own shell tool, through the host's hook protocol (``docs/hooks-host.md``).

* :mod:`~shellgate.hooks_host.hosts`: the hosts' payload and answer formats;
* :mod:`~shellgate.hooks_host.run`: one decision, audited, then exit (fail closed).

Importing this package imports nothing else: the command line reaches it before
it imports typer, so a hook pays only for the decision.
"""
