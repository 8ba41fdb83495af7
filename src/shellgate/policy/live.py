"""Live reload: build a complete new policy, then swap one reference.

:class:`PolicyLoader` builds :class:`~shellgate.policy.ruleset.PolicyState`
objects: the file sets of ``[policy] paths`` (re-read only when a ``policy.csv``
or ``model.conf`` changed its mtime, size or inode) followed by the sets of the
policy store's head version (re-read only when the head moved). Unchanged sets
keep their indexes; the engine over them is new each time, so a check, which
reads the state once per call, sees one whole version or the other.

:class:`PolicyWatcher` is one thread per gate: it listens on ``shellgate_policy``
(PostgreSQL), polls ``head()`` and the files every ``reload_poll_ms`` as a
safety net (SQLite has no notifications), and upserts the gate's ``sg_hosts``
row on every load, on every change of status and every :data:`HEARTBEAT_S`.
A failure keeps the last good policy and is logged once per change of state.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellgate.errors import PolicyError, StoreError
from shellgate.policy.index import PolicyIndex
from shellgate.policy.loader import MODEL_FILE, POLICY_FILE, load_policy_set
from shellgate.policy.ruleset import PolicyEngine, PolicyState, RuleFinder

if TYPE_CHECKING:
    from shellgate.store.policies import PolicyStore

logger = logging.getLogger("shellgate.policy")

HEARTBEAT_S = 5.0  # seconds between sg_hosts heartbeats
LISTEN_SLICE_S = 0.2  # longest wait in one go: how soon a closing gate's thread ends

Fingerprint = tuple[tuple[int, int, int] | None, ...]


class PolicyLoader:
    """File sets then store sets, cached by fingerprint and version (thread-safe)."""

    def __init__(self, paths: Sequence[Path], store: str | None, store_sets: Sequence[str],
                 *, after: int = 0):
        self.paths = tuple(paths)
        self.after = after  # the last ``after`` file sets come after the store's sets
        self.store_sets = tuple(store_sets)
        self.db = None
        if store is not None:
            from shellgate.store.db import Database

            self.db = Database(store)
        self._policies: PolicyStore | None = None  # once the store answered
        self._lock = threading.Lock()
        self._files: tuple[Fingerprint, list[RuleFinder]] | None = None
        self._stored: tuple[int, list[RuleFinder]] | None = None
        self._state: PolicyState | None = None

    @property
    def display(self) -> str:
        return self.db.display if self.db is not None else "(none)"

    def store(self) -> PolicyStore:
        from shellgate.store.policies import PolicyStore

        if self._policies is None:
            assert self.db is not None
            self._policies = PolicyStore(self.db)
        return self._policies

    def fingerprint(self) -> Fingerprint:
        out: list[tuple[int, int, int] | None] = []
        for path in self.paths:
            for name in (POLICY_FILE, MODEL_FILE):
                try:
                    st = os.stat(path / name)
                except OSError:
                    out.append(None)
                else:
                    out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(out)

    def first(self) -> PolicyState:
        """The start-up state: file sets must load (else :class:`PolicyError`, as
        without a store); a store problem gives a state that denies, naming it."""
        try:
            return self.build(force=True)
        except StoreError as exc:
            with self._lock:
                self._file_indexes()  # broken file sets still stop the gate
            message = str(exc)
            if not message.startswith("policy store "):
                message = f"policy store unreachable or failing: {message}"
            return PolicyState(None, None, message)

    def adopt(self, state: PolicyState) -> None:
        """Take a state loaded elsewhere (file sets only) as the cache, so the first
        poll does not rebuild what is already in force."""
        with self._lock:
            if self.db is None and state.engine is not None and self._state is None:
                self._files = (self.fingerprint(), list(state.engine.indexes))
                self._state = state

    def build(
        self, *, force: bool = False, apply: Callable[[PolicyState], None] | None = None
    ) -> PolicyState:
        """The state for the files and store head now; the cached one if nothing
        changed (``force``: re-read everything). ``apply`` puts a new state in force
        under the lock, so two reloads never swap out of order. Raises
        :class:`PolicyError` or :class:`StoreError`; the caller keeps its last good
        state."""
        with self._lock:
            if force:
                self._files = self._stored = None
            files = self._file_indexes()
            stored = self._store_indexes()
            version = stored[0] if self.db is not None else None
            old = self._state
            if (old is not None and old.engine is not None and old.version == version
                    and not force and self._unchanged(old.engine, stored[1], files)):
                return old
            split = len(files) - self.after
            state = PolicyState(PolicyEngine(files[:split] + stored[1] + files[split:]), version)
            self._state = state
            if apply is not None:
                apply(state)
            return state

    def _unchanged(self, engine: PolicyEngine, stored: list[RuleFinder],
                   files: list[RuleFinder]) -> bool:
        split = len(files) - self.after
        indexes = files[:split] + stored + files[split:]
        return len(engine.indexes) == len(indexes) and all(
            a is b for a, b in zip(engine.indexes, indexes, strict=True))

    def _file_indexes(self) -> list[RuleFinder]:
        stamp = self.fingerprint()
        if self._files is not None and self._files[0] == stamp:
            return self._files[1]
        indexes: list[RuleFinder] = [PolicyIndex(load_policy_set(Path(p))) for p in self.paths]
        self._files = (stamp, indexes)
        return indexes

    def _store_indexes(self) -> tuple[int, list[RuleFinder]]:
        if self.db is None:
            return 0, []
        from shellgate.store.policy_push import store_sources

        policies = self.store()
        head = policies.head()
        if self._stored is not None and self._stored[0] == head:
            return self._stored
        version, sets = policies.versioned_sets()
        sources = store_sources(version, sets, self.store_sets, self.display)
        self._stored = (version, [PolicyIndex(s) for s in sources])
        return self._stored

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


class Reloadable(Protocol):
    """What the watcher drives: the casbin layer (its state in force, the loader
    that builds new ones, and the one-reference swap)."""

    @property
    def state(self) -> PolicyState: ...

    def loader(self) -> PolicyLoader: ...

    def swap(self, state: PolicyState) -> None: ...


class PolicyWatcher:
    """The reload thread of one gate (see the module docstring)."""

    def __init__(self, layer: Reloadable, *, gate: str, poll_ms: int) -> None:
        self.layer = layer
        self.loader = layer.loader()
        self.loader.adopt(layer.state)
        self.gate = gate
        self.poll_s = poll_ms / 1000
        self.status = "ok" if layer.state.engine is not None else str(layer.state.problem)
        self.loaded_at: str | None = None
        self.polls = 0  # refresh attempts (tests watch it)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shellgate-policy", daemon=True)
        self._listener: object = None
        self._host = socket.gethostname()

    def start(self) -> None:
        if self.layer.state.engine is not None and self.loader.db is not None:
            from shellgate.store.policies import now_iso

            self.loaded_at = now_iso()
        self._report()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=10)
        self._close_listener()
        self._report(closing=True)

    # -- the loop --------------------------------------------------------------------

    def _run(self) -> None:
        next_poll = time.monotonic() + self.poll_s
        next_beat = time.monotonic() + HEARTBEAT_S
        while not self._stop.is_set():
            notified = self._wait(min(LISTEN_SLICE_S, self.poll_s or LISTEN_SLICE_S))
            now = time.monotonic()
            if notified or (self.poll_s and now >= next_poll):
                next_poll = now + self.poll_s
                self.refresh()
            if now >= next_beat:
                next_beat = now + HEARTBEAT_S
                self._report()

    def _wait(self, timeout: float) -> bool:
        """Wait for a notification (PostgreSQL) or ``timeout``; True when notified."""
        db = self.loader.db
        if db is None or db.dialect != "postgresql":
            self._stop.wait(timeout)
            return False
        from shellgate.store.db import Listener
        from shellgate.store.policies import CHANNEL

        if self._listener is None:
            try:
                self._listener = db.listen(CHANNEL)
            except StoreError as exc:
                self._set_status(self._problem(exc))
                self._stop.wait(max(timeout, self.poll_s or 1.0))
                return False
            # (Re)connected: a change may have been missed meanwhile.
            return True
        assert isinstance(self._listener, Listener)
        try:
            return bool(self._listener.wait(timeout))
        except StoreError as exc:
            self._close_listener()
            self._set_status(self._problem(exc))
            return False

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        close = getattr(listener, "close", None)
        if close is not None:
            close()

    def refresh(self) -> bool:
        """Load what changed and swap it in; True when a new state went in force."""
        self.polls += 1
        applied: list[PolicyState] = []

        def apply(state: PolicyState) -> None:
            self.layer.swap(state)
            applied.append(state)

        try:
            self.loader.build(apply=apply)
        except (PolicyError, StoreError) as exc:
            self._set_status(self._problem(exc))
            return False
        changed = bool(applied)
        if changed:
            from shellgate.store.policies import now_iso

            self.loaded_at = now_iso()
            version = applied[-1].version
            logger.info("policy reloaded%s", f" (store version {version})" if version else "")
        self._set_status("ok", report=changed)
        return changed

    def _problem(self, exc: Exception) -> str:
        """The status for a failure: the same text from the listener and the poll,
        so a lasting outage is logged once."""
        what = ("policy store unreachable or failing" if isinstance(exc, StoreError)
                else "policy not reloaded")
        if self.layer.state.engine is None:
            return f"{what}, no policy in force: {exc}"
        return f"{what}, the last good policy stays: {exc}"

    def _set_status(self, status: str, *, report: bool = False) -> None:
        if status != self.status:
            # Logged once per kind of state (the text before the cause): during an
            # outage the listener and the poll see differently worded causes.
            if status.partition(":")[0] != self.status.partition(":")[0]:
                if status == "ok":
                    logger.warning("policy: recovered, loading again")
                else:
                    logger.warning("%s", status)
            self.status = status
            report = True
        if report:
            self._report()

    def _report(self, *, closing: bool = False) -> None:
        if self.loader.db is None:
            return
        from shellgate.store.policies import HostState, now_iso

        state = self.layer.state
        status = "closed" if closing else self.status
        row = HostState(self._host, os.getpid(), self.gate, state.version, self.loaded_at,
                        now_iso(), status)
        with contextlib.suppress(StoreError):  # unreachable: the row is written once it answers
            self.loader.store().report(row)
