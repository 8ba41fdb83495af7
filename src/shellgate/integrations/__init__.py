"""Adapters that put the gate in front of agent frameworks' shell tools.

One module per framework, each an optional extra (``pip install
'shellgate[pydantic-ai]'`` …) that imports its framework only when used. Every
adapter is built on the public API alone — :meth:`Gate.decide`,
:meth:`Gate.approve` and :meth:`Gate.call` — so an ``ask`` pauses the
framework's run, a person's answer resumes it, and the audit log names that
person (docs/integrations.md).
"""
