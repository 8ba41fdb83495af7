"""examples/console.toml: the README tour's console, served by a real process over the
stores the tour's own commands made, from a checkout-like directory (the real one is
never written)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.console.console_helpers import ConsoleProcess, login
from tests.examples.examples_helpers import EXAMPLES, POLICIES, env_with_src


def header_commands() -> list[str]:
    """The shell lines of console.toml's header comment (the ones starting with `(` or a name)."""
    lines = (EXAMPLES / "console.toml").read_text(encoding="utf-8").splitlines()
    header = [line[1:].strip() for line in lines[: lines.index("[console]")]]
    return [line for line in header if line.startswith(("(umask", "shellgate "))]


def shellgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", *args], cwd=cwd, env=env_with_src(),
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_the_tour_console_serves_the_tours_stores(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "examples").mkdir(parents=True)
    shutil.copy(EXAMPLES / "console.toml", checkout / "examples" / "console.toml")
    os.symlink(POLICIES, checkout / "policies")
    # The README tour's commands that fill the stores the console reads.
    pushed = shellgate("policy", "push", "policies/default", "--reason", "first version",
                       "--store", "sqlite:policy.db", cwd=checkout)
    assert pushed.returncode == 0, pushed.stderr
    ran = shellgate("run", "--", "ls", cwd=checkout)
    assert ran.returncode == 0, ran.stderr
    make_tokens, serve = header_commands()
    subprocess.run(["bash", "-c", make_tokens], cwd=checkout, check=True, timeout=30)
    assert (checkout / "console-tokens").stat().st_mode & 0o077 == 0
    token = (checkout / "console-tokens").read_text().split()[0]
    assert shlex.split(serve) == ["shellgate", "serve", "--config", "examples/console.toml"]

    console = ConsoleProcess(checkout / "examples" / "console.toml")
    try:
        with console.client() as client:
            assert login(client, token).status_code in (200, 303)
            approvals = client.get("/approvals")
            policies = client.get("/policies")
            audit = client.get("/audit")
            metrics = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert console.stop() == 0
    finally:
        console.close()
    assert "Nothing is waiting for an answer." in approvals.text
    assert "first version" in policies.text
    assert "intact" in audit.text
    assert 'shellgate_store_up{store="approval"} 1.0' in metrics.text
    assert 'shellgate_store_up{store="policy"} 1.0' in metrics.text
    assert "WARNING" not in console.stderr()
