"""The real decider over a policy set, for the catalog's decision tests.

``verdict(command)`` decides through the analysis layer, the protected-paths
layer and the casbin layer over ``fixtures/allowlist`` (whole tools allowed the
way admins write them), with the closing default ``ask``; ``decider_for`` builds
the same over any set.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.models import CallInfo, Effect, Verdict

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "allowlist"
WORKDIR = "/work/project"
A, K, D = "allow", "ask", "deny"
NOT_ALLOW = "ask-or-deny"  # for the few cases where either refusal is sound


@functools.cache
def decider_for(directory: str) -> Decider:
    config = Config.model_validate(
        {
            "policy": {"paths": [directory], "default": "ask"},
            "executor": {"workspace": WORKDIR},
            "audit": {"path": None},
        }
    )
    return Decider(config)


def decider() -> Decider:
    return decider_for(str(FIXTURE))


def verdict(command: str, directory: str | None = None) -> Verdict:
    call = CallInfo(
        tool="bash", command=command, subject="agent", tenant="default",
        session="test", workdir=WORKDIR, workspace=WORKDIR,
    )  # fmt: skip
    return decider_for(directory or str(FIXTURE)).decide(call)


def effect(command: str) -> Effect:
    return verdict(command).effect


def p(id: str, command: str, expected: object) -> Any:
    return pytest.param(command, expected, id=id)
