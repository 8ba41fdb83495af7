"""Approving out of band: decide now, let a person answer, run later (no network).

Run it with a Python that has shellgate installed (in a checkout, the venv that
``make demo`` or ``make test`` creates):

    .venv/bin/python examples/pause_and_resume.py [--workspace DIR] [--refuse]

This is the shape agent frameworks use when they pause a run for approval: the
gate decides a call and records it (nothing runs), the run stops, a person
answers later, and the run resumes with that person's sealed answer. The audit
log names the person. docs/approvals.md has the rules (bound to the exact call,
single use, expiring); docs/integrations.md has ready-made adapters.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

try:
    from shellgate import Gate, load_config
except ModuleNotFoundError as exc:  # the usual mistake: the system python3
    sys.exit(
        f"pause_and_resume.py: this Python ({sys.executable}) cannot import {exc.name}; "
        "run it with .venv/bin/python examples/pause_and_resume.py"
    )

POLICY = Path(__file__).resolve().parent.parent / "policies" / "default"


async def main(workspace: Path, refuse: bool) -> int:
    config = load_config(
        None,
        executor={"workspace": str(workspace)},
        policy={"paths": [str(POLICY)]},
        audit={"path": str(workspace / "audit.jsonl")},
    )
    # A CI workflow is code another program runs later: writing it asks, whatever the rules.
    args = {"command": "touch .gitlab-ci.yml", "description": "Create the CI config"}
    async with Gate(config) as gate:
        # 1. The agent wants to run a command: decide it, nothing runs yet.
        decision = await gate.decide("bash", args, session="run-42")
        print(f"decision: {decision.effect} ({decision.reason})")
        if not decision.needs_approval:
            result = await gate.call("bash", args, session="run-42", decision=decision)
            print(result.text)
            return 0
        # 2. The run pauses; the question goes to a person (a ticket, a chat, a UI).
        print(f"question for a person: {decision.question}")
        # 3. The person answers. Keep the token in the run's state if it must wait.
        if refuse:
            answer = gate.approve(decision, "alice@example.com", answer="deny",
                                  message="not in this directory")
        else:
            answer = gate.approve(decision, "alice@example.com")
        token = answer.token
        # 4. The run resumes with that answer: this exact call runs, once.
        result = await gate.call("bash", args, session="run-42", approval=token)
        print(f"the model reads: {result.text.strip() or '(no output)'}")
    approvals = [
        json.loads(line)
        for line in (workspace / "audit.jsonl").read_text().splitlines()
        if json.loads(line)["type"] == "approval"
    ]
    print(f"audit log: answered by {approvals[-1]['approver']}: {approvals[-1]['answer']}")
    return 0 if (result.outcome == "ok") != refuse else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workspace", type=Path, help="where the command runs (default: a temp dir)"
    )
    parser.add_argument("--refuse", action="store_true", help="the person says no")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = opts.workspace or Path(tmp)
        sys.exit(asyncio.run(main(ws.resolve(), opts.refuse)))
