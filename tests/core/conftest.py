"""The sg-exec helper's tests run each case on the installed helper and on the same
source built over libc (the non-x86_64 build)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from shellgate.executors import _hardening


@pytest.fixture(scope="session")
def libc_helper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The helper's source built over libc (the non-x86_64 build), once per run: the
    tests only execute it, and each compile cost a fifth of a second."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    source = Path(_hardening.__file__).with_name("_helper") / "sg-exec.c"  # the HELPER may lie elsewhere
    target = tmp_path_factory.mktemp("helper") / "sg-exec-libc"
    subprocess.run([cc, "-O2", "-o", str(target), str(source)], check=True, timeout=120)
    return target


@pytest.fixture(params=["built", "libc"])
def helper_binary(request: pytest.FixtureRequest) -> Path:
    """The installed helper, and the same source built over libc (the non-x86_64 build)."""
    if request.param == "built":
        return _hardening.HELPER
    built: Path = request.getfixturevalue("libc_helper")
    return built
