"""Framework tool calls paused on an ``ask``, kept until a person answers them.

A framework that approves by pausing a run (pydantic-ai's deferred tool calls)
resumes with the tool call's id and a yes or no that names nobody. The adapter
keeps here, per paused call, the gate's decision (to hand to ``gate.approve``
with the person's name) and the exact call the framework will run on resume.

No framework is imported here: this is plain bookkeeping, bounded and expiring
like the gate's own table of decisions. :class:`Kept` is that table for every
adapter (pydantic-ai's paused calls, LangChain's paused tools, the Claude hook's
held asks).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic_core import PydanticSerializationError, to_jsonable_python

from shellgate.tools.resume import GateDecision

V = TypeVar("V")

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


class Kept(Generic[V]):
    """Values kept by key for a later look: bounded (the oldest goes first), expiring,
    each taken once. Every adapter keeps its paused or held calls in one of these."""

    def __init__(self, expires: Callable[[V], float], limit: int) -> None:
        self._values: dict[str, V] = {}
        self._expires = expires
        self._limit = limit
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def put(self, key: str, value: V) -> None:
        with self._lock:
            self._prune()
            self._values.pop(key, None)
            self._values[key] = value
            while len(self._values) > self._limit:  # the oldest goes: decide it again
                del self._values[next(iter(self._values))]

    def get(self, key: str) -> V | None:
        with self._lock:
            self._prune()
            return self._values.get(key)

    def take(self, key: str) -> V | None:
        """Remove and return it: whoever takes a kept value is its only user."""
        with self._lock:
            self._prune()
            return self._values.pop(key, None)

    def take_first(self, match: Callable[[V], bool]) -> V | None:
        with self._lock:
            self._prune()
            for key, value in self._values.items():
                if match(value):
                    return self._values.pop(key)
        return None

    def _prune(self) -> None:
        now = time.time()
        for key in [k for k, v in self._values.items() if self._expires(v) <= now]:
            del self._values[key]


class PausedCalls(Kept[Paused]):
    """Paused calls by decision id: bounded, expiring with their decision, taken once."""

    def __init__(self, limit: int = MAX_PAUSED) -> None:
        super().__init__(lambda paused: paused.decision.expires_at, limit)

    def add(self, paused: Paused) -> None:
        self.put(paused.decision.id, paused)

    def take_call(self, call_id: str, tool: str, arguments: str) -> Paused | None:
        """The paused call with this framework call id, tool and arguments, if any (taken)."""
        wanted = (call_id, tool, arguments)
        return self.take_first(lambda p: (p.call_id, p.tool, p.arguments) == wanted)
