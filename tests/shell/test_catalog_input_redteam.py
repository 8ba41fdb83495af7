"""Red-team findings on input-driven programs, awk continuations and sed backups.

Decided by the real decider over the allow-list fixture (``find *``, ``xargs *``,
``sed *``, ``awk *``, ``git *``, ``env *`` … allowed; see test_allowlist_policy).
"""

from __future__ import annotations

import pytest

from tests.shell.allowlist_helpers import WORKDIR, effect, verdict

# xargs appends words from its input: to a wrapper, a command with subcommands
# or one whose options run, load or write, those words are arbitrary code.
STEERED = [
    "xargs env", "xargs nice", "xargs timeout 5", "xargs xargs", "xargs find",
    "xargs awk", "xargs sed", "xargs git", "xargs rsync", "xargs tar -tf",
    "xargs -a args.txt git", "xargs -I X git X", "xargs python -m pytest",
]  # fmt: skip
PLAIN = ["xargs -0 grep foo", "xargs", "xargs echo", "xargs -0 wc -l", "xargs -n1 cat"]


@pytest.mark.parametrize("command", STEERED)
def test_xargs_into_a_steerable_program_is_not_allowed(command: str) -> None:
    assert effect(command) != "allow"


@pytest.mark.parametrize("command", PLAIN)
def test_xargs_into_a_plain_reader_stays_allowed(command: str) -> None:
    assert effect(command) == "allow"


@pytest.mark.parametrize(
    "command",
    ["awk 'BEGIN{system\\\n(\"id\")}'", "awk '@f\\\n(\"id\")'", "gawk 'BEGIN{print \"x\" \\\n| \"sh\"}'"],
)
def test_awk_line_continuations_do_not_hide_risky_calls(command: str) -> None:
    assert effect(command) != "allow"


@pytest.mark.parametrize(
    "command",
    ["sed -i'.git/*' p config", "sed --in-place='.git/hooks/*' p pre-commit",
     "sed -i'.git/hooks/x' p f"],
)  # fmt: skip
def test_sed_backup_paths_reach_protected_paths(command: str) -> None:
    assert effect(command) == "deny"


def test_a_plain_sed_backup_suffix_is_a_write_beside_the_file() -> None:
    # both are writes the write: rules decide (the fixture's write:** allows them)
    written = verdict("sed -i.bak s/a/b/ f").segments[0].segment.write_paths
    assert {f"{WORKDIR}/f", f"{WORKDIR}/f.bak"} <= set(written)
    assert effect("sed -i.bak s/a/b/ f") == "allow"
