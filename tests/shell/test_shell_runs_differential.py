"""Differential check: the commands bash runs against the commands the analysis sees.

bash runs each generated string with an empty ``PATH`` and a
``command_not_found_handle`` that records the argv of every command it would
have run (nothing else runs). The analysis must see each of them: its name as
the head of some segment's form (so a deny rule on it matches), and, when the
analysis found nothing to ask about, its whole argv (so an allow is earned).

The strings are built from the pieces tree-sitter-bash and bash read
differently: backslashes before blanks and newlines, ``#``, here-strings,
braces and quotes (a red-team pass found ``ls;\\ #;rm -rf ~`` allowed this way).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellgate.shell import analyse

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")

_PIECES = ["aa", "bb", "rm", "x", " ", "\t", "\n", "\\", "#", ";", "||", "|", "<<<",
           "'q r'", '"d e"', "$'c'", "(", ")", "{ ", "}", "$(", "`", "=", "-f"]  # fmt: skip
_RECORD = (
    "PATH=/nonexistent\n"
    'command_not_found_handle() { printf "%s\\037" "$@" "$SG_END" >>"$SG_LOG"; return 0; }\n'
    'eval "$1"\n'
)

# Found by red-team passes and fuzzing; each once ran a command the analysis missed.
KNOWN = [
    "echo a\\\n#; rm -rf /",
    "ls;\\ #;rm -rf ~",
    "echo a\n\\ #;rm -rf /",
    "echo a;\\\t#;rm -rf /",
    "cat x <<<\\ \nrm -rf /",
    "echo a\n\\rm -rf /",
    "echo a\n\\\\rm -rf /",
    "x=1\n\\rm -rf /",
    "\\ rm<<<{ \\aabb",
    "<<<-f \\ \n",
    "aa}<<<}\\rm -rf",
    "ls <<<{ }",
]
# Read right (an empty substitution expands to nothing), so nothing to ask about.
EMPTY_SUBSTITUTIONS = ["r``m -rf /", "r$()m -rf /", "r$( )m -rf /", "r` `m -rf /"]


def bash_runs(command: str, tmp: Path) -> list[tuple[str, ...]] | None:
    """The argv of every command bash would run for ``command`` (None: it hung)."""
    log = tmp / "runs.log"
    log.write_bytes(b"")
    assert BASH is not None
    try:
        subprocess.run(
            [BASH, "--norc", "--noprofile", "-c", _RECORD, "sg", command],
            env={"SG_LOG": str(log), "SG_END": "\x1e"},
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    records = log.read_bytes().decode("utf-8", "replace").split("\x1e\x1f")[:-1]
    return [tuple(r.split("\x1f")[:-1]) for r in records]


def check_seen(command: str, tmp: Path) -> None:
    ran = bash_runs(command, tmp)
    if ran is None:
        return
    analysis = analyse(command)
    seen = {tuple(form) for s in analysis.segments for form in (s.argv, *s.forms)}
    heads = {form[0] for form in seen if form}
    clean = not any(s.findings for s in analysis.segments)
    dynamic = "`" in command or "$(" in command
    if dynamic and not clean:
        # A name glued to a substitution's output (aa`#`aa runs aaaa) is made at
        # run time: it is asked about, and no rule can match it by name.
        return
    for argv in ran:
        # Deny rules name plain commands (rm, curl): each of those must be seen,
        # whatever the analysis thought of the rest.
        if argv and argv[0].isalnum():
            assert argv[0] in heads, f"bash runs {argv} unseen in {command!r}"
        if clean:
            assert argv in seen, f"bash runs {argv} but {command!r} was read as {seen}"


@pytest.mark.parametrize("command", KNOWN)
def test_known_misreadings_are_seen(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)
    assert any(s.findings for s in analyse(command).segments), command


@pytest.mark.parametrize("command", EMPTY_SUBSTITUTIONS)
def test_empty_substitutions_vanish(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)
    assert ("rm", "-rf", "/") in {s.argv for s in analyse(command).segments}


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=st.lists(st.sampled_from(_PIECES), min_size=2, max_size=9).map("".join))
def test_every_command_bash_runs_is_seen(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)
