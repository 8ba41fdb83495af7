"""``shellgate hook <host>``: one decision for one host hook call, then exit.

The steps, each failing closed (exit 2, one ``error: …`` line on stderr, nothing
on stdout — both hosts block a tool call whose hook exits 2)::

    read stdin (the host's JSON) ─▶ the shell call, or another tool (print nothing, exit 0)
      ─▶ load config ─▶ Decider (the same waterfall as the gate and ``check``)
      ─▶ audit "decision" (on disk before the answer) ─▶ the host's answer on stdout, exit 0

Nothing runs here, so there is no ``result`` record: the host runs the command
(or not) itself. Only what the decision needs is imported: no typer, no rich, no
MCP, no executors (``cli/__init__.py`` sends ``hook`` here before it imports
typer), which is what keeps a hook's start-up small (``benchmarks/hook.py``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from shellgate.hooks_host.hosts import (
    HOSTS,
    MAX_PAYLOAD_BYTES,
    Host,
    PayloadError,
    ShellCall,
    answer,
    project_dir,
    read_call,
    reason_text,
)

if TYPE_CHECKING:
    from shellgate.config import Config

EXIT_OK = 0
EXIT_FAILED = 2


class HookFailed(Exception):
    """A reason to block the call (the message is the ``error:`` line's text)."""


def _read_payload(stdin: IO[bytes]) -> object:
    raw = stdin.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise HookFailed(f"hook input is larger than {MAX_PAYLOAD_BYTES} bytes")
    if not raw.strip():
        raise HookFailed("hook input is empty; the host sends one JSON object on stdin")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise HookFailed(f"hook input is not valid JSON: {exc}") from None


_PYDANTIC_LOADER = "pydantic.plugin._loader"


def _no_pydantic_plugins() -> None:
    """Skip pydantic's search for third-party pydantic plugins (shellgate uses none).

    pydantic looks for them in every installed package's entry points when it
    builds its first validator, and its loader module imports
    ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv``) to do so: 20-30 ms
    of every cold hook on the project machine, which a hook pays per tool call.
    ``PYDANTIC_DISABLE_PLUGINS=__all__`` (pydantic's own switch, set unless the
    user set it) makes the loader answer "no plugins"; the stand-in below gives
    that same answer without importing the loader. Should pydantic ever import
    anything else from that module, the import fails and so does the hook: exit 2.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if os.environ["PYDANTIC_DISABLE_PLUGINS"] not in ("__all__", "1", "true"):
        return  # plugins chosen by name: pydantic's own loader reads them
    if _PYDANTIC_LOADER not in sys.modules:
        import types

        loader = types.ModuleType(_PYDANTIC_LOADER, "shellgate hook: pydantic plugins are off")
        loader.get_plugins = tuple  # type: ignore[attr-defined]  # () as pydantic's does
        sys.modules[_PYDANTIC_LOADER] = loader


def _decide(host: Host, call: ShellCall, config: str | None) -> tuple[str, str]:
    """Decide ``call`` under the configured policy and audit it; ``(effect, reason)``."""
    _no_pydantic_plugins()
    from shellgate.audit import open_audit
    from shellgate.config import load_config
    from shellgate.decider import Decider
    from shellgate.models import CallInfo
    from shellgate.policy.confine import host_runs, unconfined

    cfg = load_config(config)
    workdir = os.path.realpath(call.workdir)
    if not os.path.isdir(workdir):
        raise HookFailed(f"the command's working directory {call.workdir} is not a directory")
    cfg = _workspace(host, call, cfg)
    decider = Decider(cfg)  # a policy set or plugin that does not load raises here
    try:
        # Every value is a str this module checked (read_call) or the validated
        # config's: constructed as is, without building CallInfo's validator.
        info = CallInfo.model_construct(
            tool="bash",
            command=call.command,
            description=call.description,
            subject=cfg.policy.subject,
            tenant=cfg.policy.tenant,
            session=call.session,
            workdir=workdir,
            workspace=str(cfg.executor.workspace),
        )
        verdict = decider.decide(info)
    finally:
        decider.close()
    # The host runs the command itself, outside shellgate's sandbox: a call the
    # policy would only confine is asked instead (Gemini CLI refuses what it cannot ask).
    verdict = unconfined(verdict, host_runs(host.title))
    top = verdict.decision
    effect, reason = top.effect, top.reason
    sandboxed = verdict.require_sandbox or cfg.executor.kind == "bwrap"
    if sandboxed and effect != "deny":
        # The host runs the command, outside shellgate's sandbox: a decision that
        # holds only under it cannot be honoured (gate.handoff refuses it too).
        effect = "deny"
        if verdict.require_sandbox:
            reason = (f"the policy {top.effect}s this command only inside shellgate's sandbox "
                      f"({top.reason}), and the host would run it outside; run it through "
                      "shellgate (MCP server or shellgate run)")
        else:
            reason = ("this configuration runs every command in shellgate's sandbox "
                      "([executor] kind = \"bwrap\"), and the host would run it outside; "
                      "give the hook a configuration with kind = \"local\"")
    with open_audit(cfg.audit) as audit:
        audit.append(
            {
                "type": "decision",
                "call_id": os.urandom(8).hex(),
                "via": host.via,
                "subject": info.subject,
                "tenant": info.tenant,
                "session": info.session,
                "tool": "bash",
                "command": info.command,
                "description": info.description,
                "workdir": info.workdir,
                "workspace": info.workspace,
                "decision": effect,
                "reason": reason,
                "layer": top.layer,
                "rule": top.rule,
                "segments": verdict.segment_records(),
                # Only when set: why an allowed command was answered deny.
                **({"require_sandbox": True} if sandboxed else {}),
                # Only with a policy store: the version that decided (docs/fleet.md).
                **({"policy_version": verdict.policy_version}
                   if verdict.policy_version is not None else {}),
            }
        )
    return effect, reason_text(effect, reason, top.layer, top.rule)


def _workspace(host: Host, call: ShellCall, cfg: Config) -> Config:
    """``cfg`` with the workspace this call is judged in, canonical (realpath).

    The config's own when it pins one — ``[executor] workspace`` set in the file
    or by ``SHELLGATE_EXECUTOR__WORKSPACE`` — else the host's project
    (:func:`~shellgate.hooks_host.hosts.project_dir`). The default of a config
    that leaves the key out (the current directory) is no choice of anybody's:
    a hook's current directory is wherever the host started it.
    """
    if "workspace" in cfg.executor.model_fields_set:
        chosen = str(cfg.executor.workspace)
    else:
        chosen = project_dir(host, call, os.environ)
    workspace = os.path.realpath(chosen)
    if not os.path.isdir(workspace):
        raise HookFailed(f"the workspace {chosen} is not a directory")
    # Every layer reads the workspace from the config (protected paths, secrets,
    # write rules): replace it there, once, rather than beside it in the call.
    executor = cfg.executor.model_copy(update={"workspace": Path(workspace)})
    return cfg.model_copy(update={"executor": executor})


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "unknown failure"


def run_hook(
    host_name: str,
    config: str | None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Answer one hook call of ``host_name``; returns the exit status (0 or 2).

    Never raises: every failure, whatever it is, is exit 2 with one ``error:``
    line on ``stderr`` and nothing on ``stdout`` (fail closed). Meant for a
    process of its own (the CLI): it sets ``PYDANTIC_DISABLE_PLUGINS`` for the
    process when it is unset (see :func:`_no_pydantic_plugins`).
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        host = HOSTS.get(host_name)
        if host is None:
            raise HookFailed(f"unknown host {host_name!r}; the hosts are {', '.join(HOSTS)}")
        payload = _read_payload(stdin if stdin is not None else sys.stdin.buffer)
        call = read_call(host, payload)
        if call is None:  # not the host's shell tool: no opinion, the host decides
            return EXIT_OK
        effect, reason = _decide(host, call, config)
        text = json.dumps(answer(host, effect, reason), ensure_ascii=True)
        out.write(text + "\n")
        out.flush()
        return EXIT_OK
    except BaseException as exc:  # whatever happened, the call is blocked
        from shellgate.errors import ShellgateError

        if isinstance(exc, HookFailed | PayloadError | ShellgateError):
            message = str(exc)
            hint = getattr(exc, "hint", None)
            if hint:  # one line: the host shows it as the reason
                message = f"{message} (hint: {hint})"
        else:
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        try:
            err.write(f"error: {_one_line(message)}\n")
            err.flush()
        except BaseException:  # noqa: S110 - exit 2 still blocks the call
            pass
        return EXIT_FAILED


def parse_argv(argv: list[str]) -> tuple[str, str | None] | None:
    """``[HOST] [--config FILE]`` as ``(host, config)``; ``None`` for anything else.

    The command line's fast path: what this does not recognise (``--help``, a
    typo, an unknown host) goes to the full CLI, which reports it in its style.
    """
    if not argv or argv[0] not in HOSTS:
        return None
    host, rest = argv[0], argv[1:]
    if not rest:
        return host, None
    if len(rest) == 2 and rest[0] == "--config" and rest[1] and not rest[1].startswith("-"):
        return host, rest[1]
    if len(rest) == 1 and rest[0].startswith("--config=") and len(rest[0]) > len("--config="):
        return host, rest[0][len("--config=") :]
    return None
