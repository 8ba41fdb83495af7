"""``shellgate run``: one call through the gate, printing the model-facing text.

Exit status: the command's own (128+N when it died of signal N, so a timed-out
command stopped by SIGTERM exits 143); 126 when the policy or the
approver refused it; 2 for a user mistake (bad config, missing workdir, a
``--sandbox`` mode the local executor cannot give). The spill files of a
truncated stream are kept, since the printed path is for the user.
"""

from __future__ import annotations

import shlex
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shellgate.cli._common import ShellgateCommand, fail, fail_on, load

if TYPE_CHECKING:
    from shellgate.models import RunResult

EXIT_DENIED = 126


def register(app: typer.Typer) -> None:
    @app.command(
        "run",
        cls=ShellgateCommand,
        context_settings={"allow_interspersed_args": False},
        help="Run one command through the gate and print what the model would see.",
    )
    def run(
        command: Annotated[
            list[str],
            typer.Argument(metavar="COMMAND", help="The command (one shell string, or words)."),
        ],
        config: Annotated[
            Path | None,
            typer.Option("--config", metavar="FILE", help="shellgate.toml"),
        ] = None,
        executor: Annotated[
            str | None,
            typer.Option("--executor", metavar="local|bwrap", help="override [executor] kind"),
        ] = None,
        sandbox: Annotated[
            str | None,
            typer.Option(
                "--sandbox",
                metavar="MODE",
                help="read-only | workspace-write | full-access (needs the bwrap executor)",
            ),
        ] = None,
        workdir: Annotated[
            str | None,
            typer.Option("--workdir", metavar="DIR", help="working directory"),
        ] = None,
        timeout_ms: Annotated[
            int | None, typer.Option("--timeout-ms", metavar="N", help="timeout in ms")
        ] = None,
        approval: Annotated[
            str | None,
            typer.Option(
                "--approval", metavar="deny|prompt", help="override [approval] mode"
            ),
        ] = None,
        background: Annotated[
            bool, typer.Option("--background", help="run in the background and follow it")
        ] = False,
    ) -> None:
        cfg = load(config)
        from shellgate.ops.logs import configure_logging

        configure_logging(cfg, text_format=None)  # json logs if asked; text stays as it was
        updates: dict[str, dict[str, object]] = {}
        if executor is not None:
            if executor not in ("local", "bwrap"):
                raise fail(
                    f"invalid --executor: expected local or bwrap, got {executor!r}"
                )
            updates["executor"] = {"kind": executor}
        if sandbox is not None:
            if sandbox not in ("read-only", "workspace-write", "full-access"):
                raise fail(
                    "invalid --sandbox: expected read-only, workspace-write or full-access, "
                    f"got {sandbox!r}"
                )
            kind = executor if executor is not None else cfg.executor.kind
            if kind == "local" and sandbox != "full-access":
                # The local executor confines nothing: taking the flag would promise a
                # sandbox that is not there (an approved `touch` would still write).
                raise fail(
                    f"--sandbox {sandbox} needs the bwrap executor; the local executor "
                    "runs commands unconfined",
                    "add --executor bwrap, or set [executor] kind = \"bwrap\" in the config",
                )
            updates["sandbox"] = {"mode": sandbox}
        if approval is not None:
            if approval not in ("deny", "prompt"):
                raise fail(f"invalid --approval: expected deny or prompt, got {approval!r}")
            updates["approval"] = {"mode": approval}
        if updates:
            cfg = cfg.model_copy(
                update={k: getattr(cfg, k).model_copy(update=v) for k, v in updates.items()}
            )
        text = command[0] if len(command) == 1 else shlex.join(command)
        args: dict[str, object] = {
            "command": text,
            "description": "command run from the shellgate CLI",
        }
        if workdir is not None:
            args["workdir"] = workdir
        if timeout_ms is not None:
            args["timeoutMs"] = timeout_ms
        if background:
            args["run_in_background"] = True
        raise typer.Exit(_run(cfg, args))


def _status(run: RunResult) -> int:
    if run.signal is not None:
        try:
            return 128 + int(signal.Signals[run.signal])
        except KeyError:
            return 128
    return run.exit_code or 0


def _run(cfg: object, args: dict[str, object]) -> int:
    import asyncio
    import contextlib

    from shellgate.config import Config
    from shellgate.errors import ShellgateError
    from shellgate.gate import Gate
    from shellgate.tools import render

    assert isinstance(cfg, Config)

    async def go() -> int:
        async with Gate(cfg, keep_spill=True) as gate:
            result = await gate.call("bash", args)
            if args.get("run_in_background") and not result.is_error:
                return await _follow(gate, result.text.rsplit(" ", 1)[1])
        if result.outcome in ("denied", "not approved"):
            typer.echo(result.text, err=True)
            if result.outcome == "not approved" and cfg.approval.mode == "deny":
                # The text is the model's; the person at this terminal can be asked.
                typer.echo('hint: add --approval prompt to be asked on this terminal '
                           '(or set [approval] mode = "prompt")', err=True)
            return EXIT_DENIED
        if result.is_error:
            typer.echo(result.text, err=True)
            return 2
        typer.echo(result.text, nl=not result.text.endswith("\n"))
        return 0 if result.run is None else _status(result.run)

    async def _follow(gate: Gate, task_id: str) -> int:
        """Stream a background task's output as it comes; end with its status line."""
        task = gate.tasks.get(gate.owner(None, None, None), task_id)
        typer.echo(f"started background task {task_id}", err=True)
        while True:
            finished = task.result is not None
            delta = task.process.read_output()
            if delta.stdout:
                typer.echo(delta.stdout, nl=False)
            if delta.stderr:
                typer.echo(delta.stderr, nl=False, err=True)
            if finished:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(gate.wait_task(task_id), 0.2)
        final = task.result
        assert final is not None
        typer.echo(render.status(final), err=True)
        return _status(final)

    async def until_terminated() -> int:
        """SIGTERM ends the call as SIGINT does: aborted, killed and recorded
        (``outcome: aborted``), then exit 143; by default it killed the CLI
        before the result record was written."""
        import signal

        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        assert main is not None
        terminated = False

        def on_term() -> None:
            nonlocal terminated
            terminated = True
            main.cancel()

        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await go()
        except asyncio.CancelledError:
            if terminated:
                return 128 + signal.SIGTERM
            raise
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(until_terminated())
    except ShellgateError as exc:
        raise fail_on(exc) from None
