"""The console's templates and static files ship in the wheel (hatch takes the package's
data files under src/shellgate), so ``shellgate serve`` works from an installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = ROOT / "src" / "shellgate" / "console"


def test_the_wheel_carries_the_templates_and_static_files(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CC"} | {"SHELLGATE_WITHOUT_HELPER": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    wanted = sorted(
        f"shellgate/console/{path.relative_to(CONSOLE).as_posix()}"
        for folder in ("templates", "static")
        for path in (CONSOLE / folder).iterdir()
    )
    assert len(wanted) >= 8
    assert set(wanted) <= names, set(wanted) - names
