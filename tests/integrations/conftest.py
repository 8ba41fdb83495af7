"""The ``gate`` fixture every adapter test shares (tests/integrations/pausing.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shellgate.gate import Gate
from tests.integrations.pausing import pausing_gate


@pytest.fixture
async def gate(tmp_path: Path) -> AsyncIterator[Gate]:
    async with pausing_gate(tmp_path) as g:
        yield g
