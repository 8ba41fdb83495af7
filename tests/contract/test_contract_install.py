"""The built distributions, installed as a user gets them: sdist, wheel, smoke run.

``python -m build`` makes the sdist and, from it, the wheel (offline: the test
extras carry ``build`` and ``hatchling``, so ``--no-isolation``). The sdist must
hold the helper's C source and no compiled binary; the wheel must be tagged
``py3-none-<platform>`` and carry an executable ``sg-exec``. The wheel is then
installed into a fresh virtual environment outside the source tree, and one
``bash`` call runs through that installation's Gate on its own helper.

The fresh environment gets the wheel alone (``--no-deps``); its dependencies
are read from this test environment's site-packages (a ``.pth`` path line: no
editable-install hook of ours comes along), and the script checks that every
``Requires-Dist`` of the wheel is satisfied by them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SMOKE = r"""
import asyncio, json, sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

import shellgate
from shellgate import Gate, load_config
from shellgate.approval import AllowApprover
from shellgate.executors import _hardening

work = Path(sys.argv[1])
unmet = []
for line in metadata.requires("shellgate") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        have = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        unmet.append(f"{req} (missing)")
        continue
    if not req.specifier.contains(have, prereleases=True):
        unmet.append(f"{req} (have {have})")

packaged = Path(shellgate.__file__).parent / "policies" / "default"
config = load_config(
    None,
    executor={"kind": "local", "workspace": str(work / "ws")},
    policy={"paths": [str(packaged)]},
    audit={"path": str(work / "audit.jsonl")},
)

async def main():
    async with Gate(config, approver=AllowApprover()) as gate:
        command = "echo hi; grep NoNewPrivs /proc/self/status"
        return await gate.call("bash", {"command": command, "description": "smoke"})

result = asyncio.run(main())
print(json.dumps({
    "package": shellgate.__file__,
    "helper": str(_hardening.HELPER),
    "hardening": _hardening.Hardening.detect().prefix_kind,
    "text": result.text,
    "is_error": result.is_error,
    "audit_records": len((work / "audit.jsonl").read_text().splitlines()),
    "unmet": unmet,
}))
"""


def run(
    argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=300, cwd=cwd, env=env
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist and wheel of this tree, built the way a user or an index would."""
    out = tmp_path_factory.mktemp("dist")
    env = {
        k: v for k, v in os.environ.items() if k not in ("SHELLGATE_WITHOUT_HELPER", "PYTHONPATH")
    }
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], env=env)
    return out


def only(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {directory}: {found}"
    return found[0]


def test_sdist_ships_the_source_and_no_binary(dist: Path) -> None:
    with tarfile.open(only(dist, "*.tar.gz")) as sdist:
        members = [m for m in sdist.getmembers() if m.isfile()]
        names = {m.name.split("/", 1)[1] for m in members}
        elf = []
        for member in members:
            handle = sdist.extractfile(member)
            assert handle is not None
            if handle.read(4) == b"\x7fELF":
                elf.append(member.name)
    assert elf == []
    assert "src/shellgate/executors/_helper/sg-exec.c" in names
    assert "hatch_build.py" in names
    assert "src/shellgate/executors/_helper/sg-exec" not in names


def test_wheel_is_tagged_for_the_platform_not_the_python(dist: Path) -> None:
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheel = only(dist, "*.whl")
    assert wheel.name == f"shellgate-0.1.0-py3-none-{platform}.whl"
    with zipfile.ZipFile(wheel) as archive:
        meta = archive.read("shellgate-0.1.0.dist-info/WHEEL").decode()
        helper = archive.getinfo("shellgate/executors/_helper/sg-exec")
        assert archive.read(helper)[:4] == b"\x7fELF"
    assert f"Tag: py3-none-{platform}" in meta.splitlines()
    assert "Root-Is-Purelib: false" in meta.splitlines()
    assert (helper.external_attr >> 16) & stat.S_IXUSR


def test_installed_wheel_runs_a_call_outside_the_tree(dist: Path, tmp_path: Path) -> None:
    assert not tmp_path.resolve().is_relative_to(ROOT)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(only(dist, "*.whl"))])  # fmt: skip
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site.stdout.strip()) / "_test_dependencies.pth").write_text(
        "\n".join(sorted(ours)) + "\n"
    )
    (tmp_path / "ws").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = run([str(python), "-c", SMOKE, str(tmp_path)], cwd=tmp_path, env=env)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["unmet"] == []
    assert Path(seen["package"]).is_relative_to(venv)
    assert Path(seen["helper"]).is_relative_to(venv)
    assert seen["hardening"] == "sg-exec"
    assert (seen["text"], seen["is_error"]) == ("hi\nNoNewPrivs:\t1\n", False)
    assert seen["audit_records"] >= 2  # the request and its result, on the record
    run([str(venv / "bin" / "shellgate"), "--help"], cwd=tmp_path, env=env)


def build_wheel(out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m build --wheel`` of this tree with ``env`` added; not asserted."""
    full = {k: v for k, v in os.environ.items() if k not in ("SHELLGATE_WITHOUT_HELPER", "CC")}
    argv = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)]
    return subprocess.run(
        [*argv, str(ROOT)], capture_output=True, text=True, check=False, timeout=300, env=full | env
    )


def test_a_helper_that_cannot_be_built_fails_the_build(tmp_path: Path) -> None:
    done = build_wheel(tmp_path, CC="/bin/false")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "cannot build the sg-exec hardening helper" in said
    assert "SHELLGATE_WITHOUT_HELPER=1" in said  # the way out, named
    assert list(tmp_path.glob("*.whl")) == []


def test_building_without_the_helper_is_an_explicit_pure_wheel(tmp_path: Path) -> None:
    done = build_wheel(tmp_path, SHELLGATE_WITHOUT_HELPER="1", CC="/bin/false")
    assert done.returncode == 0, done.stderr
    assert "building without the sg-exec helper" in done.stdout + done.stderr
    with zipfile.ZipFile(only(tmp_path, "shellgate-0.1.0-py3-none-any.whl")) as archive:
        assert "shellgate/executors/_helper/sg-exec" not in archive.namelist()
        assert "shellgate/policies/default/policy.csv" in archive.namelist()
