"""Third-party layers under a deadline, off the caller's thread, one hop per call.

A layer's time budget (``[policy] plugin_timeout_ms``) is enforced while it runs,
not measured after it returns: a layer that has not answered by its deadline is
an :class:`Overrun` for that call (the engine makes it a ``deny`` naming the
layer), and the caller — the event loop, or ``shellgate check`` — waits no longer.

How (cheap on the common path):

* The engine's waterfall is a generator that yields each *guarded* ask as
  ``(name, ask)`` and is sent the answer. The caller runs it up to the first
  guarded ask (the built-in layers, for every segment: they are ours and bounded,
  no thread for them); the rest of the call, from there, is *one* job on a worker
  thread. So a call costs one thread hop however many segments and plugins it
  has, and none without plugins. An ask of a quarantined layer (below) is
  answered in place, before any hop.
* The worker publishes which guarded layer it is asking and since when; the
  caller sleeps until the job is done or that layer's deadline, whichever first.
  At a deadline the call is *abandoned*: the caller finishes the waterfall itself
  with an :class:`Overrun` for the late layer, and the worker, when (if ever) the
  late check returns, drops the rest of the job.

A hung thread cannot be killed, so what a hung plugin can pile up is bounded:

* a layer whose check overran and has not returned is *quarantined*: later asks
  of it are answered ``Overrun(busy=True)`` at once, without calling it, so a
  plugin stuck for good holds one worker thread (one per call that was already
  inside it when it hung), never one per later call;
* checks of one layer never run at the same time (a per-layer lock, as when all
  ran on the loop's thread), and a wait for that lock counts against the budget;
* at most ``MAX_IDLE_WORKERS`` threads stay parked between calls; workers are
  daemon threads, so a stuck one never holds up interpreter exit.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio

MAX_IDLE_WORKERS = 4
INLINE_WAIT_S = 0.001  # the longest the event loop waits for a plugin in place (seconds)

A = TypeVar("A")  # an answer
R = TypeVar("R")  # the waterfall's result


class Overrun:
    """Sent instead of an answer: the layer ran out of time (``busy``: it still is)."""

    __slots__ = ("busy",)

    def __init__(self, *, busy: bool) -> None:
        self.busy = busy


Ask = tuple[str, Callable[[], A]]


@dataclass(frozen=True)
class _Done(Generic[R]):
    value: R


Steps = Generator[Ask[A], "A | Overrun", R]


class _Pool:
    """What the worker threads share; never the runner itself, so it can be collected."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[queue.SimpleQueue[_Job[Any, Any] | None]] = []
        self.stuck: dict[str, _Job[Any, Any]] = {}  # layer name -> the call stuck in it
        self.layer_locks: dict[str, threading.Lock] = {}
        self.closed = False

    def layer_lock(self, name: str) -> threading.Lock:
        lock = self.layer_locks.get(name)
        if lock is None:
            with self.lock:
                lock = self.layer_locks.setdefault(name, threading.Lock())
        return lock

    def stop(self) -> None:
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for jobs in idle:
            jobs.put(None)


