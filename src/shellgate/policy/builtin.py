"""Built-in layers that need no policy files: the input guard and command analysis.

The input guard runs before anything parses the command (a 10 MB string or a NUL
byte is refused without spending a parser on it); command analysis turns every
construct that static reading cannot prove into ``ask``. Both are ordinary
``shellgate_check`` plugins apart from that ordering.
"""

from __future__ import annotations

import re

from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment
from shellgate.tools.render import code

INPUT_GUARD = "input-guard"
ANALYSIS = "command-analysis"

#: C0 controls but tab and newline, DEL, and unpaired surrogates: refused.
_REFUSED = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def input_guard(command: str, *, max_command_bytes: int) -> Decision | None:
    """Deny control characters a shell reads differently from a parser, and absurd sizes."""
    size = len(command.encode("utf-8", "surrogatepass"))
    if size > max_command_bytes:
        return Decision(
            effect="deny",
            reason=f"command is {size} bytes, over the {max_command_bytes}-byte limit; "
            "write long scripts to a file and run the file",
            layer=INPUT_GUARD,
        )
    found = _REFUSED.search(command)
    if found is None:
        return None
    index, char = found.start(), found.group()
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return Decision(
            effect="deny",
            reason=f"command contains an unpaired surrogate at offset {index}",
            layer=INPUT_GUARD,
        )
    return Decision(
        effect="deny",
        reason=f"command contains control character U+{code:04X} at offset {index}; "
        "a shell may read it differently from the policy check",
        layer=INPUT_GUARD,
    )


class AnalysisLayer:
    """``ask`` for every segment the analysis could not prove (never ``allow``)."""

    name = ANALYSIS

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        del call
        if not segment.findings:
            return None
        text = code(segment.text[:200]) + ("…" if len(segment.text) > 200 else "")
        errors = [f for f in segment.findings if f.startswith("parse error")]
        if errors:
            return Decision(
                effect="ask",
                reason=f"the command does not parse as bash ({'; '.join(errors[:2])}): what "
                "cannot be read cannot be allowed, and no rule is matched against its pieces",
                layer=ANALYSIS,
            )
        shown = "; ".join(segment.findings[:3])
        more = f" (+{len(segment.findings) - 3} more)" if len(segment.findings) > 3 else ""
        return Decision(
            effect="ask",
            reason=f"cannot prove what {text} runs: {shown}{more}",
            layer=ANALYSIS,
        )
