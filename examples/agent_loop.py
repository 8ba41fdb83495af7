"""Embedding shellgate in a minimal agent loop, with a scripted "model" (no network).

Run it with a Python that has shellgate installed: in a checkout, the venv that
``make demo`` or ``make test`` creates (the system ``python3`` has no shellgate):

    .venv/bin/python examples/agent_loop.py [--workspace DIR]

The loop is the shape every agent has: send the tool schemas and the transcript
to the model, run the tool calls it asks for, append the results, repeat until it
answers in text. The only shellgate-specific lines are the ``Gate`` (config,
approver), ``gate.schemas("anthropic")`` and ``await gate.call(...)``; a real
agent swaps ``ScriptedModel`` for its model API client.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

try:
    from shellgate import (
        ApprovalAnswer,
        ApprovalRequest,
        CallbackApprover,
        Gate,
        load_config,
    )
except ModuleNotFoundError as exc:  # the usual mistake: the system python3
    sys.exit(
        f"agent_loop.py: this Python ({sys.executable}) cannot import {exc.name}; "
        "run it with the Python that has shellgate installed, e.g. "
        ".venv/bin/python examples/agent_loop.py"
    )

HERE = Path(__file__).resolve().parent
POLICY = HERE.parent / "policies" / "default"


class ScriptedModel:
    """Stands in for a model API: answers each turn from a script.

    Each turn is a list of tool calls (Anthropic-style ``tool_use`` blocks); after
    the script runs out it answers in text, summarising the results it was given.
    """

    SCRIPT: ClassVar[list[list[tuple[str, dict[str, Any]]]]] = [
        [("bash", {"command": "ls", "description": "list the workspace"})],
        [
            (
                "bash",
                {
                    "command": "printf 'hello\\n' | tee hello.txt",
                    "description": "write a greeting file",
                },
            )
        ],
        [
            ("bash", {"command": "cat hello.txt", "description": "read the greeting back"}),
            # asks: policies/default has a person approve what would lose work for good
            ("bash", {"command": "git clean -n", "description": "preview untracked files"}),
            ("bash", {"command": "rm -rf /", "description": "tidy up everything"}),
        ],
    ]

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tool_names = {tool["name"] for tool in tools}
        self.turn = 0

    def respond(self, transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One assistant message: tool_use blocks, or a final text block."""
        if self.turn < len(self.SCRIPT):
            calls = self.SCRIPT[self.turn]
            self.turn += 1
            assert all(name in self.tool_names for name, _ in calls), "model used an unknown tool"
            return [
                {"type": "tool_use", "id": f"toolu_{self.turn}_{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(calls)
            ]
        results = [
            b
            for m in transcript
            if m["role"] == "user"
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        failed = sum(1 for r in results if r["is_error"])
        return [{"type": "text", "text": f"Done: {len(results)} tool calls, {failed} refused."}]


async def approve(request: ApprovalRequest) -> ApprovalAnswer:
    """The host's approver: here, yes to everything asked (a real host asks a person)."""
    print(f"  [approval] {request.question}")
    return ApprovalAnswer(answer="allow_once", message=None, approver="agent_loop example")


async def agent_loop(workspace: Path, audit: Path) -> list[dict[str, Any]]:
    config = load_config(
        None,
        executor={"workspace": str(workspace)},
        policy={"paths": [str(POLICY)]},
        audit={"path": str(audit)},
    )
    approver = CallbackApprover(approve, name="agent_loop example")
    transcript: list[dict[str, Any]] = [{"role": "user", "content": "Say hello in a file."}]
    async with Gate(config, approver=approver) as gate:
        model = ScriptedModel(gate.schemas("anthropic"))
        while True:
            message = model.respond(transcript)
            transcript.append({"role": "assistant", "content": message})
            calls = [block for block in message if block["type"] == "tool_use"]
            if not calls:
                print(f"model: {message[0]['text']}")
                return transcript
            results = []
            for block in calls:
                print(f"model → {block['name']}: {block['input'].get('command')}")
                result = await gate.call(block["name"], block["input"])
                print("  " + result.text.replace("\n", "\n  ").rstrip())
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": result.text,
                        "is_error": result.is_error,
                    }
                )
            transcript.append({"role": "user", "content": results})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="default: a new temporary directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="shellgate-agent-") as tmp:
        workspace = args.workspace or Path(tmp) / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        transcript = asyncio.run(agent_loop(workspace.resolve(), Path(tmp) / "audit.jsonl"))
        made = (workspace / "hello.txt").read_text() if (workspace / "hello.txt").exists() else ""
    return 0 if made == "hello\n" and transcript[-1]["role"] == "assistant" else 1


if __name__ == "__main__":
    sys.exit(main())
