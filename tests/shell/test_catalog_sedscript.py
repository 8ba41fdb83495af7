"""The sed script reader (``catalog/sedscript.py``) against GNU sed itself.

The reader is a port of GNU sed's parser; the property test draws scripts from
the characters that steer it and asks the sed on this machine, with
``--sandbox`` (which refuses ``e``, ``r``, ``w``, ``R``, ``W``, ``s///e`` and
``s///w`` as it parses them), whether the script runs, reads or writes: where
sed refuses one, the reader must have found it; where sed takes the script
whole, the reader must have found nothing and no error.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shellgate.shell.catalog.sedscript import read_sed

# script -> (runs, writes, reads)
FOUND = [
    (":x e touch M", ["touch M"], [], []),
    (":x;e id", ["id"], [], []),
    (":x\te id", ["id"], [], []),
    (": x e id", ["id"], [], []),
    (":x:y{e id\n}", [], [], []),  # the label is "x:y{e"; `id` is `i` with text "d"
    ("bx e id\n:x", ["id"], [], []),
    ("tx w out\n:x", [], ["out"], []),
    ("Tx r in\n:x", [], [], ["in"]),
    ("v 4.2 e id", ["id"], [], []),
    ("b;e id", ["id"], [], []),
    ("b e", [], [], []),  # a branch to the label "e"
    ("s\\x\\y\\e", [""], [], []),
    ("s\\a\\a\\w out", [], ["out"], []),
    ("y\\a\\b\\;e id", ["id"], [], []),
    ("s/[/]/X/;e id", ["id"], [], []),
    ("s/[[:alpha:]/]/X/;e id", ["id"], [], []),
    ("s/[]/]/X/;e id", ["id"], [], []),
    ("/[/]/e id", ["id"], [], []),
    ("s/a/b/ g e", [""], [], []),
    ("s/a/b/w out ; e id", [], ["out ; e id"], []),
    ("s/a/b/;s/c/d/e", [""], [], []),
    ("a foo\\\ne id", [], [], []),  # the text goes on to the next line
    ("a\\\ne id\ne date", ["date"], [], []),
    ("e\\\nrm -rf /", ["rm -rf /"], [], []),
    ("e \\x72m -rf /", ["x72m -rf /"], [], []),  # the first backslash only escapes x
    ("e echo \\x72m \\d065\\o102\\n", ["echo rm AB\n"], [], []),
    ("e echo a\\d000b", ["echo a"], [], []),
    ("e;p", [";p"], [], []),
    ("1e id", ["id"], [], []),
    ("/x/,/y/ !e id", ["id"], [], []),
    ("$!N;e id", ["id"], [], []),
    ("0~3e id", ["id"], [], []),
    ("1,+2{e id\n}", ["id"], [], []),
    ("\\%x%Ie id", ["id"], [], []),
    ("#e id\np", [], [], []),
    ("s/e/E/;s/x/e/;/e/d;y/e/E/", [], [], []),
]


@pytest.mark.parametrize(("script", "runs", "writes", "reads"), FOUND)
def test_the_reader_finds_what_gnu_sed_runs_writes_and_reads(
    script: str, runs: list[str], writes: list[str], reads: list[str]
) -> None:
    found = read_sed(script)
    assert (found.runs, found.writes, found.reads) == (runs, writes, reads)
    assert not found.unsure


@pytest.mark.parametrize(
    ("script", "why"),
    [(":x}", "unexpected `}'"), ("{:x}e id", "extra characters"), ("b e touch M", "unknown"),
     ("s/a/b", "unterminated"), ("w", "missing filename"), (":", "lacks a label"),
     ("2,", "unexpected `,'"), ("2!", "missing command"), ("{p", "unmatched"), ("s/a/b/x", "unknown option")],
)  # fmt: skip
def test_what_gnu_sed_rejects_is_rejected(script: str, why: str) -> None:
    assert why in read_sed(script).rejected


def test_reading_goes_on_after_an_error_for_seds_that_accept_more() -> None:
    # sed 4.2 takes a label-less `:`; `}e` is rejected, and e still counts
    assert read_sed(":;e id").runs == ["id"]
    assert read_sed("{:x}e id").runs == ["id"]
    assert read_sed("s/a/b/x;e id").runs == ["id"]


@pytest.mark.parametrize(
    "script",
    ["s/x中\\/A/e", "s|中|x|", "s/中[/x/", "/a\u00e9\\/x/p", "sé a é b é", ":x\ve id",
     ":x\re id", "s/a\udce4\\/b/"],
)  # fmt: skip
def test_what_another_locale_or_sed_may_read_otherwise_is_unsure(script: str) -> None:
    assert read_sed(script).unsure


@pytest.mark.parametrize("script", ["s/é/e/g", "s/x中/y/", "s/[éa]/e/", "y/é/e/", ":lâbel"])
def test_non_ascii_text_alone_is_read_plainly(script: str) -> None:
    found = read_sed(script)
    assert not found.unsure
    assert not found.rejected


# -- the same answers as GNU sed --------------------------------------------------

_PIECES = [
    *":btTvewWrRsyaic{};#!/\\[]^.=1$,pnxq ~+IMg\n\t\r\v",
    "x", "s/a/b/", "e x", "w f", ":x ", "bx ", "[:alpha:]", "a\\\n", "y/a/b/", "\\%x%", "0~2",
]  # fmt: skip
_GNU_SED = shutil.which("sed")


def _gnu_sed(script: str, cwd: Path) -> str:
    """``ok``, ``refused`` (an e/r/w in sandbox mode) or ``error``."""
    assert _GNU_SED is not None
    done = subprocess.run(
        [_GNU_SED, "--sandbox", "-n", "-e", script], stdin=subprocess.DEVNULL,
        capture_output=True, cwd=cwd, timeout=10, check=False,
    )  # fmt: skip
    if done.returncode == 0:
        return "ok"
    return "refused" if b"disabled in sandbox mode" in done.stderr else "error"


def _is_gnu_sed() -> bool:
    if _GNU_SED is None:
        return False
    version = subprocess.run([_GNU_SED, "--version"], capture_output=True, text=True, check=False)
    return "(GNU sed) 4." in version.stdout.split("\n", 1)[0]


@pytest.mark.skipif(not _is_gnu_sed(), reason="needs GNU sed 4.x")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12).map("".join))
@example(":x e x")
@example("bx w f\n:x")
@example("s\\a\\b\\e")
@example("s/[/]/X/;e x")
@example("s/a/b/ g e")
@example("{:x}e x")
@example("w")
def test_the_reader_agrees_with_gnu_sed(
    tmp_path_factory: pytest.TempPathFactory, script: str
) -> None:
    gnu = _gnu_sed(script, tmp_path_factory.getbasetemp())
    found = read_sed(script)
    seen = bool(found.runs or found.writes or found.reads)
    if gnu == "ok":
        assert not seen, found
        assert not found.rejected, found
        assert not found.unsure or "label" in found.unsure, found  # busybox labels
    elif gnu == "refused":
        # sed met an e/r/w before any error: the reader met it too (a w or r
        # without its file name is refused first in sandbox mode, an error else)
        assert seen or found.unsure or found.rejected.startswith("missing filename"), found
