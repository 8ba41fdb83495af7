"""push → load: a store set decides exactly as the same files, through the whole Decider."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellgate.config import Config, load_config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from shellgate.store.db import Database
from shellgate.store.policies import PolicyStore
from tests.policy_store.helpers import write_set

SUBJECTS = ["agent", "dev", "ops"]
PATTERNS = ["git *", "git push *", "ls *", "rm -rf *", "re:cat( .*)?", "echo x", "*", "make"]
COMMANDS = ["git status", "git push origin", "ls -la", "rm -rf build", "cat a", "echo x",
            "sudo rm -rf /", "make", "ls; git push", "env git push", "echo x | cat"]
EFFECTS = ["allow", "ask", "deny"]


def _config(root: Path, **policy: object) -> Config:
    ws = root / "ws"
    ws.mkdir(exist_ok=True)
    return load_config(None, executor={"workspace": str(ws)},
                       audit={"path": str(root / "audit.jsonl")}, policy=policy)


def _answers(config: Config, commands: list[str]) -> list[list[tuple[str, str | None]]]:
    decider = Decider(config)
    try:
        out: list[list[tuple[str, str | None]]] = []
        for command in commands:
            call = CallInfo(tool="bash", command=command, subject="agent", tenant="default",
                            session="s", workdir=str(config.executor.workspace),
                            workspace=str(config.executor.workspace))
            verdict = decider.decide(call)
            out.append([(s.decision.effect, s.decision.rule) for s in verdict.segments])
        return out
    finally:
        decider.close()


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(SUBJECTS), st.sampled_from(PATTERNS),
                               st.sampled_from(EFFECTS)), min_size=1, max_size=12),
       roles=st.lists(st.sampled_from(SUBJECTS[1:]), max_size=2, unique=True))
def test_push_then_load_decides_as_the_files(
    rows: list[tuple[str, str, str]], roles: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        text = "".join(f"g, agent, {r}, *\n" for r in roles)
        text += "".join(f"p, {s}, *, {p}, {e}\n" for s, p, e in rows)
        directory = write_set(root / "team", text)
        files = _config(root, paths=[str(directory)])
        expected = _answers(files, COMMANDS)
        # The set's own test: whatever the files answer for its first command.
        (directory / "tests.csv").write_text(
            f"agent, default, {expected[0][0][0]}, {COMMANDS[0]}\n", encoding="utf-8")
        url = f"sqlite://{root / 'store.db'}"
        with Database(url) as db:
            PolicyStore(db).push("team", directory, author="a", reason="r", config=files)
        assert _answers(_config(root, store=url), COMMANDS) == expected
