"""Framework tool calls paused on an ``ask``, kept until a person answers them.

A framework that approves by pausing a run (pydantic-ai's deferred tool calls)
resumes with the tool call's id and a yes or no that names nobody. The adapter
keeps here, per paused call, the gate's decision (to hand to ``gate.approve``
with the person's name) and the exact call the framework will run on resume.

No framework is imported here: this is plain bookkeeping, bounded and expiring
like the gate's own table of decisions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic_core import PydanticSerializationError, to_jsonable_python

from shellgate.resume import GateDecision

#: Paused calls kept at once per adapter (the gate keeps at most as many decisions).
MAX_PAUSED = 4096


def canonical(arguments: Mapping[str, object]) -> str:
    """One text per argument set, whatever the key order: what an approval is bound to."""
    try:
        plain = to_jsonable_python(dict(arguments))
    except PydanticSerializationError:
        plain = repr(sorted(arguments.items(), key=lambda kv: kv[0]))
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass
class Paused:
    """One framework tool call waiting for a person: the gate's decision and the exact call."""

    decision: GateDecision
    call_id: str  # the framework's tool call id
    tool: str  # the tool name the model called
    arguments: str  # canonical(the arguments the framework will pass on resume)
    gate_arguments: dict[str, object]  # what the gate decided (its own ``bash`` arguments)


class PausedCalls:
    """Paused calls by decision id: bounded, expiring with their decision, taken once."""

    def __init__(self, limit: int = MAX_PAUSED) -> None:
        self._calls: dict[str, Paused] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, paused: Paused) -> None:
        with self._lock:
            self._prune()
            self._calls[paused.decision.id] = paused
            while len(self._calls) > self._limit:  # the oldest goes: the gate forgets it too
                del self._calls[next(iter(self._calls))]

    def get(self, decision_id: str) -> Paused | None:
        with self._lock:
            self._prune()
            return self._calls.get(decision_id)

    def take(self, decision_id: str) -> Paused | None:
        """Remove and return it: whoever takes a paused call is its only user."""
        with self._lock:
            self._prune()
            return self._calls.pop(decision_id, None)

    def take_call(self, call_id: str, tool: str, arguments: str) -> Paused | None:
        """The paused call with this framework call id, tool and arguments, if any (taken)."""
        with self._lock:
            self._prune()
            for key, paused in self._calls.items():
                if (paused.call_id, paused.tool, paused.arguments) == (call_id, tool, arguments):
                    return self._calls.pop(key)
        return None

    def _prune(self) -> None:
        now = time.time()
        for key in [k for k, p in self._calls.items() if p.decision.expires_at <= now]:
            del self._calls[key]
