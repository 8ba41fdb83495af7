"""How the demo looks: one block per step, a summary table at the end.

Everything dynamic (commands, model-facing text, reasons) is printed as
:class:`rich.text.Text`, never as markup: tool texts contain ``[exit code: 1]``
and the like, which rich would otherwise read as style tags.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

EFFECT_STYLE = {"allow": "green", "sandbox": "cyan", "ask": "yellow", "deny": "red"}


@dataclass
class Check:
    """One step's expectation and whether it held (``None``: skipped, with a reason)."""

    title: str
    expected: str
    passed: bool | None = None
    problems: list[str] = field(default_factory=list)
    note: str = ""

    def expect(self, condition: bool, problem: str) -> None:
        if not condition:
            self.problems.append(problem)

    def settle(self) -> None:
        if self.passed is None and not self.note:
            self.passed = not self.problems


class View:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.steps = 0

    def intro(self, policy: str, workspace: str) -> None:
        text = Text()
        text.append("shellgate demo", style="bold")
        text.append(
            " — a scripted agent makes tool calls; every call passes the gate first.\n"
            "Nothing here uses the network, and everything happens in a throw-away workspace.\n\n"
        )
        text.append("policy set  ", style="dim")
        text.append(policy + "\n")
        text.append("workspace   ", style="dim")
        text.append(workspace)
        self.console.print(Panel(text, expand=False))

    def step(self, title: str, story: str) -> None:
        self.steps += 1
        self.console.print()
        self.console.print(Rule(Text(f"{self.steps} · {title}", style="bold"), align="left"))
        self.console.print(Text(story, style="dim"))

    def call(self, tool: str, shown: str) -> None:
        line = Text("agent → ", style="cyan")
        line.append(f"{tool}: ", style="bold cyan")
        line.append(shown)
        self.console.print(line)

    def decision(self, effect: str, layer: str, rule: str, reason: str) -> None:
        line = Text("policy  ", style="dim")
        line.append(effect, style=f"bold {EFFECT_STYLE.get(effect, 'white')}")
        who = f"{layer} rule {rule}" if rule else layer
        line.append(f"  by {who}: ", style="dim")
        line.append(reason)
        self.console.print(line)

    def approval(self, question: str, answer: str, message: str | None) -> None:
        line = Text("asked   ", style="dim")
        line.append(question + "\n")
        line.append("answer  ", style="dim")
        line.append(answer, style="bold " + ("green" if answer.startswith("allow") else "red"))
        line.append("  (answered automatically by the demo's scripted approver)", style="dim")
        if message:
            line.append(f"\n        “{message}”", style="dim")
        self.console.print(line)

    def model_sees(self, text: str, is_error: bool) -> None:
        style = "red" if is_error else "green"
        title = "the model sees" + (" (isError)" if is_error else "")
        self.console.print(Panel(Text(text), title=title, title_align="left", border_style=style))

    def note(self, text: str) -> None:
        self.console.print(Text(text, style="dim"))

    def verdict(self, check: Check) -> None:
        if check.passed is None:
            self.console.print(Text(f"– skipped: {check.note}", style="yellow"))
        elif check.passed:
            self.console.print(Text(f"✓ as expected: {check.expected}", style="bold green"))
        else:
            self.console.print(Text(f"✗ NOT as expected: {check.expected}", style="bold red"))
            for problem in check.problems:
                self.console.print(Text(f"    {problem}", style="red"))

    def summary(self, checks: list[Check], seconds: float) -> None:
        self.console.print()
        table = Table(title="What the demo showed", title_justify="left", show_lines=False)
        table.add_column("#", justify="right")
        table.add_column("step")
        table.add_column("result")
        for number, check in enumerate(checks, 1):
            if check.passed is None:
                result = Text("skipped", style="yellow")
            elif check.passed:
                result = Text("ok", style="green")
            else:
                result = Text("FAILED", style="bold red")
            table.add_row(str(number), Text(check.title), result)
        self.console.print(table)
        failed = sum(1 for c in checks if c.passed is False)
        end = Text(f"{len(checks)} steps in {seconds:.1f}s: ")
        if failed:
            end.append(f"{failed} did not behave as expected", style="bold red")
        else:
            end.append("every step behaved as expected", style="bold green")
        self.console.print(end)
