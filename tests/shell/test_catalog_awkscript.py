"""The awk reader (``catalog/awkscript.py``) against the real awk on this machine.

A comparison (``NR>1``), ``||`` and the insides of strings and regular
expressions are no redirection or pipe; ``print > F``, ``print | CMD`` and
``CMD | getline`` are. The property test builds programs from pieces, runs
them with the real awk in a throwaway directory (no shell: ``system`` and
pipes are left out of the pieces, ``>`` targets are plain names), and checks
that whenever awk created a file the reader said so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shellgate.shell.catalog.awkscript import awk_risk, writes_or_pipes

AWK = shutil.which("mawk") or shutil.which("gawk") or shutil.which("awk")

CLEAN = [
    "NR>1", "$3 > 100 {print $1}", "/a|b/", "NR==1 || NR==3", "{print (a > b)}",
    "{x = a > b; print x}", "{print \"a>b\", \"c|d\"}", "$0 ~ /x>y/ {print}",
    "BEGIN{if (a>b) print \"x\"}", "{print $1 \">\" $2}", "{print \"e\" > \"/dev/stderr\"}",
    "{n = $2 / 2; if (n > 3) print}", "# print > x\n{print}", "{a[$1] += $2} END {for (k in a) print k, a[k]}",
]  # fmt: skip
RISKY = [
    "{print > \"out\"}", "{print $1 > 5}", "{printf(\"%s\", $0) > \"f\"}",
    "{print a,\n b > \"f\"}", "{print i++ / 2 > \"f\"; x=1/1}", "{print | \"sh\"}",
    "{\"id\" | getline x}", "{print >> \"f\"}", "{print /x/ > \"f\"}",
    "{print a \\\n > \"f\"}", "{print \"e\" > \"/dev/stderr\" \"x\"}", "BEGIN{system(\"id\")}",
    "{print |& \"cat\"}", "{print a > b}",
]  # fmt: skip


@pytest.mark.parametrize("program", CLEAN)
def test_comparisons_strings_and_regexes_are_clean(program: str) -> None:
    assert awk_risk(program) == ""


@pytest.mark.parametrize("program", RISKY)
def test_redirections_pipes_and_calls_are_found(program: str) -> None:
    assert awk_risk(program) != ""


_PIECES = st.sampled_from([
    "print", "printf(\"%s\\n\", $0)", "print $1", "print a", "print (1 > 2)", "x = 1 > 2",
    " > \"o1\"", " >> \"o2\"", " > o3", " > (\"o4\")", "/a|b/", "/x>y/", "\"s>t\"", "NR>1",
    "$2 > 1", "a/2", "i++", " / ", " ; ", "\n", ",\n", " && ", " || ", "(", ")", "{", "}",
    "if (a > b) ", "#c > o5\n", "\\\n",
])  # fmt: skip


def _run(program: str, where: Path) -> bool:
    """Whether the real awk created a file running ``program`` over a small input."""
    assert AWK is not None
    (where / "in").write_text("a 1\nb 2\n")
    before = {p.name for p in where.iterdir()}
    subprocess.run([AWK, program, "in"], cwd=where, capture_output=True, timeout=5, check=False)
    return {p.name for p in where.iterdir()} != before


@pytest.mark.skipif(AWK is None, reason="no awk on this machine")
@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=12).map("".join))
@example("{print a,\n b > \"o1\"}")
@example("{print i++ / 2 > \"o1\"; x=1/1}")
@example("{print (1) > \"o1\"}")
def test_whenever_awk_writes_a_file_the_reader_says_so(
    tmp_path_factory: pytest.TempPathFactory, program: str
) -> None:
    where = tmp_path_factory.mktemp("awk")
    for body in (program, "{" + program + "}"):
        if _run(body, where):
            assert writes_or_pipes(body) or awk_risk(body), body
        for path in where.iterdir():
            if path.name != "in":
                path.unlink()
