"""``/playground``: decide a command against the current sets, and explain it. Nothing runs.

The decision is :class:`shellgate.decider.Decider`'s, the explanation exactly
``shellgate check``'s (:func:`shellgate.cli.check.explain_text` and
:func:`~shellgate.cli.check.verdict_json`). Draft ``policy.csv`` rows may be added
to one of the current sets to see what a change would do before pushing it: the
sets are copied into a temporary directory (a store's sets written out as file
sets, the way a gate loads them), the rows appended to the chosen copy, and the
copies decided on. A draft that does not load shows the loader's error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shellgate.config import Config
from shellgate.console.core import Console
from shellgate.errors import ShellgateError

MAX_COMMAND_CHARS = 100_000
MAX_NAME_CHARS = 128
MAX_DRAFT_CHARS = 64 * 1024


@dataclass(frozen=True)
class Tried:
    explanation: str
    verdict: dict[str, Any]


def current_sets(config: Config, into: Path) -> list[Path]:
    """The sets in force as directories: the file sets, or the store's written into ``into``."""
    pol = config.policy
    if pol.store is None:
        return list(pol.paths)
    from shellgate.store.db import Database
    from shellgate.store.policies import PolicyStore

    with Database(pol.store) as db:
        stored = PolicyStore(db).sets()
    names = list(pol.store_sets) or sorted(stored)
    paths = []
    for name in names:
        entry = stored.get(name)
        if entry is None:
            raise ShellgateError(f"policy set {name!r} ([policy] store_sets) is not in the store")
        directory = into / "store" / name
        directory.mkdir(parents=True)
        (directory / "model.conf").write_text(entry.model_conf, encoding="utf-8")
        (directory / "policy.csv").write_text(entry.policy_csv, encoding="utf-8")
        (directory / "tests.csv").write_text(entry.tests_csv, encoding="utf-8")
        paths.append(directory)
    return paths


def set_names(config: Config) -> list[str]:
    pol = config.policy
    if pol.store is None:
        return [p.name for p in pol.paths]
    return list(pol.store_sets)  # empty: every set in the store (listed once tried)


def try_command(
    config: Config, command: str, subject: str, tenant: str, draft: str, draft_set: str
) -> Tried:
    """Decide ``command`` as ``subject``/``tenant``, with ``draft`` rows added to ``draft_set``."""
    from shellgate.cli.check import explain_text, verdict_json
    from shellgate.decider import Decider
    from shellgate.models import CallInfo

    with tempfile.TemporaryDirectory(prefix="shellgate-playground-") as tmp:
        paths = current_sets(config, Path(tmp))
        if draft.strip():
            names = [p.name for p in paths]
            if draft_set not in names:
                raise ShellgateError(f"no current policy set is named {draft_set!r}")
            index = names.index(draft_set)
            copy = Path(tmp) / "draft" / draft_set
            shutil.copytree(paths[index], copy)
            with open(copy / "policy.csv", "a", encoding="utf-8") as handle:
                handle.write("\n" + draft.replace("\r\n", "\n").strip("\n") + "\n")
            paths[index] = copy
        pol = config.policy.model_copy(
            update={"paths": tuple(paths), "store": None, "store_sets": ()}
        )
        decider = Decider(config.model_copy(update={"policy": pol}))
        try:
            workspace = os.path.realpath(config.executor.workspace)
            call = CallInfo(
                tool="bash",
                command=command,
                subject=subject or config.policy.subject,
                tenant=tenant or config.policy.tenant,
                session="console-playground",
                workdir=workspace,
                workspace=workspace,
            )
            verdict = decider.decide(call)
            writes = decider.write_decisions(call, verdict)
        finally:
            decider.close()
    return Tried(explain_text(verdict, writes), verdict_json(verdict))


def routes(console: Console) -> list[Route]:
    def render(request: Request, status_code: int = 200, /, **values: Any) -> Response:
        defaults: dict[str, Any] = {
            "command": "",
            "subject": "",
            "tenant": "",
            "draft": "",
            "draft_set": "",
            "tried": None,
            "error": "",
        }
        return console.render(
            request,
            "playground.html",
            status_code=status_code,
            sets=set_names(console.config),
            policy=console.config.policy,
            **{**defaults, **values},
        )

    async def page(request: Request) -> Response:
        return render(request)

    async def decide(request: Request) -> Response:
        form = request.state.form
        values = {
            k: form.get(k, "") for k in ("command", "subject", "tenant", "draft", "draft_set")
        }
        if not all(isinstance(v, str) for v in values.values()):
            return render(request, 400, error="Every field is text.")
        text: dict[str, str] = {k: str(v) for k, v in values.items()}
        problem = ""
        if not text["command"].strip():
            problem = "Type a command."
        elif len(text["command"]) > MAX_COMMAND_CHARS:
            problem = f"The command is over {MAX_COMMAND_CHARS} characters."
        elif len(text["subject"]) > MAX_NAME_CHARS or len(text["tenant"]) > MAX_NAME_CHARS:
            problem = f"A subject or tenant is at most {MAX_NAME_CHARS} characters."
        elif len(text["draft"]) > MAX_DRAFT_CHARS:
            problem = f"The draft rows are over {MAX_DRAFT_CHARS} characters."
        if problem:
            return render(request, 400, error=problem, **text)
        try:
            tried = await run_in_threadpool(
                try_command,
                console.config,
                text["command"],
                text["subject"].strip(),
                text["tenant"].strip(),
                text["draft"],
                text["draft_set"],
            )
        except (ShellgateError, ImportError, OSError) as exc:
            return render(request, 422, error=str(exc), **text)
        return render(request, tried=tried, **text)

    return [
        Route("/playground", console.page(page), methods=["GET"]),
        Route("/playground", console.page(decide), methods=["POST"]),
    ]
