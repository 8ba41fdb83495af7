"""Counts kept from audit records, with bounded label values (``ops/metrics.py``).

Labels are the gate's own vocabulary (effects, layers, executors, outcomes) and
the admin's rule references. Never a command, a subject's text or a call_id.
Rules and layers are bounded twice: a value is cut to :data:`MAX_LABEL_CHARS`,
and after :data:`MAX_RULES` distinct rules (:data:`MAX_LAYERS` layers) any new
one is counted as ``_other``, so a policy with a runaway generator cannot blow
up the time series.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Mapping

MAX_LABEL_CHARS = 200
MAX_RULES = 500
MAX_LAYERS = 64
OTHER = "_other"
MAX_KEPT_CALLS = 10_000  # decisions remembered for the executor of a later result

EFFECTS = frozenset({"allow", "sandbox", "ask", "deny"})
EXECUTORS = frozenset({"local", "bwrap"})
ANSWERS = frozenset({"allow_once", "allow_session", "deny"})
RECORD_TYPES = frozenset(
    {"decision", "approval", "result", "started", "invalid", "task", "refused", "handoff", "link"}
)
#: Result outcomes (see docs/operations.md): what became of a call that was decided.
OUTCOMES = (
    "exit_0", "exit_nonzero", "timed_out", "signal", "error", "denied", "not_approved", "aborted",
)


class Bounded:
    """Label values as seen, cut and capped (first come, first kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: set[str] = set()

    def __call__(self, value: object) -> str:
        if value is None or value == "":
            return ""
        text = str(value)
        if len(text) > MAX_LABEL_CHARS:
            text = text[: MAX_LABEL_CHARS - 1] + "…"
        if text in self.seen:
            return text
        if len(self.seen) >= self.limit:
            return OTHER
        self.seen.add(text)
        return text


def result_outcome(record: Mapping[str, object]) -> str:
    """One of :data:`OUTCOMES` for a ``result`` record."""
    outcome = record.get("outcome")
    if outcome == "denied":
        return "denied"
    if outcome == "not approved":
        return "not_approved"
    if outcome == "aborted":
        return "aborted"
    if outcome is not None:  # execution error, wrapper error, task failed, error
        return "error"
    if record.get("timed_out") is True:
        return "timed_out"
    if record.get("signal") is not None:
        return "signal"
    code = record.get("exit_code")
    if code == 0:
        return "exit_0"
    if isinstance(code, int):
        return "exit_nonzero"
    return "error"


class AuditTally:
    """Counters over the audit records read so far (they only ever go up)."""

    def __init__(self) -> None:
        self.decisions: Counter[tuple[str, str, str]] = Counter()
        self.results: Counter[tuple[str, str]] = Counter()
        self.approvals: Counter[tuple[str]] = Counter()
        self.records: Counter[tuple[str]] = Counter()
        self.unreadable = 0
        self.last_seq = 0
        self._rules = Bounded(MAX_RULES)
        self._layers = Bounded(MAX_LAYERS)
        self._executor_of: OrderedDict[str, str] = OrderedDict()

    def add(self, record: Mapping[str, object]) -> None:
        kind = record.get("type")
        self.records[(kind if isinstance(kind, str) and kind in RECORD_TYPES else OTHER,)] += 1
        seq = record.get("seq")
        if isinstance(seq, int):
            self.last_seq = seq
        if kind == "decision":
            effect = record.get("decision")
            self.decisions[
                (
                    effect if isinstance(effect, str) and effect in EFFECTS else OTHER,
                    self._layers(record.get("layer")),
                    self._rules(record.get("rule")),
                )
            ] += 1
            call_id, executor = record.get("call_id"), record.get("executor")
            if isinstance(call_id, str) and isinstance(executor, str):
                self._executor_of[call_id] = executor
                if len(self._executor_of) > MAX_KEPT_CALLS:
                    self._executor_of.popitem(last=False)
        elif kind == "approval":
            answer = record.get("answer")
            known = isinstance(answer, str) and answer in ANSWERS
            self.approvals[(answer if known else OTHER,)] += 1  # type: ignore[index]
        elif kind == "result":
            executor = record.get("executor")
            if not isinstance(executor, str):  # refused before running: the decision's
                call_id = record.get("call_id")
                executor = self._executor_of.get(call_id, "") if isinstance(call_id, str) else ""
            if executor and executor not in EXECUTORS:
                executor = OTHER
            self.results[(executor, result_outcome(record))] += 1
