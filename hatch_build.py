"""Build hook: compile the static ``sg-exec`` hardening helper into the package.

Without a C compiler the build still succeeds and shellgate falls back to
``setpriv`` + ``prlimit`` from util-linux (same guarantees, about 1 ms slower per
command; see docs/performance.md).
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

HELPER = Path("src/shellgate/executors/_helper")


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        source = root / HELPER / "sg-exec.c"
        target = root / HELPER / "sg-exec"
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            print("shellgate: no C compiler; using the setpriv fallback", file=sys.stderr)
            return
        # Fastest first: no C library at all (x86_64: ~40 us an exec instead of
        # ~0.5 ms for static glibc's start-up), then static, then dynamic libc.
        attempts: list[list[str]] = []
        if platform.machine() in ("x86_64", "AMD64"):
            attempts.append(
                ["-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector",
                 "-fno-builtin", "-DSG_NOLIBC"]
            )  # fmt: skip
        attempts += [["-static"], []]
        for flags in attempts:
            result = subprocess.run(
                [cc, "-O2", "-Wall", "-Wextra", *flags, "-o", str(target), str(source)],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode == 0:
                break
        else:
            print(f"shellgate: cannot build sg-exec: {result.stderr.strip()}", file=sys.stderr)
            return
        target.chmod(0o755)
        build_data["artifacts"].append(str(HELPER / "sg-exec"))
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
