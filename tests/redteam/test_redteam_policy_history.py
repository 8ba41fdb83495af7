"""``shellgate policy history`` printed a version's author and reason raw: a push
(a CI job, a borrowed admin token) whose reason held ANSI escapes, a carriage
return or newlines could repaint the terminal and forge or hide history lines
from the admin reading them. Now one version is one line, its text escaped
(as ``shellgate approvals list`` does), and ``--json`` is ASCII."""

from __future__ import annotations

import json
from pathlib import Path

from tests.policy_store.helpers import BASE, cli, write_set

HOSTILE = "fix\x1b[2K\r3\t2026-01-01T00:00:00Z\tadmin\tpush team\tfake\n\u202eevil\x9b31m"


def test_history_escapes_hostile_reasons_and_authors(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'p.db'}"
    team = write_set(tmp_path / "team", BASE)
    pushed = cli("policy", "push", str(team), "--reason", HOSTILE, "--author", HOSTILE,
                 "--store", url)  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr
    text = cli("policy", "history", "--store", url)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert len(lines) == 1
    for raw in ("\x1b", "\r", "\u202e", "\x9b"):
        assert raw not in text.stdout
    assert lines[0].count("\t") == 4
    as_json = cli("policy", "history", "--json", "--store", url)
    assert as_json.stdout.isascii()
    assert json.loads(as_json.stdout)["reason"] == HOSTILE
