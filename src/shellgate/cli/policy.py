"""``shellgate policy init DIR | test DIR | lint DIR | import …``: author and test policy sets.

Exit status: ``init`` 0, or 2 when a file exists already (nothing is overwritten);
``test`` 0 all rows pass, 1 any mismatch, 2 a broken policy or test file;
``lint`` 0 clean, 1 findings, 2 the directory cannot be read; ``import`` 0 the
set was written (with or without warnings), 2 an unknown ``--from``, a source
file that cannot be read or is not valid in its format, or a ``DIR`` that is not
empty (without ``--force``) or cannot be written. Errors are an ``error: …`` line
(and maybe a ``hint: …``) on stderr; import warnings are ``warning: FILE:LINE: …``
lines on stderr. Heavy imports happen inside the commands. ``push``, ``pull``,
``history`` and ``rollback`` (a policy store) are in :mod:`shellgate.cli.policy_store`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shellgate.cli._common import EXIT_USAGE, ShellgateCommand, fail, fail_on, warn_rows
from shellgate.cli.check import configure

EXIT_FAILED = 1

EXAMPLE_POLICY = """\
# A shellgate policy set (casbin format). One rule per line:
#
#   p, <subject or role>, <tenant or *>, <pattern>, <allow|sandbox|ask|deny>[, <reason>]
#   g, <subject>, <role>, <tenant or *>
#
# allow runs a command; sandbox runs it unasked but confined (bwrap: the
# workspace writable, the rest read-only, no network; asked where it cannot be
# confined); ask needs a person; deny never runs it.
#
# Patterns match one simple command, argv joined by single spaces:
#   git status        exactly that command
#   git log *         git log with any arguments, or none (never `git logx`)
#   *                 elsewhere: any run of characters
#   re:<regex>        a regular expression matching the whole command
#   write:GLOB        not a command: a file a command writes (write:** = the workspace)
# Quote a field that contains a comma: "re:a{1,3}".
#
# The strictest matching rule wins (deny > ask > sandbox > allow), across every
# loaded set, so an allow never loosens a deny, an ask or a sandbox. A command no
# rule matches gets the config's closing default (sandbox, ask, or deny when
# headless). Deny and ask rules also see through wrappers (sudo, env, timeout …);
# allow and sandbox rules match only the command as written.
#
# This set sits on top of the packaged baseline set, which stays loaded under
# every configuration: rm -rf / or ~, dd onto a device, curl … | sh, fork bombs,
# shutdown … are denied there, so a team set need not repeat them (and cannot
# loosen them). Only [policy] baseline = false turns the baseline off.

g, agent, developer, *

p, developer, *, ls *, allow
p, developer, *, cat *, allow
p, developer, *, git status *, allow
p, developer, *, git diff *, allow
p, developer, *, write:**, allow
p, developer, *, pytest *, sandbox
p, developer, *, git push *, ask, pushing needs a person's OK
p, developer, *, rm -rf *, deny, recursive force removal is never automatic
"""

EXAMPLE_TESTS = """\
# <subject>, <tenant>, <expected decision>, <command>
# Run: shellgate policy test DIR (exit 1 on any mismatch). The rows are decided as
# deployed: on top of the baseline set, with the config's closing default.
agent, default, allow, ls -la
agent, default, allow, git status
agent, default, sandbox, pytest -q
agent, default, ask, git push origin main
agent, default, deny, rm -rf build
# the baseline's, not this set's
agent, default, deny, dd if=/dev/zero of=/dev/sda
"""


def register(app: typer.Typer) -> None:
    """Add the ``policy`` command group to ``app``."""
    group = typer.Typer(name="policy", help="Author, test, lint and store policy sets.",
                        no_args_is_help=True)
    group.command("init", cls=ShellgateCommand)(init_command)
    group.command("test", cls=ShellgateCommand)(run_tests_command)
    group.command("lint", cls=ShellgateCommand)(lint_command)
    group.command("import", cls=ShellgateCommand)(import_command)
    from shellgate.cli.policy_store import register as register_store

    register_store(group)  # push, pull, history, rollback (docs/fleet.md)
    app.add_typer(group, name="policy")


DirArg = Annotated[Path, typer.Argument(metavar="DIR", help="The policy set directory.")]


def init_command(directory: DirArg) -> None:
    """Write model.conf, an example policy.csv and tests.csv (never overwrites)."""
    from shellgate.policy.loader import MODEL_FILE, POLICY_FILE, SHIPPED_MODEL

    files = {
        MODEL_FILE: SHIPPED_MODEL.read_text(encoding="utf-8"),
        POLICY_FILE: EXAMPLE_POLICY,
        "tests.csv": EXAMPLE_TESTS,
    }
    for name in files:
        if (directory / name).exists():
            raise fail(f"{directory / name}: exists already; policy init never overwrites")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            with (directory / name).open("x", encoding="utf-8") as out:  # "x": never clobber
                out.write(text)
    except OSError as exc:
        raise fail(f"{directory}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"wrote {', '.join(str(directory / n) for n in files)}")
    typer.echo(f"next: edit {directory / POLICY_FILE}, then run "
               f"'shellgate policy test {directory}'")


def run_tests_command(
    directory: DirArg,
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE", help="Config file.")
    ] = None,
    default: Annotated[
        str | None,
        typer.Option(
            "--default", metavar="sandbox|ask|deny",
            help="Closing default for the run: sandbox, ask or deny."
        ),
    ] = None,
) -> None:
    """Run the set's tests.csv / *.test.csv rows through the whole gate decision."""
    from shellgate.errors import ShellgateError
    from shellgate.policy.loader import load_policy_set
    from shellgate.policy.testrun import read_cases, run_cases

    if default not in (None, "sandbox", "ask", "deny"):
        raise fail(f"--default {default}: must be 'sandbox', 'ask' or 'deny'")
    try:
        cfg = configure(config, None)
        if default is not None:
            cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(
                update={"default": default})})
        cases = read_cases(directory)
        outcomes = run_cases(directory, cfg, cases)
    except ShellgateError as exc:
        raise fail_on(exc) from None
    warn_rows([load_policy_set(directory)])  # it loaded just now: only its warnings
    failed = [o for o in outcomes if not o.passed]
    for outcome in failed:
        case, top = outcome.case, outcome.verdict.decision
        rule = f" rule {top.rule}" if top.rule else ""
        typer.echo(f"{case.file}:{case.line}: FAIL {case.subject} in {case.tenant}: "
                   f"{case.command!r}: expected {case.expected}, got {top.effect} "
                   f"(decided by {top.layer}{rule}: {top.reason})")
        if outcome.disagreement:
            typer.echo(f"    {outcome.disagreement}")
    if failed:
        typer.echo(f"{len(failed)} of {len(outcomes)} tests failed")
        raise typer.Exit(EXIT_FAILED)
    typer.echo(f"{len(outcomes)} tests passed")


