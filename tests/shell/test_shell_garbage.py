"""Analysis leaves no cyclic garbage: everything it builds goes by reference counting.

A reference cycle per analysis (the walker and its word reader's hook, once) made
the cyclic collector run every ~20 commands for ~75 µs, which was most of the
typical-command p99 of issue 4. These tests keep it that way over the whole corpus,
nested payloads, re-reads and parse errors included.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellgate.shell import analyse
from tests.shell.shell_corpus import CASES


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    """``gc.garbage`` after the test body, with the collector saving what it finds.

    What exists before the body, garbage of earlier tests included, is frozen out
    of the collector's sight (and handed back after): a full collection over a
    pytest process thousands of tests old took 0.4-0.7 s, twice per test, and
    only what the body makes can be its garbage.
    """
    gc.garbage.clear()
    gc.freeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.unfreeze()


def _kinds(garbage: list[object]) -> list[str]:
    return sorted({type(o).__name__ for o in garbage})


def test_corpus_analyses_leave_no_cycles(saved_garbage: list[object]) -> None:
    for case in CASES:
        analyse(case.command, workdir="/work/project")
    gc.collect()
    assert _kinds(saved_garbage) == []


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("bash -c 'bash -c \"ls; rm x\"'", id="nested-payloads"),
        pytest.param("echo $'a\\'b'; rm -rf /", id="ansi-c-re-read"),
        pytest.param("cat <<EOF; rm -rf /\n$(id)\nEOF", id="heredoc-substitution"),
        pytest.param("echo ((( ; rm", id="parse-error"),
        pytest.param("$(" * 40 + "ls" + ")" * 40, id="too-deep"),
    ],
)
def test_hard_shapes_leave_no_cycles(saved_garbage: list[object], command: str) -> None:
    analyse(command)
    gc.collect()
    assert _kinds(saved_garbage) == []


def test_decisions_leave_no_cycles(saved_garbage: list[object], tmp_path: Path) -> None:
    """The whole decision step (every built-in layer, the casbin index) on the default set."""
    from shellgate.decider import Decider
    from shellgate.models import CallInfo
    from tests.conftest import ROOT, make_config

    decider = Decider(make_config(tmp_path, policy={"paths": [str(ROOT / "policies" / "default")]}))
    ws = str(tmp_path / "ws")
    gc.collect()
    saved_garbage.clear()
    for case in CASES:
        call = CallInfo(
            tool="bash", command=case.command, subject="agent", tenant="default",
            session="s", workdir=ws, workspace=ws,
        )  # fmt: skip
        decider.decide(call)
    gc.collect()
    assert _kinds(saved_garbage) == []
