"""The capability table, and what ``policy lint`` and ``check`` say about it.

A program that can run, load or write through its options and has no catalog
entry is matched as written: the admin learns that when writing the allow
(a lint finding) and when such an allow decides (a note from ``check``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellgate.policy.lint import lint_policy_set
from shellgate.shell.catalog import lookup
from shellgate.shell.catalog.capabilities import KINDS, parse, table, unmodelled
from tests.policy.policy_helpers import write_set
from tests.policy.test_policy_cli import shellgate


def test_the_table_loads_and_names_each_program_once() -> None:
    rows = table()
    assert len(rows) > 250
    assert all(row.kinds and set(row.kinds) <= set(KINDS) for row in rows.values())
    assert rows["julia"].kinds == ("run", "write")


@pytest.mark.parametrize(
    "text", ["x", "x, fly", "x, run\nx, write", "x,"], ids=["no-kinds", "bad-kind", "twice", "empty"]
)
def test_a_bad_row_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"capabilities\.csv"):
        parse(text)


def test_a_program_with_an_entry_is_not_unmodelled() -> None:
    assert lookup("vim") is not None
    assert unmodelled("vim") is None
    assert unmodelled("ansible-playbook") is not None
    assert unmodelled("no-such-program") is None


def lint(tmp_path: Path, rows: str) -> list[str]:
    return [f"{p.line}: {p.message}" for p in lint_policy_set(write_set(tmp_path, rows))]


def test_lint_warns_on_an_allow_of_an_unmodelled_program(tmp_path: Path) -> None:
    got = lint(tmp_path, "p, agent, *, ansible-playbook *, allow\n")
    assert got == [
        "1: allow 'ansible-playbook *' lets the agent run any program: a playbook's tasks run "
        "commands; shellgate has no entry for ansible-playbook, so what it runs through its "
        "options is not checked"
    ]


@pytest.mark.parametrize(
    "row",
    [
        "p, agent, *, vim *, allow",  # an entry reads its options
        "p, agent, *, ansible-playbook --version, allow",  # an exact command: the admin's reading
        "p, agent, *, ansible-playbook *, deny",
        "p, agent, *, ls *, allow",  # not in the table
    ],
)
def test_no_warning_where_the_risk_is_read_or_refused(tmp_path: Path, row: str) -> None:
    assert lint(tmp_path, row + "\n") == []


def test_check_notes_an_allow_of_an_unmodelled_program(tmp_path: Path) -> None:
    policy = write_set(tmp_path, "p, agent, *, ansible-playbook *, allow\np, agent, *, ls *, allow\n")
    done = shellgate("check", "--policy", str(policy), "--json", "--", "ansible-playbook site.yml")
    assert done.returncode == 0
    assert json.loads(done.stdout)["decision"] == "allow"
    assert "no entry for ansible-playbook" in done.stderr
    quiet = shellgate("check", "--policy", str(policy), "--json", "--", "ls")
    assert "no entry" not in quiet.stderr
