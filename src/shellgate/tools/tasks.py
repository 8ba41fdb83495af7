"""Background tasks: ids, owners, limits, and completion notices.

Invariants:

* Ids are ``bash-1``, ``bash-2``, … per registry (one registry per gate), never
  reused, not even after a task ends.
* A task belongs to the ``(subject, tenant, session)`` that started it; any other
  owner asking for it gets exactly the "unknown task" answer (no oracle).
* Settlement is first-wins: a task's end is *settled* either by a read that shows
  its final status, by ``bash_kill``, or by its completion notice — whichever comes
  first. Only an unsettled end produces a notice, and at most one.
* A task's end callbacks (its result record) cannot stop its notice: one that
  raises is logged and the rest still run.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from shellgate.errors import TaskError
from shellgate.executors.base import TaskProcess
from shellgate.models import RunResult
from shellgate.tools import render

_log = logging.getLogger(__name__)


class Owner(NamedTuple):
    subject: str
    tenant: str
    session: str


class NoticeSink(Protocol):
    """Receives one completion notice for its owner (durable context, not a wake-up)."""

    def __call__(self, owner: Owner, text: str) -> None: ...


class QueueNotices:
    """The default sink: notices wait per owner until the host collects them.

    A notice still waiting when its owner reads the task's final status is
    withdrawn: the model has seen the end already.
    """

    def __init__(self) -> None:
        self._pending: dict[Owner, list[tuple[str, str]]] = {}

    def __call__(self, owner: Owner, text: str, task_id: str = "") -> None:
        self._pending.setdefault(owner, []).append((task_id, text))

    def retract(self, owner: Owner, task_id: str) -> None:
        kept = [(t, text) for t, text in self._pending.get(owner, []) if t != task_id]
        if kept:
            self._pending[owner] = kept
        else:
            self._pending.pop(owner, None)

    def pop(self, owner: Owner) -> list[str]:
        return [text for _, text in self._pending.pop(owner, [])]


@dataclass
class Task:
    id: str
    owner: Owner
    command: str
    process: TaskProcess
    settled: bool = False
    on_end: list[Callable[[Task], None]] = field(default_factory=list)

    @property
    def result(self) -> RunResult | None:
        return self.process.result


class TaskRegistry:
    def __init__(self, max_tasks: int, sink: NoticeSink) -> None:
        self.max_tasks = max_tasks
        self._sink = sink
        self._ids = itertools.count(1)
        self._tasks: dict[str, Task] = {}

    def running(self, owner: Owner) -> int:
        return sum(1 for t in self._tasks.values() if t.owner == owner and t.result is None)

    def check_capacity(self, owner: Owner) -> None:
        """Raise before anything starts when the owner is at its limit."""
        count = self.running(owner)
        if count >= self.max_tasks:
            raise TaskError(
                f"too many background tasks running ({count} of {self.max_tasks}); "
                "read one to completion with bash_output or stop one with bash_kill first"
            )

    def reserve_id(self) -> str:
        """The next id, taken for good (ids are never reused, even if the start fails)."""
        return f"bash-{next(self._ids)}"

    def add(
        self, owner: Owner, command: str, process: TaskProcess, *, task_id: str | None = None
    ) -> Task:
        task = Task(id=task_id or self.reserve_id(), owner=owner, command=command, process=process)
        self._tasks[task.id] = task
        process.done.add_done_callback(lambda _f: self._ended(task))
        return task

    def get(self, owner: Owner, task_id: str) -> Task:
        task = self._tasks.get(task_id)
        if task is None or task.owner != owner:
            raise TaskError(f"unknown task {task_id}")
        return task

    def _ended(self, task: Task) -> None:
        for callback in task.on_end:
            try:
                callback(task)
            except Exception:  # a done-callback: an escaping error would cost the notice
                _log.exception("end callback of background task %s failed", task.id)
        if task.settled or task.process.kill_requested:
            task.settled = True
            return
        task.settled = True
        text = render.completion_notice(task.id, task.command, task.result)
        if isinstance(self._sink, QueueNotices):
            self._sink(task.owner, text, task.id)
        else:
            self._sink(task.owner, text)

    def read(self, task: Task) -> str:
        delta = task.process.read_output()
        result = task.result
        if result is not None:
            # Reading the final status settles it: no notice for what was seen.
            task.settled = True
            if isinstance(self._sink, QueueNotices):
                self._sink.retract(task.owner, task.id)
        return render.task_output(
            delta.stdout,
            delta.stderr,
            lost=delta.lost,
            spill_paths=delta.spill_paths,
            result=result,
        )

    def kill(self, task: Task) -> str:
        if task.process.kill():
            return render.kill_requested(task.id)
        task.settled = True
        return render.already_finished(task.id, task.result)

    async def stop_owned(self, owner: Owner) -> None:
        """Stop every task of ``owner`` and wait for each (its MCP session ended).

        Nobody can read them any more, so they are settled (no notice) and a
        notice still waiting for the owner is dropped.
        """
        owned = [t for t in self._tasks.values() if t.owner == owner]
        for task in owned:
            task.settled = True
            task.process.kill()
        if isinstance(self._sink, QueueNotices):
            self._sink.pop(owner)
        pending = [t.process.done for t in owned if not t.process.done.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every running task and wait for each."""
        for task in self._tasks.values():
            task.settled = True
            task.process.kill()
        pending = [t.process.done for t in self._tasks.values() if not t.process.done.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
