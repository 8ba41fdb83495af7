"""Build the release distributions: the sdist and a manylinux wheel.

    python tools/build_dist.py OUTDIR      (``make dist`` runs it with OUTDIR=dist)

1. ``python -m build --no-isolation`` makes the sdist and, from it, the wheel.
   The build hook (``hatch_build.py``) compiles ``sg-exec`` into it and tags it
   ``py3-none-linux_<arch>``: what any local build may claim, and what no
   package index accepts.
2. ``auditwheel repair`` reads every ELF file in that wheel (there is one, the
   helper) and gives it the most compatible manylinux tag whose policy it
   satisfies: ``manylinux_2_5_x86_64`` (alias ``manylinux1_x86_64``) for the
   x86_64 helper, which uses no C library at all. ``--patcher none``: auditwheel
   may only retag. A helper that would need a library grafted into the wheel
   (one outside the manylinux policy) fails the release instead of being
   rewritten behind our back.
3. OUTDIR receives the sdist and the manylinux wheel, nothing else. It must be
   empty or missing, so no stale file is uploaded beside them.

The wheel is built for the machine's own architecture: a release for another
one is built on such a machine (docs/install.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_HELPER = "SHELLGATE_WITHOUT_HELPER"


class ReleaseError(RuntimeError):
    """The distributions could not be built as a release."""


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}".rstrip())
    return done


def only(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    if len(found) != 1:
        raise ReleaseError(f"expected one {pattern} in {directory}, found {found}")
    return found[0]


def build_dist(outdir: Path) -> list[Path]:
    """Build sdist and manylinux wheel into ``outdir``; return their paths."""
    if os.environ.get(WITHOUT_HELPER, "").strip():
        raise ReleaseError(
            f"{WITHOUT_HELPER} is set: a release wheel carries the sg-exec helper "
            "(a pure wheel would be installed on every platform); unset it"
        )
    if outdir.exists() and any(outdir.iterdir()):
        raise ReleaseError(f"{outdir} is not empty: a release is built into an empty directory")
    with tempfile.TemporaryDirectory(prefix="shellgate-dist-") as scratch:
        built, repaired = Path(scratch, "built"), Path(scratch, "repaired")
        run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(built), str(ROOT)])
        sdist, wheel = only(built, "*.tar.gz"), only(built, "*.whl")
        try:
            # auditwheel writes a partial wheel before it fails: repair into
            # scratch space and move only a finished manylinux wheel out.
            run([sys.executable, "-m", "auditwheel", "repair", "--patcher", "none",
                 "--wheel-dir", str(repaired), str(wheel)])  # fmt: skip
        except ReleaseError as exc:
            show = subprocess.run(
                [sys.executable, "-m", "auditwheel", "show", str(wheel)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            raise ReleaseError(
                f"auditwheel cannot make {wheel.name} a manylinux wheel without grafting a "
                "library into it: sg-exec must need no shared library outside the manylinux "
                f"policy.\n$ auditwheel show {wheel.name}\n{show.stdout.strip()}\n\n{exc}"
            ) from exc
        release = only(repaired, "*.whl")
        if "manylinux" not in release.name:
            raise ReleaseError(f"auditwheel produced {release.name}, which has no manylinux tag")
        outdir.mkdir(parents=True, exist_ok=True)
        # shutil.move, not rename: the scratch space may be another file system
        return [Path(shutil.move(path, outdir / path.name)) for path in (sdist, release)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/build_dist.py OUTDIR", file=sys.stderr)
        return 2
    try:
        made = build_dist(Path(argv[0]).resolve())
    except ReleaseError as exc:
        print(f"build_dist: {exc}", file=sys.stderr)
        return 1
    for path in made:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
