"""``shellgate policy push|pull|history|rollback`` as a user runs them (child processes)."""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path

from tests.policy_store.helpers import BASE, cli, write_set


def test_push_history_pull_rollback(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE)
    pushed = cli("policy", "push", str(team), "--reason", "first", "--store", url)
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout.strip() == f"pushed team as version 1 to {url}"
    write_set(team, BASE + "p, agent, *, rm *, deny\n", "agent, default, deny, rm x\n")
    pushed = cli("policy", "push", str(team), "--name", "other", "--reason", "second",
                 "--author", "ann", "--store", url)
    assert pushed.returncode == 0, pushed.stderr

    history = cli("policy", "history", "--json", "--store", url)
    assert history.returncode == 0, history.stderr
    rows = [json.loads(line) for line in history.stdout.splitlines()]
    assert [sorted(r) for r in rows] == [
        ["action", "author", "reason", "rollback_to", "set", "time", "version"]] * 2
    assert [(r["version"], r["set"], r["author"], r["reason"]) for r in rows] == [
        (2, "other", "ann", "second"), (1, "team", getpass.getuser(), "first")]
    text = cli("policy", "history", "team", "--store", url)
    assert text.returncode == 0
    assert text.stdout.splitlines()[0].startswith("1\t")
    assert "\tpush team\tfirst" in text.stdout

    rolled = cli("policy", "rollback", "1", "--reason", "undo", "--store", url)
    assert rolled.returncode == 0, rolled.stderr
    assert "as version 3" in rolled.stdout
    newest = json.loads(cli("policy", "history", "--json", "--limit", "1", "--store",
                            url).stdout)
    assert (newest["action"], newest["set"], newest["rollback_to"]) == ("rollback", None, 1)

    out = tmp_path / "out"
    pulled = cli("policy", "pull", "other", str(out), "--version", "2", "--store", url)
    assert pulled.returncode == 0, pulled.stderr
    assert (out / "policy.csv").read_text() == (team / "policy.csv").read_text()
    assert (out / "tests.csv").read_text() == "agent, default, deny, rm x\n"
    again = cli("policy", "pull", "other", str(out), "--version", "2", "--store", url)
    assert again.returncode == 1
    assert "not empty" in again.stderr
    forced = cli("policy", "pull", "team", str(out), "--force", "--store", url)
    assert forced.returncode == 0
    assert (out / "policy.csv").read_text() == BASE


def test_refusals_exit_1(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE + "p, agent, *, rm *, deny\n",
                     "agent, default, allow, rm x\n")
    failing = cli("policy", "push", str(team), "--reason", "r", "--store", url)
    assert failing.returncode == 1
    assert f"error: not pushed: {team}/tests.csv:1: test failed" in failing.stderr
    write_set(team, "p, agent, *, rm *\n")
    broken = cli("policy", "push", str(team), "--reason", "r", "--store", url)
    assert broken.returncode == 1
    assert f"{team}/policy.csv:1: a p row has 4 or 5 fields" in broken.stderr
    assert json.loads(cli("policy", "history", "--json", "--store", url).stdout or "null") is None
    for args in (("rollback", "3", "--reason", "r"), ("pull", "team", str(tmp_path / "o")),
                 ("history", "team")):
        done = cli("policy", *args, "--store", url)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.startswith("error: "), done.stderr
    write_set(team, BASE)
    assert cli("policy", "push", str(team), "--reason", "ok", "--store", url).returncode == 0
    unknown = cli("policy", "rollback", "9", "--reason", "r", "--store", url)
    assert unknown.returncode == 1
    assert "unknown version 9 (versions are 1..1)" in unknown.stderr
    unknown_set = cli("policy", "pull", "nope", str(tmp_path / "o"), "--store", url)
    assert unknown_set.returncode == 1
    assert "has no set 'nope'" in unknown_set.stderr


def test_usage_and_unreachable_stores_exit_2(tmp_path: Path) -> None:
    team = write_set(tmp_path / "team", BASE)
    none = cli("policy", "push", str(team), "--reason", "r")
    assert none.returncode == 2
    assert "error: no policy store: give --store URL or set [policy] store" in none.stderr
    down = cli("policy", "history", "--store", "postgresql://u:pw@127.0.0.1:1/x")
    assert down.returncode == 2
    assert "cannot connect" in down.stderr
    assert "pw" not in down.stderr
    bad = cli("policy", "history", "--store", "mysql://x")
    assert bad.returncode == 2
    assert "unknown scheme" in bad.stderr
    no_reason = cli("policy", "push", str(team), "--store", f"sqlite://{tmp_path / 'p.db'}")
    assert no_reason.returncode == 2
    assert "--reason" in no_reason.stderr
    not_int = cli("policy", "rollback", "x", "--reason", "r", "--store",
                  f"sqlite://{tmp_path / 'p.db'}")
    assert not_int.returncode == 2


def test_the_store_comes_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "shellgate.toml"
    config.write_text('[policy]\nstore = "sqlite:fleet.db"\n')  # relative to the file
    team = write_set(tmp_path / "team", BASE)
    other = tmp_path / "elsewhere"
    other.mkdir()
    pushed = cli("policy", "push", str(team), "--reason", "r", "--config", str(config),
                 cwd=other)
    assert pushed.returncode == 0, pushed.stderr
    assert (tmp_path / "fleet.db").exists()
    via_env = cli("policy", "history", "--json", cwd=other,
                  env={"SHELLGATE_CONFIG": str(config)})
    assert json.loads(via_env.stdout)["set"] == "team"


def test_bad_names_and_blank_reasons_are_usage_errors(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE)
    for args, message in (
        (("push", str(team), "--name", "a/b", "--reason", "r"), "set name 'a/b'"),
        (("push", str(team), "--reason", "  "), "reason is empty"),
        (("push", str(team), "--reason", "r", "--author", ""), "author is empty"),
        (("rollback", "1", "--reason", ""), "reason is empty"),
    ):
        done = cli("policy", *args, "--store", url)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr
    assert not (tmp_path / "p.db").exists()  # nothing was created either


def test_reading_a_missing_sqlite_store_does_not_create_it(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'typo.db'}"
    for args in (("history",), ("pull", "team", str(tmp_path / "o")),
                 ("rollback", "1", "--reason", "r")):
        done = cli("policy", *args, "--store", url)
        assert done.returncode == 2, (args, done.stderr)
        assert "no such store file" in done.stderr
    assert not (tmp_path / "typo.db").exists()


def test_a_host_hook_decides_on_the_store_and_records_the_version(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE)
    assert cli("policy", "push", str(team), "--reason", "r", "--store", url).returncode == 0
    config = tmp_path / "c.toml"
    config.write_text(f'[policy]\nstore = "{url}"\n[audit]\npath = "{tmp_path / "a.jsonl"}"\n')
    payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "ls -la"},
                          "cwd": str(tmp_path)})
    import subprocess
    import sys

    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(tmp_path)}  # the host's project
    done = subprocess.run([sys.executable, "-m", "shellgate.cli", "hook", "claude-code",
                           "--config", str(config)], input=payload, capture_output=True,
                          text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    record = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[-1])
    assert (record["policy_version"], record["rule"]) == (1, "team/policy.csv:1")
