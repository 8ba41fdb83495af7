"""The release distributions, installed as a user gets them.

``tools/build_dist.py`` (what ``make dist`` runs for a release) makes the sdist
and, from it, the wheel (offline: the test extras carry ``build``, ``hatchling``
and ``auditwheel``, so ``--no-isolation``), then has auditwheel retag the wheel
manylinux. The sdist must hold the helper's C source and no compiled binary; the
wheel must carry an executable ``sg-exec`` and claim the manylinux tag that
``auditwheel show``, run here on its own, confirms. A helper linked against a
library outside the manylinux policy fails the release; a local build without
auditwheel claims only ``linux_<arch>``.

The release wheel is then installed with the ``langchain`` extra into a fresh
virtual environment outside the source tree, by pip, with ``--no-index``: its
requirements, the extra's too, are resolved against this test environment's
site-packages (a ``.pth`` path line: no editable-install hook of ours comes
along), so nothing is downloaded and an unmet one fails the install. In it,
``shellgate check`` decides commands on the packaged default policy set and one
``bash`` call runs through that installation's Gate on its own helper.
"""

from __future__ import annotations

import json
import os
import platform
import stat
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from shellgate import __version__

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIST = ROOT / "tools" / "build_dist.py"
HELPER = "shellgate/executors/_helper/sg-exec"
#: The x86_64 helper uses no C library: the oldest manylinux policy holds for it.
X86_64_TAGS = ["py3-none-manylinux1_x86_64", "py3-none-manylinux_2_5_x86_64"]

SMOKE = r"""
import asyncio, json, sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

import shellgate
import shellgate.integrations.langchain
from shellgate import Gate, load_config
from shellgate.approval import AllowApprover
from shellgate.executors import _hardening

work = Path(sys.argv[1])
extras = metadata.metadata("shellgate").get_all("Provides-Extra") or []
unmet = [] if "langchain" in extras else [f"no langchain extra in {extras}"]
for line in metadata.requires("shellgate") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": "langchain"}):
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
    "langchain_adapter": shellgate.integrations.langchain.__file__,
    "helper": str(_hardening.HELPER),
    "hardening": _hardening.Hardening.detect().prefix_kind,
    "text": result.text,
    "is_error": result.is_error,
    "audit_records": len((work / "audit.jsonl").read_text().splitlines()),
    "unmet": unmet,
}))
"""


def run(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    status: int = 0,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=300, cwd=cwd, env=env
    )
    said = f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert done.returncode == status, said
    return done


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without what would change a build, an import or a config; ``extra`` added."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CC", "PYTHONPATH") and not k.startswith("SHELLGATE_")
    }
    return kept | extra


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's sdist and manylinux wheel, built as ``make dist`` builds them."""
    out = tmp_path_factory.mktemp("release") / "dist"
    run([sys.executable, str(BUILD_DIST), str(out)], env=clean_env())
    return out


