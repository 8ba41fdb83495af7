"""``shellgate check``: decide one command without running it, and explain why.

The contract (``policy.md``, "Command-line contract") is exact:

* ``--json`` prints one object with the keys ``decision``, ``reason``, ``layer``,
  ``rule`` and ``segments`` (each with ``command``, ``argv``, ``decision``,
  ``layer``, ``rule``), and nothing else on stdout;
* exit status 0 allow or sandbox, 10 ask, 11 deny, 2 usage or configuration error
  (an ``error: …`` line and maybe a ``hint: …`` line on stderr, never a traceback);
* ``sandbox`` is reported only where this deployment can confine the call: check
  then probes bwrap as the gate would (once, only for a ``sandbox`` verdict), and
  elsewhere the call is ``ask``, with the reason.

COMMAND is one shell string (``shellgate check -- 'ls | wc -l'``); several words
are joined with shell quoting, so ``shellgate check rm -rf /`` checks exactly that
argv. Options go before COMMAND: everything from its first word on is the command.
Everything heavy (config, analysis, policies) is imported inside the command, so a
cold ``shellgate check`` pays only for what it uses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shellgate.cli._common import (
    ShellgateCommand,
    fail,
    fail_on,
    note_default_policy,
    warn_rows,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from shellgate.config import Config
    from shellgate.decider import Decider
    from shellgate.models import CallInfo, Decision, Verdict, Write

EXIT_CODES = {"allow": 0, "sandbox": 0, "ask": 10, "deny": 11}  # sandbox runs without a person


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to ``app``."""
    app.command(
        "check",
        cls=ShellgateCommand,
        context_settings={"allow_interspersed_args": False},
    )(check_command)


def configure(config: Path | None, policies: list[Path] | None) -> Config:
    """Load the config (``--config``) with ``--policy`` replacing ``[policy] paths``."""
    from shellgate.config import load_config

    cfg = load_config(config)
    if policies:
        paths = tuple(Path(os.path.abspath(p)) for p in policies)
        cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"paths": paths})})
    return cfg


