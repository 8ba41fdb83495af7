"""Builders for verdicts and requests (values above the approval seam)."""

from __future__ import annotations

from shellgate.models import (
    ApprovalRequest,
    CallInfo,
    Decision,
    Effect,
    Redirect,
    SandboxMode,
    Segment,
    SegmentVerdict,
    Verdict,
)

STRICT: dict[Effect, int] = {"allow": 0, "ask": 1, "deny": 2}


def call(
    session: str = "s1", subject: str = "agent", tenant: str = "default", command: str = "git push"
) -> CallInfo:
    return CallInfo(
        tool="bash",
        command=command,
        description="push the branch",
        subject=subject,
        tenant=tenant,
        session=session,
        workdir="/work",
        workspace="/work",
    )


def seg(
    *argv: str,
    findings: tuple[str, ...] = (),
    forms: tuple[tuple[str, ...], ...] = (),
    assignments: tuple[tuple[str, str], ...] = (),
    redirects: tuple[Redirect, ...] = (),
) -> Segment:
    return Segment(
        text=" ".join(argv),
        argv=tuple(argv),
        findings=findings,
        forms=forms or (tuple(argv),),
        assignments=assignments,
        redirects=redirects,
    )


def verdict(*items: tuple[Segment, Effect]) -> Verdict:
    segs = tuple(
        SegmentVerdict(
            segment=s,
            decision=Decision(
                effect=e, reason=f"rule says {e}", layer="casbin", rule="policy.csv:3"
            ),
        )
        for s, e in items
    )
    top = max(segs, key=lambda sv: STRICT[sv.decision.effect]).decision
    return Verdict(decision=top, segments=segs)


def request(
    v: Verdict | None = None,
    *,
    scope: tuple[str, ...] = (),
    c: CallInfo | None = None,
    escalation: SandboxMode | None = None,
    justification: str | None = None,
) -> ApprovalRequest:
    v = v or verdict((seg("git", "push"), "ask"))
    return ApprovalRequest(
        call=c or call(),
        verdict=v,
        question="Run this command?",
        session_scope=scope,
        escalation=escalation,
        justification=justification,
    )
