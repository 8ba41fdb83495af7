"""The three tools' argument models, their JSON schemas, and argument validation.

The pydantic models are the single source of the JSON schemas for every model API
(``schemas("openai" | "anthropic" | "mcp")``). Validation is written by hand on
top, because its messages are part of the contract (tools.md): they name the field
and the bad value, e.g. ``invalid timeoutMs: expected a positive number, got 0``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shellgate.errors import ToolInputError
from shellgate.models import MODE_ORDER, SandboxMode
from shellgate.tools.render import shorten

BASH_DESCRIPTION = (
    "Run a shell command with `bash -c` in a fresh non-interactive shell and return its "
    "output. Nothing persists between calls: use `workdir`, not `cd`. Every call passes "
    "the deployment's permission policy first; a denial says which rule decided. Output "
    "is capped (the tail is kept, with a path to the full output). Long-lived processes "
    "(servers, watchers) belong in `run_in_background`: a foreground call stops every "
    "process it started before it returns."
)
OUTPUT_DESCRIPTION = (
    "Read what a background task printed since the previous bash_output call for it, "
    "and its status."
)
KILL_DESCRIPTION = (
    "Stop a background task: SIGTERM to its process group, SIGKILL after a grace period."
)


class BashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", title="bash")

    command: str = Field(description="The command, run as `bash -c COMMAND`.")
    description: str = Field(
        description="5-10 words, active voice, saying what the command does (for the UI and "
        "audit log; no effect on execution)."
    )
    timeoutMs: float | None = Field(
        default=None,
        gt=0,
        description="Timeout in milliseconds (default 120000, capped at 600000). "
        "Ignored with run_in_background.",
    )
    workdir: str | None = Field(
        default=None,
        description="Working directory; relative paths resolve against the workspace root.",
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the command and return a task id at once; read it with bash_output.",
    )


class SandboxedBashArgs(BashArgs):
    model_config = ConfigDict(extra="forbid", title="bash")

    sandbox_permissions: SandboxMode | None = Field(
        default=None,
        description="Only after the sandbox denied this exact command: the narrowest wider "
        "mode that suffices, for a one-shot rerun the user must approve.",
    )
    justification: str | None = Field(
        default=None, description="One sentence telling the user why the wider mode is needed."
    )


class TaskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The id returned when the task started, e.g. bash-1.")


class BashOutputArgs(TaskArgs):
    model_config = ConfigDict(extra="forbid", title="bash_output")


class BashKillArgs(TaskArgs):
    model_config = ConfigDict(extra="forbid", title="bash_kill")


TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "bash": (BashArgs, BASH_DESCRIPTION),
    "bash_output": (BashOutputArgs, OUTPUT_DESCRIPTION),
    "bash_kill": (BashKillArgs, KILL_DESCRIPTION),
}


def input_schema(tool: str, *, sandboxed: bool = False) -> dict[str, Any]:
    model = SandboxedBashArgs if (tool == "bash" and sandboxed) else TOOLS[tool][0]
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        # "X | None = None" is "optional", not "nullable", on the wire.
        if "anyOf" in prop:
            kinds = [k for k in prop.pop("anyOf") if k.get("type") != "null"]
            if len(kinds) == 1:
                prop.update(kinds[0])
            else:  # pragma: no cover - no such field today
                prop["anyOf"] = kinds
        if prop.get("default", 0) is None:
            prop.pop("default")
    schema.pop("$defs", None)
    if sandboxed and tool == "bash":
        schema["properties"]["sandbox_permissions"] = {
            "type": "string",
            "enum": list(MODE_ORDER),
            "description": SandboxedBashArgs.model_fields["sandbox_permissions"].description,
        }
    schema["additionalProperties"] = False
    return schema


def schemas(
    fmt: Literal["openai", "anthropic", "mcp"], *, sandboxed: bool = False
) -> list[dict[str, Any]]:
    """Tool definitions in the shape each model API expects."""
    out: list[dict[str, Any]] = []
    for name, (_, description) in TOOLS.items():
        params = input_schema(name, sandboxed=sandboxed)
        if fmt == "openai":
            out.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": description, "parameters": params},
                }
            )
        elif fmt == "anthropic":
            out.append({"name": name, "description": description, "input_schema": params})
        elif fmt == "mcp":
            out.append({"name": name, "description": description, "inputSchema": params})
        else:
            raise ValueError(f"unknown schema format: {fmt}")
    return out


# -- validation with contract messages -----------------------------------------------


def _shown(value: object) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text)


def _require_object(arguments: object) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise ToolInputError(f"invalid arguments: expected an object, got {_shown(arguments)}")
    return arguments


def _check_keys(args: dict[str, Any], allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    for key in args:
        if key not in allowed:
            raise ToolInputError(f'invalid arguments: unknown property "{key}"')
    for key in required:
        if key not in args:
            raise ToolInputError(f'invalid arguments: missing required property "{key}"')


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"invalid {key}: expected a string, got {_shown(value)}")
    return value


def validate_bash(arguments: object, *, sandboxed: bool) -> SandboxedBashArgs:
    args = _require_object(arguments)
    allowed: tuple[str, ...] = (
        "command",
        "description",
        "timeoutMs",
        "workdir",
        "run_in_background",
    )
    if sandboxed:
        allowed += ("sandbox_permissions", "justification")
    _check_keys(args, allowed, ("command", "description"))
    command = args["command"]
    if not isinstance(command, str) or not command.strip():
        raise ToolInputError("invalid command: expected a non-empty string")
    description = args["description"]
    if not isinstance(description, str):
        raise ToolInputError(f"invalid description: expected a string, got {_shown(description)}")
    timeout = args.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ToolInputError(
            f"invalid timeoutMs: expected a positive number, got {_shown(timeout)}"
        )
    background = args.get("run_in_background", False)
    if background is None:
        background = False
    if not isinstance(background, bool):
        raise ToolInputError(
            f"invalid run_in_background: expected a boolean, got {_shown(background)}"
        )
    workdir = _opt_str(args, "workdir")
    mode = _opt_str(args, "sandbox_permissions")
    if mode is not None and mode not in MODE_ORDER:
        raise ToolInputError(
            f"invalid sandbox_permissions: expected one of {', '.join(MODE_ORDER)}, "
            f"got {_shown(mode)}"
        )
    justification = _opt_str(args, "justification")
    if mode is not None and not (justification and justification.strip()):
        raise ToolInputError(
            "invalid justification: sandbox_permissions needs a one-sentence justification"
        )
    return SandboxedBashArgs(
        command=command,
        description=description,
        timeoutMs=float(timeout) if timeout is not None else None,
        workdir=workdir,
        run_in_background=background,
        sandbox_permissions=mode,
        justification=justification,
    )


MAX_TASK_ID = 100  # characters


def validate_task(arguments: object) -> str:
    args = _require_object(arguments)
    _check_keys(args, ("task_id",), ("task_id",))
    task_id = args["task_id"]
    # No task id is this long (they are bash-N): a longer one is not echoed back whole.
    if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_TASK_ID:
        raise ToolInputError(
            f"invalid task_id: expected a task id like bash-1, got {_shown(task_id)}"
        )
    return task_id
