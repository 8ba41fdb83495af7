"""Shared pieces of the ops tests: a policy set, an approver, a parsed scrape."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from shellgate.config import Config, load_config
from shellgate.models import ApprovalAnswer, ApprovalRequest
from shellgate.ops.metrics import Metrics
from shellgate.policy.loader import SHIPPED_MODEL

RULES = """
    p, agent, *, echo *, allow
    p, agent, *, false, allow
    p, agent, *, sleep *, allow
    p, agent, *, rm *, deny, removes files
    p, agent, *, touch *, ask, writes files
    p, agent, *, write:**, allow
"""


def policy_dir(tmp_path: Path) -> Path:
    policy = tmp_path / "policy"
    policy.mkdir(exist_ok=True)
    shutil.copy(SHIPPED_MODEL, policy / "model.conf")
    (policy / "policy.csv").write_text(textwrap.dedent(RULES).lstrip("\n"), encoding="utf-8")
    (policy / "tests.csv").write_text("agent, default, deny, rm x\n", encoding="utf-8")
    return policy


def gate_config(tmp_path: Path, **sections: dict[str, Any]) -> Config:
    """Workspace, audit file and policy set in ``tmp_path`` (``sections`` override)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    base: dict[str, dict[str, Any]] = {
        "executor": {"workspace": str(ws), "grace_ms": 300},
        "audit": {"path": str(tmp_path / "audit.jsonl")},
        "policy": {"paths": [str(policy_dir(tmp_path))]},
    }
    for name, values in sections.items():
        base[name] = {**base.get(name, {}), **values}
    if "store" in base["audit"]:
        base["audit"].pop("path", None)
    return load_config(None, **base)


class Approver:
    """Approves every ask, except a command holding ``no-thanks``."""

    name = "ops-test"

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if "no-thanks" in request.call.command:
            return ApprovalAnswer(answer="deny", message="not this one", approver=self.name)
        return ApprovalAnswer(answer="allow_once", approver=self.name)


Sample = tuple[str, frozenset[tuple[str, str]]]


def parse(body: bytes) -> dict[Sample, float]:
    """Every sample of a scrape, by (name, labels), through prometheus_client's own parser."""
    samples: dict[Sample, float] = {}
    for family in text_string_to_metric_families(body.decode("utf-8")):
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in samples, f"duplicate sample {key}"
            samples[key] = sample.value
    return samples


def scrape(metrics: Metrics, config: Config) -> dict[Sample, float]:
    body, content_type = metrics.render(config)
    assert content_type.startswith("text/plain; version=")
    return parse(body)


def value(samples: dict[Sample, float], name: str, **labels: str) -> float:
    """One sample's value (0 when absent: a counter not yet incremented)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: dict[Sample, float], name: str, **labels: str) -> float:
    """The sum over every sample of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= set(ls))


def counters(samples: dict[Sample, float]) -> dict[Sample, float]:
    return {k: v for k, v in samples.items() if k[0].endswith(("_total", "_count", "_bucket"))}


def assert_monotonic(before: dict[Sample, float], after: dict[Sample, float]) -> None:
    for key, old in counters(before).items():
        assert after.get(key, 0.0) >= old, f"{key} went down: {old} -> {after.get(key)}"