def lint_command(directory: DirArg) -> None:
    """Report unreachable, shadowed, duplicate and never-matching rules, and bad rows."""
    from shellgate.policy.lint import lint_policy_set

    if not directory.is_dir():
        raise fail(f"{directory}: policy set directory not found")
    findings = lint_policy_set(directory)
    for finding in findings:
        typer.echo(str(finding))
    if findings:
        typer.echo(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}")
        raise typer.Exit(EXIT_FAILED)
    typer.echo(f"{directory}: no findings")


def _warn(file: Path, notes: tuple[Any, ...] | list[Any]) -> None:
    for note in sorted(notes, key=lambda n: n.line or 0):
        where = f"{file}:{note.line}" if note.line else str(file)
        typer.echo(f"warning: {where}: {note.message}", err=True)


def _writable(directory: Path, force: bool) -> None:
    if directory.exists() and not directory.is_dir():
        raise fail(f"{directory}: exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise fail(f"{directory}: not empty; policy import writes a new set",
                   "use an empty or new directory, or --force to overwrite its model.conf, "
                   "policy.csv and tests.csv")


def import_command(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The source file to import.")],
    directory: DirArg,
    source: Annotated[
        str, typer.Option("--from", metavar="claude-code|codex|gemini",
                          help="The source format: a Claude Code settings.json, a Codex "
                               ".rules file or a Gemini CLI policy .toml.")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Write into a DIR that is not empty, "
                           "overwriting its model.conf, policy.csv and tests.csv.")
    ] = False,
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE", help="Config file.")
    ] = None,
    default: Annotated[
        str | None,
        typer.Option(
            "--default", metavar="sandbox|ask|deny",
            help="Closing default the tests.csv rows are written for: sandbox, ask or deny."),
    ] = None,
) -> None:
    """Write a policy set (with tests.csv) from another agent's permission rules."""
    from shellgate.errors import ShellgateError
    from shellgate.policy.importers import SOURCES, SourceError, read_source
    from shellgate.policy.importers.writer import FILES, write_set

    if source not in SOURCES:
        raise fail(f"--from {source}: unknown source", f"use one of {', '.join(SOURCES)}")
    if default not in (None, "sandbox", "ask", "deny"):
        raise fail(f"--default {default}: must be 'sandbox', 'ask' or 'deny'")
    _writable(directory, force)
    try:
        imported = read_source(source, file)
    except SourceError as exc:
        where = f"{file}:{exc.line}" if exc.line else str(file)
        raise fail(f"{where}: {exc}") from None
    _warn(file, imported.notes)
    try:
        cfg = configure(config, None)
        if default is not None:
            cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(
                update={"default": default})})
        written = write_set(imported, directory, cfg)
    except ShellgateError as exc:
        raise fail_on(exc) from None
    except OSError as exc:
        raise fail(f"{directory}: cannot write: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # the written set failed its own tests: a shellgate bug
        raise fail(f"{directory}: not written: {exc}", "please report this") from None
    _warn(file, written.notes)
    warnings = len(imported.notes) + len(written.notes)
    typer.echo(f"wrote {', '.join(str(directory / n) for n in FILES)}: {written.rules} "
               f"rule{'s' if written.rules != 1 else ''}, {written.not_imported} not imported, "
               f"{written.tests} test{'s' if written.tests != 1 else ''} "
               f"({written.commented_tests} commented out), {warnings} "
               f"warning{'s' if warnings != 1 else ''}")
    typer.echo(f"next: review {directory / 'policy.csv'}, then run "
               f"'shellgate policy test {directory}' and 'shellgate policy lint {directory}'")


__all__ = ["EXIT_FAILED", "EXIT_USAGE", "register"]
