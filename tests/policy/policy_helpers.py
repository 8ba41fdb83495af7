"""Shared builders for the policy tests: real policy sets in tmp dirs, real segments."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from shellgate.models import CallInfo, Segment, Write
from shellgate.policy.loader import SHIPPED_MODEL


def write_set(root: Path, rows: str, name: str = "set") -> Path:
    """A policy set directory with the shipped model and ``rows`` as policy.csv."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED_MODEL, directory / "model.conf")
    (directory / "policy.csv").write_text(textwrap.dedent(rows).lstrip("\n"), encoding="utf-8")
    return directory


def seg(*argv: str, forms: tuple[tuple[str, ...], ...] = (), writes: tuple[str, ...] = ()) -> Segment:
    made = tuple(Write(path=w, target=w, how="test") for w in writes)
    return Segment(text=" ".join(argv), argv=argv, forms=(argv, *forms), writes=made)


def call(subject: str = "agent", tenant: str = "default", workdir: str = "/tmp",
         workspace: str = "/tmp", command: str = "x") -> CallInfo:
    return CallInfo(tool="bash", command=command, subject=subject, tenant=tenant,
                    session="s", workdir=workdir, workspace=workspace)
