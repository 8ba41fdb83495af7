"""``shellgate demo`` runs end to end, and its exit status means something."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from shellgate.demo import find_policy_set, run_demo
from shellgate.policy.loader import SHIPPED_MODEL

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "120"}
    env.pop("SHELLGATE_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "shellgate.cli", "demo", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_shellgate_demo_exits_zero_with_every_step_as_expected() -> None:
    done = _cli()
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "every step behaved as expected" in out
    assert "NOT as expected" not in out
    assert out.count("✓ as expected") + out.count("– skipped") == 8
    assert "answered automatically by the demo's scripted approver" in out
    assert "Error: denied by casbin rule" in out
    assert "baseline/policy.csv:" in out  # rm -rf / is the baseline's
    assert "default/policy.csv:" in out
    assert "background task bash-1" in out
    assert "hash mismatch" in out


def test_demo_removes_its_workspace_unless_kept(tmp_path: Path) -> None:
    out = io.StringIO()
    assert run_demo(Console(file=out, width=120), keep=True) == 0
    kept = Path(out.getvalue().rsplit("kept: ", 1)[1].strip())
    try:
        assert (kept / "audit.jsonl").is_file()
        assert (kept / "workspace" / "README.md").is_file()
        assert not (kept / "outside.txt").exists()
    finally:
        shutil.rmtree(kept)


def test_a_policy_that_misbehaves_makes_the_demo_fail(tmp_path: Path) -> None:
    lax = tmp_path / "lax"
    lax.mkdir()
    shutil.copy(SHIPPED_MODEL, lax / "model.conf")
    (lax / "policy.csv").write_text(
        "p, agent, *, cat *, allow\np, agent, *, rm *, allow\np, agent, *, timeout *, allow\n"
        "p, agent, *, curl *, ask\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    status = run_demo(Console(file=out, width=120), policy=lax)
    text = out.getvalue()
    assert status == 1
    # its rm allow removes notes.txt unconfined: not what the step expects
    assert "✗ NOT as expected: sandboxed by a rule, ran in bwrap, nobody asked" in text
    # rm -rf / stays denied: the baseline set is loaded under it
    assert "✓ as expected: denied by a named rule, nobody asked" in text
    assert "did not behave as expected" in text


def test_demo_with_a_missing_policy_dir_is_a_usage_error(tmp_path: Path) -> None:
    done = _cli("--policy", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: --policy ")
    assert "Traceback" not in done.stderr


def test_the_example_policy_set_is_found_from_the_checkout() -> None:
    assert find_policy_set() == ROOT / "policies" / "default"


def test_demo_with_a_broken_policy_set_is_a_usage_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(SHIPPED_MODEL, broken / "model.conf")
    (broken / "policy.csv").write_text("p, agent, *, ls *, maybe\n", encoding="utf-8")
    done = _cli("--policy", str(broken))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ")
    assert "policy.csv:1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_policy_set_is_named_where_the_user_keeps_it(tmp_path: Path) -> None:
    # The error named the demo's throw-away copy (/var/tmp/shellgate-demo-…/policies/…).
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _cli("--policy", str(empty))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {empty}/model.conf: missing model.conf")
    assert "shellgate-demo-" not in done.stderr


def test_a_policy_dir_that_cannot_be_copied_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    # A policy set holding a dangling symlink (an editor's lock file, say): the copy
    # into the demo world raised shutil.Error with a traceback and left its temp dir.
    linked = tmp_path / "linked"
    shutil.copytree(ROOT / "policies" / "default", linked)
    (linked / ".#policy.csv").symlink_to(tmp_path / "gone")
    unreadable = linked / "notes"
    unreadable.write_text("x", encoding="utf-8")
    unreadable.chmod(0)
    out = io.StringIO()
    try:
        if os.geteuid() == 0:  # root reads it anyway: only the dangling link is tested
            assert run_demo(Console(file=out, width=120), policy=linked) == 0
            return
        done = _cli("--policy", str(linked))
    finally:
        unreadable.chmod(0o600)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {linked}: cannot copy the policy set")
    assert "Traceback" not in done.stderr
