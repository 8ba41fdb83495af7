"""The demo's throw-away world: a temporary root, a workspace, a policy set, configs.

The root lives outside ``/tmp`` when it can (``/var/tmp``, then ``~/.cache``): the
bwrap sandbox gives every command a private ``/tmp``, so a write "outside the
workspace" under ``/tmp`` would vanish silently instead of being refused, and the
sandbox step could not show the refusal.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from shellgate.config import Config, load_config, packaged_policy_set
from shellgate.errors import ConfigError

POLICY_SET = "default"

FILES = {
    "README.md": "# demo project\nA tiny project the scripted agent works on.\n",
    "notes.txt": "scratch notes the agent will be allowed to delete\n",
    "src/app.py": 'print("hello from the demo app")\n',
}


def find_policy_set(name: str = POLICY_SET) -> Path:
    """The shipped example policy set ``name``, from the package, the repo or the cwd.

    Looked up in order: the packaged set (:func:`~shellgate.config.packaged_policy_set`:
    inside an installed package, else next to ``src/`` in a checkout), then
    ``./policies/<name>``.
    """
    packaged = packaged_policy_set(name)
    if packaged is not None:
        return packaged
    candidate = Path.cwd() / "policies" / name
    if (candidate / "policy.csv").is_file() and (candidate / "model.conf").is_file():
        return candidate
    raise ConfigError(
        f"cannot find the example policy set '{name}' (not in this installation, "
        f"nor at {candidate})"
    )


def _root_parent() -> str | None:
    # mkdtemp makes a private 0700 directory with an unpredictable name, so a shared
    # sticky /var/tmp is safe here; it is chosen for being outside /tmp (see above).
    for parent in ("/var/tmp", str(Path.home() / ".cache")):  # noqa: S108
        if os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK):
            return parent
    return None  # the system temp dir: the sandbox step then reports what it saw


@dataclass
class DemoWorld:
    """Paths of one demo run; :meth:`remove` deletes all of it."""

    root: Path
    workspace: Path
    policy: Path
    audit: Path
    outside: Path  # a host file next to the workspace that no sandboxed call may create

    @classmethod
    def create(cls, policy_source: Path) -> DemoWorld:
        root = Path(tempfile.mkdtemp(prefix="shellgate-demo-", dir=_root_parent())).resolve()
        workspace = root / "workspace"
        for rel, text in FILES.items():
            path = workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        policy = root / "policies" / policy_source.name
        try:
            shutil.copytree(policy_source, policy, ignore_dangling_symlinks=True)
        except (OSError, shutil.Error) as exc:  # a dangling link, an unreadable file
            shutil.rmtree(root, ignore_errors=True)
            raise ConfigError(f"{policy_source}: cannot copy the policy set: {exc}") from None
        return cls(root, workspace, policy, root / "audit.jsonl", root / "outside.txt")

    def config(self, executor: str = "local") -> Config:
        return load_config(
            None,
            executor={"kind": executor, "workspace": str(self.workspace), "grace_ms": 500},
            sandbox={"mode": "workspace-write", "network": False},
            policy={"paths": [str(self.policy)], "default": "ask"},
            approval={"mode": "deny", "timeout_ms": 10_000},
            audit={"path": str(self.audit)},
        )

    def short(self, rule: str | None) -> str:
        """A rule reference relative to the demo root (``policies/default/policy.csv:14``)."""
        if not rule:
            return ""
        prefix = str(self.root) + os.sep
        return rule[len(prefix) :] if rule.startswith(prefix) else rule

    def shorten(self, text: str) -> str:
        """``text`` with every path under the demo root made relative to it (for display)."""
        return text.replace(str(self.root) + os.sep, "")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