def _json_line(value: object) -> str:
    """JSON as UTF-8 text; text that is not Unicode (a lone surrogate from bytes
    that are not UTF-8) is written as ``\\uXXXX`` escapes, still valid JSON."""
    line = json.dumps(value, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return line


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The ``--json`` object of the contract, exactly its keys."""
    top = verdict.decision
    return {
        "decision": top.effect,
        "reason": top.reason,
        "layer": top.layer,
        "rule": top.rule,
        "segments": [
            {
                # a segment the guard refused whole has no argv: its text is the command
                "command": sv.segment.command if sv.segment.argv else sv.segment.text,
                "argv": list(sv.segment.argv),
                "decision": sv.decision.effect,
                "layer": sv.decision.layer,
                "rule": sv.decision.rule,
            }
            for sv in verdict.segments
        ],
    }


def explain_text(
    verdict: Verdict, writes: Sequence[Sequence[tuple[Write, Decision]]] = ()
) -> str:
    """The human explanation: the answer, then each segment, its readings, each file
    it writes with the rule that decided the write (``writes``: per segment, from
    :meth:`Decider.write_decisions`), and the rule that decided the segment."""
    from shellgate.shell.argv.canonical import shown

    top = verdict.decision
    where = f"{top.layer}" + (f", rule {top.rule}" if top.rule else "")
    lines = [f"{top.effect}: {top.reason}", f"  decided by {where}"]
    if top.effect == "sandbox":
        lines.append("  runs confined: bwrap, the workspace writable, the rest read-only, "
                     "no network")
    for number, sv in enumerate(verdict.segments, start=1):
        seg, dec = sv.segment, sv.decision
        lines.append(f"segment {number}: {seg.command or seg.text!r} -> {dec.effect}")
        lines.append(f"  argv: {list(seg.argv)}")
        nesting = [label for label in seg.context if label not in ("list", "pipeline")]
        if nesting:
            lines.append(f"  inside: {' > '.join(nesting)}")
        for form in seg.all_forms()[1:]:
            lines.append(f"  also read as: {' '.join(form)}")
        for canonical in seg.canonical:
            lines.append(f"  canonical: {shown(canonical)}")
        for finding in seg.findings:
            lines.append(f"  finding: {finding}")
        decided = dict(writes[number - 1]) if number - 1 < len(writes) else {}
        for write in seg.writes:
            lines.append(f"  writes: {write.path} ({write.how})")
            on = decided.get(write)
            if on is not None:
                where = on.rule if on.rule else on.layer
                lines.append(f"    {on.effect} by {where}: {on.reason}")
        rule = f", rule {dec.rule}" if dec.rule else ""
        lines.append(f"  decided by {dec.layer}{rule}: {dec.reason}")
    return "\n".join(lines)


def _confinable(cfg: Config, call: CallInfo, verdict: Verdict) -> Verdict:
    """``sandbox`` where the call can be confined here (bwrap's probe, run once),
    else ``ask`` with the reason, as the gate would decide it."""
    import asyncio

    from shellgate.policy.confine import sandbox_problem, unconfined

    why = asyncio.run(sandbox_problem(cfg, call))
    return verdict if why is None else unconfined(verdict, why)


def _note_no_rules(decider: Decider, subject: str, tenant: str) -> None:
    """Say so on stderr when no rule of the policy applies to the subject at all.

    A subject no rule names (a typo, a token's principal the rules never heard of)
    gets the closing default for every command, which reads like a policy answer;
    stderr keeps ``--json``'s stdout to its one object.
    """
    engine = decider.rules.state.engine if decider.rules is not None else None
    if engine is None or engine.rules_for(subject, tenant):
        return
    typer.echo(
        f"note: no rule of the policy applies to subject '{subject}' in tenant '{tenant}' "
        "(none names it or a role it holds), so the closing default decides whatever the "
        "built-in layers leave",
        err=True,
    )


def check_command(
    command: Annotated[
        list[str], typer.Argument(metavar="COMMAND", help="The shell command to check.")
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="Config file (else $SHELLGATE_CONFIG)."),
    ] = None,
    policy: Annotated[
        list[Path] | None,
        typer.Option(
            "--policy",
            metavar="DIR",
            help="Policy set directory (repeatable; replaces the config's).",
        ),
    ] = None,
    subject: Annotated[
        str | None, typer.Option("--subject", metavar="S", help="Who asks.")
    ] = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", metavar="T", help="In which tenant.")
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option("--workdir", metavar="DIR", help="Working directory (default: cwd)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Decide a command without running it: exit 0 allow or sandbox, 10 ask, 11 deny, 2 error."""
    import shlex

    from shellgate.decider import Decider
    from shellgate.errors import ShellgateError
    from shellgate.models import CallInfo

    text = command[0] if len(command) == 1 else shlex.join(command)
    try:
        cfg = configure(config, policy)
        from shellgate.ops.logs import configure_logging

        configure_logging(cfg, text_format=None)  # json logs if asked; text stays as it was
        cwd = os.path.realpath(workdir if workdir is not None else os.getcwd())
        if not os.path.isdir(cwd):
            raise fail(f"--workdir {workdir}: not a directory")
        decider = Decider(cfg)
        call = CallInfo(
            tool="bash",
            command=text,
            subject=subject if subject is not None else cfg.policy.subject,
            tenant=tenant if tenant is not None else cfg.policy.tenant,
            session="check",
            workdir=cwd,
            workspace=os.path.realpath(cfg.executor.workspace),
        )
        verdict = decider.decide(call)
        if verdict.effect == "sandbox":  # only where this deployment can confine it
            verdict = _confinable(cfg, call, verdict)
        writes = decider.write_decisions(call, verdict)
    except ShellgateError as exc:
        raise fail_on(exc) from None
    note_default_policy(cfg)
    engine = decider.rules.state.engine if decider.rules is not None else None
    if engine is not None:
        warn_rows(i.source for i in engine.indexes)
    _note_no_rules(decider, call.subject, call.tenant)
    from shellgate.policy.unmodelled import check_notes

    for note in check_notes(verdict):
        typer.echo(f"note: {note}", err=True)
    if as_json:
        typer.echo(_json_line(verdict_json(verdict)))
    else:
        typer.echo(explain_text(verdict, writes))
    raise typer.Exit(EXIT_CODES[verdict.effect])
