"""The scripted agent session: each step makes real calls through a real gate and
asserts what must have happened (the demo's exit status is the AND of them).

What each step shows is read back from the audit log, so the demo also shows that
the log records every decision, question and answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from shellgate.audit import tail, verify
from shellgate.executors import make_executor
from shellgate.gate import Gate, ToolResult
from shellgate.models import ApprovalAnswer, ApprovalRequest

from .view import Check, View
from .workspace import DemoWorld

TASK_WAIT_S = 10.0  # a bound, not a target: the background step takes ~0.3 s


class ScriptedApprover:
    """Stands in for the person: approves once, except anything that uses the network."""

    name = "demo-script"
    REFUSED = ("curl", "wget", "ssh", "git push")

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        if any(word in request.call.command for word in self.REFUSED):
            return ApprovalAnswer(
                answer="deny",
                message="no network in this demo, please work offline",
                approver=self.name,
            )
        return ApprovalAnswer(answer="allow_once", approver=self.name)


class Session:
    """One gate plus the view: makes a call, shows it, returns the result."""

    def __init__(
        self, world: DemoWorld, gate: Gate, approver: ScriptedApprover, view: View
    ) -> None:
        self.world = world
        self.gate = gate
        self.approver = approver
        self.view = view

    def _latest(self, kind: str, after: int) -> dict[str, Any] | None:
        records = [r for r in tail(self.world.audit, 50) if r.get("type") == kind]
        fresh = [r for r in records if int(r.get("seq", 0)) > after]
        return fresh[-1] if fresh else None

    def _seq(self) -> int:
        last = tail(self.world.audit, 1) if self.world.audit.exists() else []
        return int(last[0].get("seq", 0)) if last else 0

    async def bash(self, command: str, description: str, **extra: object) -> ToolResult:
        before = self._seq()
        self.view.call("bash", command + ("   (in the background)" if extra else ""))
        result = await self.gate.call(
            "bash", {"command": command, "description": description, **extra}
        )
        decision = self._latest("decision", before)
        if decision is not None:
            rule = self.world.short(decision.get("rule"))
            reason = self.world.shorten(decision["reason"])
            self.view.decision(decision["decision"], decision["layer"], rule, reason)
        approval = self._latest("approval", before)
        if approval is not None:
            question = self.world.shorten(approval["question"])
            self.view.approval(question, approval["answer"], approval.get("message"))
        self.view.model_sees(result.text, result.is_error)
        return result

    def would_be(self, command: str) -> str:
        """The effect the gate *will* give ``command``, computed without running anything.

        A safety interlock for steps whose command must never run (``rm -rf /``, a
        download): with ``--policy`` pointing at another set, the policy could allow
        it, and the demo must not be the thing that runs it.
        """
        owner = self.gate.owner(None, None, None)
        workdir = str(self.gate.executor.resolve_workdir(None))
        call = self.gate.call_info(owner, command, "interlock", workdir)
        return self.gate.decider.decide(call).effect

    def decided(self, after: int) -> dict[str, Any]:
        return self._latest("decision", after) or {}


async def allowed(s: Session) -> Check:
    check = Check("an everyday read is allowed", "allowed by a rule, ran, output returned")
    s.view.step(
        check.title, "Reading a file matches an allow rule: it runs at once, nobody is asked."
    )
    before, asked = s._seq(), len(s.approver.asked)
    result = await s.bash("cat README.md", "show the project readme")
    decision = s.decided(before)
    check.expect(result.outcome == "ok" and not result.is_error, f"outcome was {result.outcome}")
    check.expect("# demo project" in result.text, "the file's content is missing")
    check.expect(decision.get("decision") == "allow", f"decision was {decision.get('decision')}")
    check.expect(len(s.approver.asked) == asked, "a person was asked about an allowed command")
    return check


async def confined(s: Session) -> Check:
    check = Check("the project's own tools run confined, unasked",
                  "sandboxed by a rule, ran in bwrap, nobody asked")
    s.view.step(
        check.title,
        "Removing a scratch file matches a sandbox rule: it runs at once, but in the "
        "bubblewrap sandbox (the workspace writable, nothing else, no network). Where "
        "bwrap does not work, the same call is asked about instead.",
    )
    before, asked = s._seq(), len(s.approver.asked)
    result = await s.bash("rm notes.txt", "delete the scratch notes")
    decision = s.decided(before)
    check.expect(result.outcome == "ok", f"outcome was {result.outcome}")
    check.expect(not (s.world.workspace / "notes.txt").exists(), "notes.txt still exists")
    if decision.get("decision") == "ask" and decision.get("layer") == "sandbox":
        s.view.note("bwrap does not work here, so it was asked about instead (and approved)")
        check.expect(len(s.approver.asked) == asked + 1, "the approver was not asked once")
        return check
    check.expect(decision.get("decision") == "sandbox", f"decision was {decision.get('decision')}")
    check.expect(decision.get("executor") == "bwrap", "it did not run in the sandbox")
    check.expect(len(s.approver.asked) == asked, "a person was asked about a confined command")
    return check


async def asked_yes(s: Session) -> Check:
    check = Check("a change that runs later is asked about, then approved",
                  "asked once, approved, the file written")
    s.view.step(
        check.title,
        "A CI or pre-commit config is code another program runs later, with a person's "
        "rights: the gate stops and asks a person, whatever the rules say.",
    )
    before, asked = s._seq(), len(s.approver.asked)
    result = await s.bash("touch .pre-commit-config.yaml", "add a pre-commit config")
    check.expect(s.decided(before).get("decision") == "ask", "the decision was not ask")
    check.expect(len(s.approver.asked) == asked + 1, "the approver was not asked exactly once")
    check.expect(result.outcome == "ok", f"outcome was {result.outcome}")
    check.expect((s.world.workspace / ".pre-commit-config.yaml").exists(), "no file was written")
    return check


async def asked_no(s: Session) -> Check:
    check = Check("an approval can be refused", "asked, refused, nothing ran")
    s.view.step(
        check.title,
        "A download is asked about too; the person says no, and the model is told why.",
    )
    command = "curl -s https://example.com"
    if s.would_be(command) == "allow":
        check.expect(False, f"this policy allows '{command}'; the demo did not run it")
        return check
    before = s._seq()
    result = await s.bash(command, "fetch the example page")
    check.expect(s.decided(before).get("decision") == "ask", "the decision was not ask")
    check.expect(result.outcome == "not approved", f"outcome was {result.outcome}")
    check.expect("no network in this demo" in result.text, "the person's message is missing")
    return check


async def denied(s: Session) -> Check:
    check = Check("a catastrophic command is denied", "denied by a named rule, nobody asked")
    s.view.step(
        check.title,
        "Some commands are vetoed outright, however they are spelled or wrapped: "
        "no approval can let them through.",
    )
    command = "timeout 5 rm -Rf /"
    if (effect := s.would_be(command)) != "deny":
        check.expect(False, f"this policy says {effect} to '{command}'; the demo did not run it")
        return check
    before, asked = s._seq(), len(s.approver.asked)
    result = await s.bash(command, "clean up")
    decision = s.decided(before)
    check.expect(result.outcome == "denied", f"outcome was {result.outcome}")
    check.expect(decision.get("decision") == "deny", f"decision was {decision.get('decision')}")
    check.expect("policy.csv:" in (decision.get("rule") or ""), "the deny names no rule")
    check.expect("policy.csv:" in result.text, "the model is not told which rule denied it")
    check.expect(len(s.approver.asked) == asked, "a person was asked about a denied command")
    return check


async def background(s: Session) -> Check:
    check = Check("a background task and its notice", "started, one completion notice, output read")
    s.view.step(
        check.title,
        "Long-running work goes to the background; when it ends the host gets one notice "
        "(over MCP it tops the next tool result).",
    )
    result = await s.bash(
        "sleep 0.3 && echo build finished", "simulate a build", run_in_background=True
    )
    check.expect(result.text.startswith("started background task "), "no task was started")
    if not check.problems:
        task_id = result.text.rsplit(" ", 1)[1]
        owner = s.gate.owner(None, None, None)
        task = s.gate.tasks.get(owner, task_id)
        try:
            await asyncio.wait_for(asyncio.shield(task.process.done), TASK_WAIT_S)
        except TimeoutError:
            check.expect(False, f"the task did not finish within {TASK_WAIT_S:.0f}s")
        notices = s.gate.pop_notices(owner)
        for notice in notices:
            s.view.note("notice  " + notice)
        check.expect(len(notices) == 1 and task_id in notices[0], f"notices were {notices}")
        s.view.call("bash_output", task_id)
        output = await s.gate.call("bash_output", {"task_id": task_id})
        s.view.model_sees(output.text, output.is_error)
        check.expect("build finished" in output.text, "the task's output is missing")
        check.expect("exit code: 0" in output.text, "the task did not complete cleanly")
    return check


async def sandboxed(world: DemoWorld, view: View) -> Check:
    check = Check(
        "the sandbox refuses a write outside the workspace",
        "approved by the person, refused by bwrap, no file on the host",
    )
    view.step(
        check.title,
        "Policy and approval are one wall; the bubblewrap sandbox is another. Here the "
        "person approves a write outside the workspace, and the sandbox still refuses it.",
    )
    config = world.config("bwrap")
    probe = make_executor(config, "bwrap")
    try:
        await probe.open()
        reason = probe.unavailable_reason
    finally:
        await probe.aclose()
    if reason is not None:
        check.note = f"bwrap does not work here ({reason})"
        return check
    approver = ScriptedApprover()
    async with Gate(config, approver=approver) as gate:
        result = await Session(world, gate, approver, view).bash(
            "echo pwned > ../outside.txt", "write outside the workspace"
        )
    run = result.run
    check.expect(run is not None and run.exit_code not in (0, None), "the write did not fail")
    check.expect(run is not None and run.sandbox_denied, "the sandbox denial was not reported")
    check.expect("[sandbox: file access denied" in result.text, "the model is not told")
    check.expect(not world.outside.exists(), f"{world.outside} was created on the host")
    world.outside.unlink(missing_ok=True)
    return check


def audited(world: DemoWorld, view: View) -> Check:
    check = Check("the audit log verifies, and tampering shows", "chain intact; an edit is caught")
    view.step(
        check.title, "Every call above is in a hash-chained log: editing any record breaks it."
    )
    good = verify(world.audit)
    view.note(
        f"shellgate audit verify {world.short(str(world.audit))}: "
        f"{'ok' if good.ok else 'BROKEN'}, {good.records} records"
    )
    check.expect(good.ok, f"the log does not verify: line {good.first_bad}: {good.reason}")
    check.expect(good.records >= 10, f"only {good.records} records")
    lines = world.audit.read_text(encoding="utf-8").splitlines()
    forged = world.root / "forged-audit.jsonl"
    for index, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") == "decision" and record.get("decision") == "deny":
            record["decision"] = "allow"  # rewrite history: pretend rm -rf / was allowed
            lines[index] = json.dumps(
                record, separators=(",", ":"), sort_keys=True, ensure_ascii=False
            )
            break
    forged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bad = verify(forged)
    view.note(f"after turning the deny into an allow: line {bad.first_bad}: {bad.reason}")
    check.expect(not bad.ok, "the forged log still verifies")
    return check


async def run_script(world: DemoWorld, view: View) -> list[Check]:
    """Every step in order; a step that raises counts as failed, the rest still run."""
    checks: list[Check] = []
    approver = ScriptedApprover()
    async with Gate(world.config(), approver=approver) as gate:
        session = Session(world, gate, approver, view)
        for step in (allowed, confined, asked_yes, asked_no, denied, background):
            checks.append(await _run(view, step.__name__, step(session)))
    # The first gate is closed: the sandbox step's gate continues the same log.
    checks.append(await _run(view, "sandboxed", sandboxed(world, view)))
    checks.append(await _run(view, "audited", _now(audited, world, view)))
    return checks


async def _now(fn: Any, *args: Any) -> Check:
    result: Check = fn(*args)
    return result


async def _run(view: View, name: str, step: Any) -> Check:
    try:
        check: Check = await step
    except Exception as exc:  # a crash in one step is that step's failure, not the demo's end
        check = Check(name.replace("_", " "), "no crash")
        check.expect(False, f"{type(exc).__name__}: {exc}")
    check.settle()
    view.verdict(check)
    return check
