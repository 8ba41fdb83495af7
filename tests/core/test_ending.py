"""How an executor turns a leader's status and a supervisor's report into the ending."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.executors import make_executor
from tests.conftest import make_config


@pytest.mark.parametrize(
    ("kind", "returncode", "reported", "expected"),
    [
        pytest.param("local", 0, None, (0, None), id="local-exit-0"),
        pytest.param("local", -15, None, (None, "SIGTERM"), id="local-signal"),
        pytest.param("local", 143, None, (143, None), id="local-exit-143-is-an-exit"),
        pytest.param("bwrap", 143, "exit 143", (143, None), id="bwrap-report-exit-143"),
        pytest.param("bwrap", 143, "signal 15", (None, "SIGTERM"), id="bwrap-report-signal"),
        pytest.param("bwrap", 143, None, (None, "SIGTERM"), id="bwrap-no-report-128+N"),
        pytest.param("bwrap", -9, None, (None, "SIGKILL"), id="bwrap-runner-killed"),
        pytest.param("bwrap", 3, "garbage", (3, None), id="bwrap-junk-report-ignored"),
    ],
)
def test_ending(
    tmp_path: Path,
    kind: str,
    returncode: int,
    reported: str | None,
    expected: tuple[int | None, str | None],
) -> None:
    executor = make_executor(make_config(tmp_path), kind)
    try:
        assert executor._ending(returncode, reported) == expected
    finally:
        executor.spill.close()  # never opened, so there is nothing else to stop
