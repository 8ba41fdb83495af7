"""The agent approving or widening itself through the fleet's store files.

The agent's commands run as the gate's OS user. Under ``policies/default``
(``echo *``, ``cat *`` allowed) it could overwrite the SQLite approval queue, the
audit store or the policy store (``echo … > queue.db``, or their ``-wal`` beside
them), and read the console's login tokens or the config naming a PostgreSQL
password, then log into the console and approve its own pending call. Each store
file named by a ``sqlite:`` URL (with its ``-wal``/``-shm``/``-journal``) is now a
protected path and a protected read, as the audit file and the config file are;
so is ``[console] tokens_file`` and ``[mcp] tokens_file``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from shellgate.policy.protected import ProtectedPathsLayer
from shellgate.policy.secrets import ProtectedReadsLayer
from tests.policy.policy_helpers import write_set
from tests.redteam.conftest import POLICY


def _config(tmp_path: Path, policy: str = POLICY) -> Config:
    """Stores and tokens in the workspace itself."""
    ws = tmp_path
    (tmp_path / "st").mkdir(exist_ok=True)
    (tmp_path / "console-tokens").write_text("t0ken alice\n")
    return load_config(
        None,
        policy={"paths": [policy]},
        audit={"path": None, "store": f"sqlite:///{tmp_path}/audit.db"},
        approval={"mode": "queue", "store": f"sqlite:///{tmp_path}/st/queue.db"},
        executor={"workspace": str(ws)},
        console={"tokens_file": str(tmp_path / "console-tokens")},
        mcp={"tokens_file": str(tmp_path / "mcp-tokens")},
    )


def _decide(config: Config, command: str) -> str:
    ws = str(config.executor.workspace)
    call = CallInfo(
        tool="bash", command=command, subject="agent", tenant="default",
        session="redteam", workdir=ws, workspace=ws,
    )  # fmt: skip
    return Decider(config).decide(call).effect


@pytest.mark.parametrize(
    "command",
    [
        "cp evil.db st/queue.db",
        "cp evil {root}/st/queue.db-wal",
        "cp evil ./st/queue.db-journal",
        "tee audit.db",
        "cp evil audit.db-shm",
        "cp evil {root}/console-tokens",
        "mv evil.db {root}/audit.db",
        # a write naming the directory that holds a store replaces the store too
        "cp -r forged/. st",
        "rsync -a forged/ st/",
        "mv st elsewhere",
        "mv forged st",
        "rm -rf st",
    ],
)
def test_store_files_cannot_be_written(tmp_path: Path, command: str) -> None:
    # An allow-list that lets the agent write in its workspace (cp, echo > file).
    rules = "p, agent, *, *, allow\np, agent, *, write:**, allow\n"
    config = _config(tmp_path, str(write_set(tmp_path / "sets", rules)))
    assert _decide(config, "cp notes other.db") == "allow"
    assert _decide(config, f"cp notes {tmp_path}/queue.db.bak") == "allow"
    assert _decide(config, "cp -r forged/. other") == "allow"
    assert _decide(config, command.format(root=tmp_path)) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "cat {root}/console-tokens",
        "cat {root}/mcp-tokens",
        "cat {root}/st/queue.db",
        "cat audit.db-wal",
    ],
)
def test_store_files_and_tokens_are_secret_reads(tmp_path: Path, command: str) -> None:
    config = _config(tmp_path)
    assert _decide(config, f"cat {tmp_path}/notes") == "allow"
    assert _decide(config, command.format(root=tmp_path)) == "ask"


def test_policy_store_file_is_protected(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config = config.model_copy(update={"policy": config.policy.model_copy(
        update={"store": f"sqlite:///{tmp_path}/policy.db"})})  # fmt: skip
    ws = str(config.executor.workspace)
    call = CallInfo(tool="bash", command="x", subject="agent", tenant="default",
                    session="s", workdir=ws, workspace=ws)  # fmt: skip
    hit = ProtectedPathsLayer(config).protects(f"{tmp_path}/policy.db-wal", call)
    assert hit is not None
    assert hit.why == "gate-store"
    assert ProtectedReadsLayer(config).names(f"{tmp_path}/policy.db", call) is not None


def test_config_naming_a_postgresql_password_is_a_secret_read(tmp_path: Path) -> None:
    toml = tmp_path / "sg.toml"
    toml.write_text(
        f'[policy]\npaths = ["{POLICY}"]\n[audit]\nstore = "postgresql://sg:hunter2@db/sg"\n'
        f'[executor]\nworkspace = "{tmp_path}"\n'
    )
    config = load_config(toml)
    assert _decide(config, f"cat {tmp_path}/other") == "allow"
    assert _decide(config, f"cat {toml}") == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "shellgate approvals approve AbCdEf0123456789abcdef",
        "shellgate --config x.toml approvals deny AbCdEf0123456789abcdef",
        "python -m shellgate approvals approve AbCdEf0123456789abcdef",
        "python3 -m shellgate policy push sets/",
        "python3 -mshellgate approvals approve AbCdEf0123456789abcdef",
        "env shellgate policy rollback 1",
        "shellgate serve --tokens mine --listen 127.0.0.1:9999",
        "/usr/local/bin/shellgate policy push --store sqlite:///p.db sets/",
    ],
)
def test_the_agent_cannot_run_the_gates_admin_commands(tmp_path: Path, command: str) -> None:
    # An allow-list trusting shellgate itself (for `shellgate check`) or python.
    rules = "p, agent, *, shellgate *, allow\np, agent, *, python *, allow\n" \
        "p, agent, *, python3 *, allow\np, agent, *, env *, allow\n" \
        "p, agent, *, /usr/local/bin/shellgate *, allow\n"
    config = _config(tmp_path, str(write_set(tmp_path / "sets", rules)))
    assert _decide(config, "shellgate check ls") == "allow"
    assert _decide(config, "shellgate approvals list") == "allow"
    assert _decide(config, command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/1/environ",
        "grep -a PASS /proc/4242/environ",
        "cat /proc/*/environ",
        "head -c 4096 /proc/4242/task/4243/environ",
        "cd /proc/4242 && cat environ",
    ],
)
def test_another_processes_environment_is_a_secret_read(tmp_path: Path, command: str) -> None:
    # The gate's environment may carry SHELLGATE_AUDIT__STORE=postgresql://u:pw@…,
    # PGPASSWORD or API keys the command's own environment was scrubbed of.
    config = _config(tmp_path)
    assert _decide(config, "cat /proc/1/status") == "allow"
    assert _decide(config, command) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        'sqlite3 notes.db ".shell id"',
        'sqlite3 notes.db ".system id"',
        "sqlite3 :memory: \"ATTACH 'st/queue.db' AS q; UPDATE q.sg_approvals SET status = 1\"",
        'sqlite3 "file:st/queue.db?mode=rw" .dump',
        'sqlite3 -cmd ".open st/queue.db" x',
        "sqlite3 notes.db",
        'psql -c "\\! id"',
        "psql -f script.sql",
        'mysql -e "system id"',
    ],
)
def test_sql_shells_run_code(tmp_path: Path, command: str) -> None:
    # `sqlite3 *` / `psql *` in an allow-list looked like "database access"; SQL
    # shells run programs and reach the store however the file is spelled.
    rules = "p, agent, *, sqlite3 *, allow\np, agent, *, psql *, allow\n" \
        "p, agent, *, mysql *, allow\n"
    config = _config(tmp_path, str(write_set(tmp_path / "sets", rules)))
    assert _decide(config, "sqlite3 --version") == "allow"
    # A store named as the database is a protected write (deny); the rest ask.
    assert _decide(config, command) in (("deny",) if "queue.db?" in command else ("ask",))
