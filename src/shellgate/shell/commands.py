"""What particular commands do that static reading cannot prove harmless.

Legacy: commands the catalog (``shell/catalog``) has no entry for yet. Each
check looks at one normalised form (after wrappers were peeled) and returns
findings plus shell strings to parse recursively. Shells, interpreters and
builtins moved to ``catalog/interpreters.py`` and ``catalog/builtins.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shellgate.shell.tools import TOOLS

Argv = tuple[str, ...]


@dataclass
class Reading:
    findings: list[str] = field(default_factory=list)
    payloads: list[tuple[str, str]] = field(default_factory=list)  # (context label, source)


def _git(form: Argv, out: Reading) -> None:
    for word in form[1:]:
        if not word.startswith("-"):
            break
        if word == "-c" or word.startswith(("--config-env", "--exec-path", "-c")):
            out.findings.append("git -c/--config-env/--exec-path can make git run commands")
            break


def read_form(form: Argv, out: Reading) -> None:
    """Add the findings and payloads of one normalised form to ``out``."""
    if not form:
        return
    tool = TOOLS.get(form[0])
    if tool is not None:
        tool(form, out)
    elif form[0] == "git":
        _git(form, out)
