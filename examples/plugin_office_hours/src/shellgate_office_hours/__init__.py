"""Example shellgate plugins: a time-of-day veto and a per-tenant sandbox requirement.

Both are plain classes with ``@hookimpl`` methods; shellgate instantiates each
with no arguments when its entry-point name is listed in ``[policy] plugins``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Generator
from datetime import datetime
from typing import Any

from shellgate import CallInfo, Decision, RunResult, Segment, hookimpl

Clock = Callable[[], datetime]

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class OfficeHours:
    """Deny every command outside office hours; abstain inside them.

    Abstaining (``None``) rather than allowing matters: an ``allow`` here would
    allow commands no rule decided. The reason names the time, so the model can
    tell the user why and when to retry.
    """

    name = "office-hours"

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        start_hour: int = 9,
        end_hour: int = 18,
        weekdays: Collection[int] = (0, 1, 2, 3, 4),
    ) -> None:
        if not 0 <= start_hour < end_hour <= 24:
            raise ValueError(
                f"office hours must satisfy 0 <= start < end <= 24, got {start_hour}-{end_hour}"
            )
        self.clock: Clock = clock or datetime.now
        self.start_hour = start_hour
        self.end_hour = end_hour
        self.weekdays = frozenset(weekdays)

    def is_open(self, now: datetime) -> bool:
        return now.weekday() in self.weekdays and self.start_hour <= now.hour < self.end_hour

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        now = self.clock()
        if self.is_open(now):
            return None
        days = ", ".join(DAY_NAMES[d] for d in sorted(self.weekdays))
        return Decision(
            effect="deny",
            reason=(
                f"outside office hours (it is {DAY_NAMES[now.weekday()]} {now:%H:%M}; commands "
                f"run {days} {self.start_hour:02d}:00-{self.end_hour:02d}:00)"
            ),
            layer=self.name,
        )


class SandboxTenants:
    """Run the calls of some tenants under the bwrap executor, whatever the config says.

    The tenants come from ``SHELLGATE_SANDBOX_TENANTS`` (comma-separated; default
    ``untrusted``), read when the plugin is created, i.e. at gate start-up.
    """

    name = "sandbox-tenants"

    def __init__(self, tenants: Collection[str] | None = None) -> None:
        if tenants is None:
            raw = os.environ.get("SHELLGATE_SANDBOX_TENANTS", "untrusted")
            tenants = [t.strip() for t in raw.split(",") if t.strip()]
        self.tenants = frozenset(tenants)

    @hookimpl(wrapper=True)
    def shellgate_execute(
        self, call: CallInfo, plan: dict[str, Any]
    ) -> Generator[None, RunResult, RunResult]:
        if call.tenant in self.tenants:
            plan["executor"] = "bwrap"  # stricter only: the gate refuses any loosening
        result = yield
        return result