def only(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {directory}: {found}"
    return found[0]


def wheel_meta(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(f"shellgate-{__version__}.dist-info/WHEEL").decode().splitlines()


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


def test_release_wheel_claims_the_manylinux_tag_auditwheel_confirms(dist: Path) -> None:
    assert sorted(p.name for p in dist.iterdir()) == sorted(
        [only(dist, "*.tar.gz").name, only(dist, "*.whl").name]
    )
    wheel = only(dist, "*.whl")
    meta = wheel_meta(wheel)
    tags = sorted(line.removeprefix("Tag: ") for line in meta if line.startswith("Tag: "))
    assert tags, meta
    assert all(tag.startswith("py3-none-manylinux") for tag in tags), tags
    if platform.machine() == "x86_64":
        assert tags == X86_64_TAGS
    platforms = ".".join(sorted(tag.split("-")[2] for tag in tags))
    assert wheel.name == f"shellgate-{__version__}-py3-none-{platforms}.whl"
    assert "Root-Is-Purelib: false" in meta
    with zipfile.ZipFile(wheel) as archive:
        helper = archive.getinfo(HELPER)
        assert archive.read(helper)[:4] == b"\x7fELF"
    assert (helper.external_attr >> 16) & stat.S_IXUSR
    # auditwheel's own reading of the finished wheel, independent of the repair
    shown = " ".join(run([sys.executable, "-m", "auditwheel", "show", str(wheel)]).stdout.split())
    (policy,) = [t.split("-")[2] for t in tags if t.split("-")[2].startswith("manylinux_")]
    assert f'is consistent with the following platform tag: "{policy}"' in shown
    assert "The wheel requires no external shared libraries" in shown


def build_wheel(out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m build --wheel`` of this tree with ``env`` added; not asserted."""
    argv = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)]
    return subprocess.run(
        [*argv, str(ROOT)], capture_output=True, text=True, check=False, timeout=300,
        env=clean_env(**env),
    )  # fmt: skip


def test_a_local_build_claims_only_the_platform(tmp_path: Path) -> None:
    done = build_wheel(tmp_path)
    assert done.returncode == 0, done.stderr
    platform_tag = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheel = only(tmp_path, "*.whl")
    assert wheel.name == f"shellgate-{__version__}-py3-none-{platform_tag}.whl"
    assert f"Tag: py3-none-{platform_tag}" in wheel_meta(wheel)


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
    with zipfile.ZipFile(only(tmp_path, f"shellgate-{__version__}-py3-none-any.whl")) as archive:
        assert HELPER not in archive.namelist()
        assert "shellgate/policies/default/policy.csv" in archive.namelist()


def test_a_helper_outside_the_manylinux_policy_fails_the_release(tmp_path: Path) -> None:
    # A compiler that refuses static links makes the hook fall back to a dynamic
    # helper, linked here against libcap, which no manylinux policy allows.
    cc = tmp_path / "cc"
    cc.write_text(
        "#!/bin/sh\n"
        'for arg; do [ "$arg" = -static ] && exit 1; done\n'
        'exec gcc "$@" -Wl,--no-as-needed -lcap\n'
    )
    cc.chmod(0o755)
    out = tmp_path / "dist"
    done = run([sys.executable, str(BUILD_DIST), str(out)], env=clean_env(CC=str(cc)), status=1)
    assert f"auditwheel cannot make shellgate-{__version__}-py3-none-linux_" in done.stderr
    assert "must need no shared library outside the manylinux policy" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("stale", "env", "said"),
    [
        pytest.param("shellgate-0.0.9.tar.gz", {}, "is not empty", id="stale-file-in-outdir"),
        pytest.param(None, {"SHELLGATE_WITHOUT_HELPER": "1"}, "carries the sg-exec helper",
                     id="without-helper"),
    ],
)  # fmt: skip
def test_a_release_is_refused_before_it_is_built(
    tmp_path: Path, stale: str | None, env: dict[str, str], said: str
) -> None:
    if stale is not None:
        (tmp_path / stale).write_text("stale")
    done = run([sys.executable, str(BUILD_DIST), str(tmp_path)], env=clean_env(**env), status=1)
    assert said in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ([stale] if stale else [])


def test_release_wheel_installs_with_an_extra_and_decides_outside_the_tree(
    dist: Path, tmp_path: Path
) -> None:
    assert not tmp_path.resolve().is_relative_to(ROOT)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site.stdout.strip()) / "_test_dependencies.pth").write_text(
        "\n".join(sorted(ours)) + "\n"
    )
    env = clean_env()
    # As docs/install.md tells users: the wheel file, with the extra they need.
    # pip also refuses a wheel whose tags this machine does not support.
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-index", f"{only(dist, '*.whl')}[langchain]"], env=env)  # fmt: skip
    (tmp_path / "ws").mkdir()
    done = run([str(python), "-c", SMOKE, str(tmp_path)], cwd=tmp_path, env=env)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["unmet"] == []
    assert Path(seen["package"]).is_relative_to(venv)
    assert Path(seen["langchain_adapter"]).is_relative_to(venv)
    assert Path(seen["helper"]).is_relative_to(venv)
    assert seen["hardening"] == "sg-exec"
    assert (seen["text"], seen["is_error"]) == ("hi\nNoNewPrivs:\t1\n", False)
    assert seen["audit_records"] >= 2  # the request and its result, on the record

    shellgate = str(venv / "bin" / "shellgate")
    allowed = run([shellgate, "check", "--json", "--", "ls -la"], cwd=tmp_path, env=env)
    denied = run([shellgate, "check", "--json", "--", "git status && rm -rf ~"],
                 cwd=tmp_path, env=env, status=11)  # fmt: skip
    for done in (allowed, denied):  # no config: the wheel's own default policy set
        _, found, packaged = done.stderr.partition("using the packaged policy set ")
        assert found, done.stderr
        assert Path(packaged.strip()).resolve().is_relative_to(venv.resolve()), done.stderr
    for done, decision, rules in ((allowed, "allow", "default"), (denied, "deny", "baseline")):
        said = json.loads(done.stdout)
        assert (said["decision"], said["layer"]) == (decision, "casbin"), said
        assert said["rule"].startswith(f"{rules}/policy.csv:"), said  # the wheel has both sets