class _Job(Generic[A, R]):
    """One call's guarded part, driven by a worker and watched by the caller."""

    def __init__(self, steps: Steps[A, R], first: Ask[A], budget_s: float, pool: _Pool) -> None:
        self.lock = threading.Lock()
        self.steps = steps
        self.request: Ask[A] | None = first
        self.budget_s = budget_s
        self.pool = pool
        self.on_done: Callable[[], None] | None = None
        self.asking: str | None = None  # the guarded layer being asked, and since when
        self.since = 0.0
        self.abandoned = False
        self.finished = False
        self.result: R | None = None
        self.error: BaseException | None = None
        self.signal: queue.SimpleQueue[bool] = queue.SimpleQueue()  # one item, when finished

    # -- on the worker ------------------------------------------------------------

    def drive(self) -> None:
        try:
            self._drive()
        except BaseException as exc:  # handed to the caller, who re-raises it
            self._finish(error=exc)

    def _drive(self) -> None:
        while not self.abandoned:
            request = self.request
            assert request is not None
            name, ask = request
            # ``since`` before ``asking``: whoever sees the name sees its start. The
            # caller abandons the job only while ``asking`` is set, under the lock.
            self.since = time.monotonic()
            self.asking = name
            answer = self._ask(name, ask)
            with self.lock:
                self.asking = None
                if self.abandoned:  # the caller answered without us; drop the rest
                    return
            try:
                self.request = self.steps.send(answer)
            except StopIteration as done:
                self._finish(result=done.value)
                return

    def _ask(self, name: str, ask: Callable[[], A]) -> A | Overrun:
        stuck = self.pool.stuck.get(name)
        if stuck is not None and stuck.asking == name:  # still inside its late check
            return Overrun(busy=True)
        lock = self.pool.layer_lock(name)
        if not lock.acquire(timeout=self.budget_s):
            return Overrun(busy=True)
        try:
            return ask()
        finally:
            lock.release()
            if self.pool.stuck.get(name) is self:
                with self.pool.lock:
                    if self.pool.stuck.get(name) is self:
                        del self.pool.stuck[name]  # back from its overrun: usable again

    def _finish(self, *, result: R | None = None, error: BaseException | None = None) -> None:
        with self.lock:
            if self.abandoned:
                return
            self.finished, self.result, self.error = True, result, error
            on_done = self.on_done
        self.signal.put(True)
        if on_done is not None:
            on_done()

    # -- on the caller ------------------------------------------------------------

    def time_left(self) -> float:
        """Seconds until the current ask's deadline (a full budget if none is running)."""
        with self.lock:
            if self.asking is None:
                return self.budget_s
            return max(0.0, self.since + self.budget_s - time.monotonic())

    def expire(self) -> bool:
        """Abandon the job if its current ask is past its deadline; True if so."""
        with self.lock:
            if self.finished or self.asking is None:
                return False
            if time.monotonic() - self.since < self.budget_s:
                return False
            self.abandoned = True
            late = self.asking
        with self.pool.lock:
            self.pool.stuck[late] = self
        return True

    def abandon(self) -> None:
        with self.lock:
            self.abandoned = True

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` for the end; True if it came."""
        try:
            return self.signal.get(timeout=timeout)
        except queue.Empty:
            return False

    def notify(self, on_done: Callable[[], None]) -> bool:
        """Have ``on_done`` called at the end (from the worker); False if it came already."""
        with self.lock:
            if self.finished:
                return False
            self.on_done = on_done
            return True

    def outcome(self) -> R:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]  # set with finished

    def finish_here(self) -> R:
        """After :meth:`expire`: the late ask is an Overrun; finish without the worker."""
        answer: A | Overrun = Overrun(busy=False)
        while True:
            try:
                self.steps.send(answer)
            except StopIteration as done:
                result: R = done.value
                return result
            # A further ask after an overrun (the engine vetoes, so none): not asked.
            answer = Overrun(busy=False)


def _work(jobs: queue.SimpleQueue[_Job[Any, Any] | None], pool: _Pool) -> None:
    while (job := jobs.get()) is not None:
        job.drive()
        del job  # nothing of a call stays referenced while idle
        with pool.lock:
            if pool.closed or len(pool.idle) >= MAX_IDLE_WORKERS:
                return
            pool.idle.append(jobs)


class LayerRunner:
    """Runs the guarded part of a waterfall on a worker thread, under deadlines."""

    def __init__(self) -> None:
        self._pool = _Pool()
        self._finalizer = weakref.finalize(self, self._pool.stop)

    def close(self) -> None:
        """Let the idle workers end (a stuck one ends when its check returns)."""
        self._finalizer()

    def _start(self, job: _Job[A, R]) -> None:
        pool = self._pool
        with pool.lock:
            jobs = pool.idle.pop() if pool.idle else None
        if jobs is None:
            jobs = queue.SimpleQueue()
            threading.Thread(
                target=_work, args=(jobs, pool), name="shellgate-layers", daemon=True
            ).start()
        jobs.put(job)

    def _quarantined(self, name: str) -> bool:
        stuck = self._pool.stuck.get(name)
        return stuck is not None and stuck.asking == name

    def _first_live(self, steps: Steps[A, R], first: Ask[A]) -> Ask[A] | _Done[R]:
        """Answer asks of quarantined layers in place (no thread, no wait).

        Returns the first ask for a worker, or the end if the waterfall got there.
        """
        while True:
            stuck = self._pool.stuck.get(first[0])
            if stuck is None or stuck.asking != first[0]:
                return first
            try:
                first = steps.send(Overrun(busy=True))
            except StopIteration as done:
                return _Done(done.value)

    def run(self, steps: Steps[A, R], first: Ask[A], budget_s: float) -> R:
        """Drive ``steps`` from its first guarded ask ``first``; block until done."""
        live = self._first_live(steps, first)
        if isinstance(live, _Done):
            return live.value
        job = _Job(steps, live, budget_s, self._pool)
        self._start(job)
        while not job.wait(job.time_left()):
            if job.expire():
                return job.finish_here()
        return job.outcome()

    async def run_async(self, steps: Steps[A, R], first: Ask[A], budget_s: float) -> R:
        """As :meth:`run`, awaiting: the event loop runs on while layers are asked.

        A plugin answers in microseconds as a rule, and waking the loop from another
        thread costs more than that: so the loop first waits for the answer itself,
        at most ``INLINE_WAIT_S``, and only a slower answer is awaited.
        """
        live = self._first_live(steps, first)
        if isinstance(live, _Done):
            return live.value
        job = _Job(steps, live, budget_s, self._pool)
        self._start(job)
        if job.wait(min(INLINE_WAIT_S, job.time_left())):
            return job.outcome()
        import asyncio  # here: ``shellgate check`` and hooks decide without an event loop

        loop = asyncio.get_running_loop()
        waiter: list[asyncio.Future[bool]] = [loop.create_future()]

        def settle(finished: bool) -> None:
            if not waiter[0].done():
                waiter[0].set_result(finished)

        def wake() -> None:  # on the worker thread
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(settle, True)

        if not job.notify(wake):
            return job.outcome()
        try:
            while True:
                timer = loop.call_later(job.time_left(), settle, False)
                try:
                    finished = await waiter[0]
                finally:
                    timer.cancel()
                if finished or job.finished:
                    return job.outcome()
                if job.expire():
                    return job.finish_here()
                waiter[0] = loop.create_future()
        except BaseException:
            job.abandon()  # our caller was cancelled: the worker drops the rest
            raise
