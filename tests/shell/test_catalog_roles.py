"""Catalog-driven: every role an entry declares holds in a real decision.

The most permissive admin there is: a policy set that allows *every* command
(``*``) and denies only ``rm *``. For every entry and subcommand entry, and for
every option it declares with a role, the option is used with a value chosen to
make the role bite, and the real decider (analysis, protected paths, casbin,
closing default) must answer:

* an option that runs a program or a shell string, given ``rm``: deny (the
  program is a segment of its own and ``rm *`` meets it);
* an option that writes or deletes, given ``.git/hooks/x``: deny (protected);
* an option that loads code or changes state: never allow.

A new entry is covered the moment it is declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shellgate.policy.loader import SHIPPED_MODEL
from shellgate.shell.argv.engine import OPTIONAL, Opt
from shellgate.shell.catalog import entries
from shellgate.shell.catalog.entry import Entry
from tests.shell.allowlist_helpers import verdict

POLICY = "p, agent, *, *, allow\np, agent, *, rm *, deny\n"


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    role: str  # "runs" | "writes" | "finding"

    @property
    def command(self) -> str:
        import shlex

        return shlex.join(self.argv)


def _is_short(name: str, entry: Entry) -> bool:
    d = entry.dialect
    if d.any_dashes or (d.single_dash_long and not d.bundles):
        return False
    return len(name) == 2 and name[0] == "-" and name[1] != "-"


def _spelled(opt: Opt, entry: Entry, value: str) -> list[str]:
    name = opt.names[0]
    if opt.takes == OPTIONAL:
        return [name + value] if _is_short(name, entry) else [f"{name}={value}"]
    if _is_short(name, entry):
        return [name, value]
    return [f"{name}={value}"]  # --long=value; Go-style -flag=value


def _roles(opt: Opt) -> list[tuple[str, str]]:
    """(role, value) pairs that make each of the option's roles bite."""
    out: list[tuple[str, str]] = []
    if opt.when is not None:
        return out  # a role under a condition on the value: the family tests cover it
    if opt.runs == "shell" or opt.runs == "words":
        out.append(("runs", "rm x"))
    elif opt.runs == "program":
        out.append(("runs", "rm"))
    if opt.writes or opt.deletes:
        out.append(("writes", ".git/hooks/x"))
    if opt.finding and not (opt.runs or opt.writes or opt.deletes):
        out.append(("finding", "v"))
    return out


def _cases() -> list[Case]:
    found: list[Case] = []
    targets: list[tuple[tuple[str, ...], Entry]] = []
    for entry in entries():
        targets.append(((entry.name,), entry))
        targets.extend(((entry.name, name), sub) for name, sub in entry.subcommands.items())
    for prefix, entry in targets:
        for opt in entry.options:
            if opt.takes not in (0, 1, OPTIONAL):
                continue
            for role, value in _roles(opt):
                if opt.takes == 0:
                    if role != "finding":
                        continue
                    words = [opt.names[0]]
                else:
                    words = _spelled(opt, entry, value)
                tail = ["true"] if entry.runs is not None else ["f"]
                found.append(Case((*prefix, *words, *tail), role))
    unique = {c.argv: c for c in found}
    return sorted(unique.values(), key=lambda c: c.argv)


CASES = _cases()


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    directory: Path = tmp_path_factory.mktemp("allow-everything")
    (directory / "model.conf").write_text(SHIPPED_MODEL.read_text())
    (directory / "policy.csv").write_text(POLICY)
    return str(directory)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.command) for c in CASES])
def test_every_declared_role_holds(policy_dir: str, case: Case) -> None:
    got = verdict(case.command, policy_dir)
    shown = [(s.segment.argv, s.decision.effect, s.decision.reason[:80]) for s in got.segments]
    if case.role in ("runs", "writes"):
        assert got.effect == "deny", shown
    else:
        assert got.effect != "allow", shown


def test_the_roles_cover_every_family() -> None:
    roles = {c.role for c in CASES}
    assert roles == {"runs", "writes", "finding"}
    assert len(CASES) > 150
