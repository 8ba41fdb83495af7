"""``/policies``: the policy sets in force and their versions.

With ``[policy] store``: the store's sets at its head version, the history of
versions (who pushed or rolled back what, and why) and which host runs which
version (:class:`shellgate.store.policies.PolicyStore`). Without one: the
configured file sets (``[policy] paths``) as they are on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shellgate.console.core import Console
from shellgate.errors import ShellgateError

HISTORY = 50  # versions listed
MAX_SHOWN_BYTES = 512 * 1024  # of one file shown


@dataclass(frozen=True)
class ShownSet:
    name: str
    where: str
    policy_csv: str
    tests_csv: str


@dataclass
class Policies:
    source: str
    sets: list[ShownSet] = field(default_factory=list)
    history: list[Any] = field(default_factory=list)
    hosts: list[Any] = field(default_factory=list)
    head: int | None = None
    error: str = ""


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SHOWN_BYTES + 1)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"(cannot be read: {exc.strerror})"
    text = data[:MAX_SHOWN_BYTES].decode("utf-8", "replace")
    return text + ("\n… (cut)" if len(data) > MAX_SHOWN_BYTES else "")


def read_policies(console: Console) -> Policies:
    pol = console.config.policy
    if pol.store is None:
        shown = Policies("files ([policy] paths)")
        for path in pol.paths:
            shown.sets.append(
                ShownSet(
                    path.name, str(path), _read(path / "policy.csv"), _read(path / "tests.csv")
                )
            )
        return shown
    db = console.database(pol.store)
    shown = Policies(f"store {db.display}")
    try:
        from shellgate.store.policies import PolicyStore
    except ImportError:
        shown.error = (
            "This shellgate cannot read a policy store (shellgate.store.policies is missing)."
        )
        return shown
    try:
        store = PolicyStore(db)
        shown.head = store.head()
        stored = store.sets()
        wanted = list(pol.store_sets) or sorted(stored)
        for name in wanted:
            entry = stored.get(name)
            if entry is None:
                shown.sets.append(ShownSet(name, "(missing from the store)", "", ""))
            else:
                shown.sets.append(
                    ShownSet(name, f"version {shown.head}", entry.policy_csv, entry.tests_csv)
                )
        shown.history = store.history(limit=HISTORY)
        shown.hosts = store.hosts()
    except ShellgateError as exc:
        shown.error = f"The policy store cannot be read: {exc}"
    return shown


def routes(console: Console) -> list[Route]:
    async def page(request: Request) -> Response:
        shown = await run_in_threadpool(read_policies, console)
        return console.render(
            request, "policies.html", status_code=503 if shown.error else 200, policies=shown
        )

    return [Route("/policies", console.page(page), methods=["GET"])]
