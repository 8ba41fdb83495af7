"""examples/plugin_office_hours: loaded through the entry points its pyproject declares.

The package is not pip-installed: the test writes a ``.dist-info`` with the
entry points read from the example's ``pyproject.toml`` next to its ``src`` on
``sys.path``, so shellgate's real loader (``[policy] plugins``) finds it.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from shellgate.config import Config, load_config
from shellgate.gate import Gate
from shellgate.policy.loader import SHIPPED_MODEL
from tests.examples.examples_helpers import EXAMPLES, bwrap_works

PLUGIN = EXAMPLES / "plugin_office_hours"


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[dict[str, str]]:
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))
    entry_points = project["project"]["entry-points"]["shellgate"]
    site = tmp_path / "site"
    dist = site / "shellgate_office_hours-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shellgate-office-hours\nVersion: 0.1.0\n"
    )
    lines = ["[shellgate]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    paths = [str(site), str(PLUGIN / "src")]
    sys.path[:0] = paths
    try:
        yield entry_points
    finally:
        for path in paths:
            sys.path.remove(path)
        sys.modules.pop("shellgate_office_hours", None)


def _config(tmp_path: Path, *plugins: str, tenant: str = "default") -> Config:
    policy = tmp_path / "policy"
    policy.mkdir(exist_ok=True)
    shutil.copy(SHIPPED_MODEL, policy / "model.conf")
    (policy / "policy.csv").write_text("p, agent, *, echo *, allow\n", encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    return load_config(
        None,
        executor={"workspace": str(tmp_path / "ws")},
        # ask: what the plugin leaves undecided must be visibly the closing default's
        policy={"paths": [str(policy)], "plugins": list(plugins), "tenant": tenant,
                "default": "ask"},
        audit={"path": str(tmp_path / "audit.jsonl")},
    )


def test_pyproject_declares_both_entry_points(installed: dict[str, str]) -> None:
    assert installed == {
        "office_hours": "shellgate_office_hours:OfficeHours",
        "sandbox_tenants": "shellgate_office_hours:SandboxTenants",
    }


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(datetime(2024, 6, 5, 10, 30), ("hi\n", False), id="wednesday-morning"),
        pytest.param(
            datetime(2024, 6, 5, 22, 15),
            (
                "Error: denied by office-hours: outside office hours (it is Wed 22:15; commands "
                "run Mon, Tue, Wed, Thu, Fri 09:00-18:00)",
                True,
            ),
            id="wednesday-night",
        ),
        pytest.param(
            datetime(2024, 6, 8, 11, 0),
            (
                "Error: denied by office-hours: outside office hours (it is Sat 11:00; commands "
                "run Mon, Tue, Wed, Thu, Fri 09:00-18:00)",
                True,
            ),
            id="saturday",
        ),
    ],
)
async def test_office_hours_denies_outside_hours_and_abstains_inside(
    installed: dict[str, str], tmp_path: Path, now: datetime, expected: tuple[str, bool]
) -> None:
    gate = Gate(_config(tmp_path, "office_hours"))
    plugin = gate.decider.pm.get_plugin("office_hours")
    assert plugin is not None
    assert type(plugin).__name__ == "OfficeHours"
    plugin.clock = lambda: now  # the injectable clock
    async with gate:
        result = await gate.call("bash", {"command": "echo hi", "description": "greet"})
    assert (result.text, result.is_error) == expected


async def test_office_hours_never_allows_what_no_rule_allows(
    installed: dict[str, str], tmp_path: Path
) -> None:
    gate = Gate(_config(tmp_path, "office_hours"))
    plugin = gate.decider.pm.get_plugin("office_hours")
    assert plugin is not None
    plugin.clock = lambda: datetime(2024, 6, 5, 10, 0)
    async with gate:
        result = await gate.call("bash", {"command": "uptime", "description": "d"})
    assert result.outcome == "not approved"  # the closing default asked; headless said no


def test_bad_office_hours_are_refused_at_construction(installed: dict[str, str]) -> None:
    from shellgate_office_hours import OfficeHours

    with pytest.raises(ValueError, match="office hours must satisfy"):
        OfficeHours(start_hour=18, end_hour=9)


@pytest.mark.skipif(not bwrap_works(), reason="bwrap does not work here")
async def test_sandbox_tenants_moves_a_tenant_onto_bwrap(
    installed: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLGATE_SANDBOX_TENANTS", "untrusted, guests")
    async with Gate(_config(tmp_path, "sandbox_tenants", tenant="guests")) as gate:
        guest = await gate.call("bash", {"command": "echo hi", "description": "d"})
    async with Gate(_config(tmp_path, "sandbox_tenants", tenant="staff")) as gate:
        staff = await gate.call("bash", {"command": "echo hi", "description": "d"})
    assert guest.run is not None
    assert staff.run is not None
    assert (guest.text, guest.run.executor) == ("hi\n", "bwrap")
    assert (staff.text, staff.run.executor) == ("hi\n", "local")
