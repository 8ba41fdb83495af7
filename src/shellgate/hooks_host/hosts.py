"""The two hosts' hook formats: what their payload says, and how they read our answer.

Pure functions over JSON values (stdlib only, so the hook's start-up stays small).
Both formats are the hosts' documented ones (``docs/hooks-host.md`` cites them):

* Claude Code ``PreToolUse``: ``{session_id, cwd, hook_event_name, tool_name,
  tool_input: {command, description, timeout, run_in_background}, …}``; the
  answer is ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": …}}``.
* Gemini CLI ``BeforeTool``: ``{session_id, cwd, hook_event_name, tool_name,
  tool_input: {command, description, dir_path (or directory)}, …}``; the answer is
  ``{"decision": "allow"|"deny", "reason": …}``. Gemini has no ``ask``: an ask
  is answered ``deny``, its reason saying that a person must approve the command.

A payload that does not have the documented shape is a :class:`PayloadError`
(the hook then exits 2: the hosts block the call). A tool that is not the
host's shell tool is :data:`NOT_OURS`: the hook prints nothing and the host's
own permission system decides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

MAX_PAYLOAD_BYTES: Final = 16 * 1024 * 1024


class PayloadError(Exception):
    """The host's hook input is not what its documentation says it sends."""


@dataclass(frozen=True, slots=True)
class ShellCall:
    """One shell tool call of the host, as the policy sees it."""

    command: str
    description: str
    workdir: str  # absolute, as the host gave it (not yet canonical)
    session: str
    cwd: str  # the payload's ``cwd``, absolute (Gemini CLI: its project directory)


@dataclass(frozen=True, slots=True)
class Host:
    name: str  # the CLI's word: ``shellgate hook <name>``
    title: str  # the host's name for people
    event: str  # the hook event the answer is for
    shell_tool: str  # the host's name of its shell tool
    has_ask: bool
    #: The variable the host sets in a hook's environment to its project directory
    #: (where it was started; the agent's ``cd`` does not move it).
    project_env: str
    #: Whether the payload's ``cwd`` is the project directory too. Claude Code's
    #: follows the session's ``cd``s (the agent moves it); Gemini CLI's shell tool
    #: keeps no directory between calls (``dir_path`` names one per call), so its
    #: ``cwd`` stays where it was started.
    cwd_is_project: bool

    @property
    def via(self) -> str:
        """The audit record's ``via`` field."""
        return f"hook:{self.name}"


CLAUDE_CODE: Final = Host(
    "claude-code", "Claude Code", "PreToolUse", "Bash", has_ask=True,
    project_env="CLAUDE_PROJECT_DIR", cwd_is_project=False,
)  # fmt: skip
GEMINI_CLI: Final = Host(
    "gemini-cli", "Gemini CLI", "BeforeTool", "run_shell_command", has_ask=False,
    project_env="GEMINI_PROJECT_DIR", cwd_is_project=True,
)  # fmt: skip
HOSTS: Final = {h.name: h for h in (CLAUDE_CODE, GEMINI_CLI)}

#: Returned by :func:`read_call` for a tool that is not the host's shell tool.
NOT_OURS: Final = None


_JSON_KINDS: Final = {dict: "an object", list: "an array", bool: "a boolean", int: "a number",
                      float: "a number", type(None): "null"}


def _kind(value: object) -> str:
    """What ``value`` is in JSON's words (``payload is an array``)."""
    return _JSON_KINDS.get(type(value), type(value).__name__)


def _string(obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        got = "missing" if key not in obj else f"{_kind(value)}, not a string"
        raise PayloadError(f"hook input: '{where}{key}' is {got}")
    return value


def read_call(host: Host, payload: object) -> ShellCall | None:
    """The shell call in ``payload``, or :data:`NOT_OURS` for another tool.

    Raises :class:`PayloadError` for anything but the documented shape, so a
    host that changed its format is blocked rather than waved through.
    """
    if not isinstance(payload, dict):
        raise PayloadError(f"hook input is {_kind(payload)}, not a JSON object")
    event = _string(payload, "hook_event_name", "")
    if event != host.event:
        raise PayloadError(
            f"hook input is for the '{event}' event; 'shellgate hook {host.name}' answers "
            f"'{host.event}' only (check the hook's event in the host's settings)"
        )
    if _string(payload, "tool_name", "") != host.shell_tool:
        return NOT_OURS
    session = _string(payload, "session_id", "")
    cwd = _string(payload, "cwd", "")
    if not os.path.isabs(cwd):
        raise PayloadError(f"hook input: 'cwd' is not an absolute path: {cwd!r}")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise PayloadError("hook input: 'tool_input' is missing or not an object")
    command = _string(tool_input, "command", "tool_input.")
    description = _string(tool_input, "description", "tool_input.", required=False)
    workdir = cwd
    if host is GEMINI_CLI:
        # run_shell_command runs in dir_path (``directory`` in the versions whose
        # docs name it so), relative to the project directory: decided there.
        named = {key: _string(tool_input, key, "tool_input.", required=False)
                 for key in ("dir_path", "directory")}
        given = {value for value in named.values() if value}
        if len(given) > 1:
            raise PayloadError("hook input: 'tool_input.dir_path' and 'tool_input.directory' "
                               "name different directories")
        if given:
            workdir = os.path.join(cwd, given.pop())
    return ShellCall(command, description, workdir, session, cwd)


def project_dir(host: Host, call: ShellCall, environ: Mapping[str, str]) -> str:
    """The project the host says its agent works in (absolute, not yet canonical).

    In hook mode this is the workspace unless the config pins one. It comes from
    the host, never from the agent: the host's project variable (set when the host
    started), else — only where the agent cannot move it — the payload's ``cwd``.
    A Claude Code that did not set ``$CLAUDE_PROJECT_DIR`` is refused rather than
    judged in the session's current directory, which the agent's ``cd`` chooses
    (``cd src`` would put the project's ``.env`` outside the workspace).
    """
    value = environ.get(host.project_env, "")
    if value:
        if not os.path.isabs(value):
            raise PayloadError(f"${host.project_env} is not an absolute path: {value!r}")
        return value
    if host.cwd_is_project:
        return call.cwd
    raise PayloadError(
        f"{host.title} did not say which project this is (${host.project_env} is not set) "
        "and the config does not pin [executor] workspace; set workspace in the hook's "
        "config to the project's directory"
    )


def reason_text(effect: str, reason: str, layer: str, rule: str | None) -> str:
    """One line for the host: the decision, why, and the rule (or layer) that decided."""
    by = f"{layer} rule {rule}" if rule else layer
    return f"shellgate {effect} ({by}): {reason}"


def answer(host: Host, effect: str, reason: str) -> dict[str, Any]:
    """The host's answer for ``effect`` (``allow``/``ask``/``deny``) with ``reason``."""
    if host.has_ask:
        return {
            "hookSpecificOutput": {
                "hookEventName": host.event,
                "permissionDecision": effect,
                "permissionDecisionReason": reason,
            }
        }
    if effect == "ask":
        return {
            "decision": "deny",
            "reason": f"{reason}. Gemini CLI hooks cannot ask, so this is refused: a person "
            "must approve this command (run it themselves, or change the policy)",
        }
    return {"decision": effect, "reason": reason}
