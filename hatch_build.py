"""Build hook (wheel only): compile the static ``sg-exec`` hardening helper.

The helper is compiled into a temporary build directory — never into the source
tree, and never into the sdist, which ships ``sg-exec.c`` and this hook — and
force-included into the wheel at ``shellgate/executors/_helper/sg-exec`` (the
editable wheel of ``pip install -e .`` carries it to the same place under
site-packages, where the run-time lookup in ``executors/_hardening.py`` finds it).

The wheel is tagged ``py3-none-<platform>`` (``py3-none-linux_x86_64``): the
Python code is version-independent and the helper is a static executable, so
only the architecture matters. That is all a local build may claim; a release
(``tools/build_dist.py``, ``make dist``) has auditwheel check the helper's
linkage and retag the wheel manylinux, which package indexes accept.

Without a working C compiler the build fails, loudly. Building without the
helper is a choice made up front: ``SHELLGATE_WITHOUT_HELPER=1`` builds a pure
``py3-none-any`` wheel whose gate hardens commands with ``setpriv`` + ``prlimit``
from util-linux instead (same guarantees, about 1 ms slower a command; see
docs/install.md and docs/performance.md).
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "src/shellgate/executors/_helper/sg-exec.c"
INSTALLED_AS = "shellgate/executors/_helper/sg-exec"
WITHOUT_HELPER = "SHELLGATE_WITHOUT_HELPER"


class HelperBuildError(RuntimeError):
    """The helper could not be built and building without it was not asked for."""


def platform_tag() -> str:
    """This machine's wheel platform tag: ``linux_x86_64``, ``linux_aarch64``..."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def without_helper() -> bool:
    return os.environ.get(WITHOUT_HELPER, "").strip().lower() in ("1", "true", "yes")


def compile_helper(source: Path, target: Path) -> None:
    """Compile ``source`` to ``target``, fastest variant first; raise if none builds."""
    found = shutil.which("cc") or shutil.which("gcc")
    cc = shlex.split(os.environ.get("CC", "")) or ([found] if found else [])
    if not cc:
        raise HelperBuildError("no C compiler found (looked for $CC, cc and gcc)")
    # Fastest first: no C library at all (x86_64: ~40 us an exec instead of
    # ~0.5 ms for static glibc's start-up), then static, then dynamic libc.
    attempts: list[list[str]] = []
    if platform.machine() in ("x86_64", "AMD64"):
        attempts.append(
            ["-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector",
             "-fno-builtin", "-DSG_NOLIBC"]
        )  # fmt: skip
    attempts += [["-static"], []]
    errors: list[str] = []
    for flags in attempts:
        argv = [*cc, "-O2", "-Wall", "-Wextra", *flags, "-o", str(target), str(source)]
        try:
            result = subprocess.run(argv, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise HelperBuildError(f"cannot run the C compiler {cc[0]}: {exc}") from exc
        if result.returncode == 0:
            target.chmod(0o755)
            return
        errors.append(f"$ {' '.join(argv)}\n{result.stderr.strip()}")
    raise HelperBuildError("every compile of sg-exec failed:\n" + "\n".join(errors))


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":  # the sdist ships the C source, never a binary
            return
        if without_helper():
            print(
                f"shellgate: {WITHOUT_HELPER} is set: building without the sg-exec helper; "
                "the gate will harden commands with setpriv + prlimit (util-linux)",
                file=sys.stderr,
            )
            return
        self._build_dir = tempfile.mkdtemp(prefix="shellgate-build-")
        target = Path(self._build_dir) / "sg-exec"
        try:
            compile_helper(Path(self.root) / SOURCE, target)
        except HelperBuildError as exc:
            shutil.rmtree(self._build_dir, ignore_errors=True)
            raise HelperBuildError(
                f"shellgate: cannot build the sg-exec hardening helper: {exc}\n"
                "Install a C compiler and libc headers (Debian: apt-get install gcc libc6-dev), "
                f"or build without the helper on purpose with {WITHOUT_HELPER}=1 "
                "(commands are then hardened with setpriv + prlimit; see docs/install.md)."
            ) from exc
        build_data["force_include"][str(target)] = INSTALLED_AS
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform_tag()}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        build_dir = getattr(self, "_build_dir", None)
        if build_dir is not None:
            shutil.rmtree(build_dir, ignore_errors=True)
