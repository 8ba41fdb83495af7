"""Frozen types at the boundaries between the gate's stages.

Every stage hands the next one immutable values, so a later policy layer cannot
change what an earlier one checked (house style, principle 5):

    ToolCall ──analyse──▶ Analysis(Segment…) ──layers──▶ Decision… ──reduce──▶ Verdict
                                                            │
                                    approve ◀───────────────┘
                                       │
                                  ExecRequest ──executor──▶ RunResult ──render──▶ text
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

#: ``sandbox``: run it without asking, but confined (the bwrap executor in
#: workspace-write mode, network off); where it cannot be confined it is an ``ask``.
Effect = Literal["allow", "sandbox", "ask", "deny"]
SandboxMode = Literal["read-only", "workspace-write", "full-access"]
ExecutorKind = Literal["local", "bwrap"]

#: Strictness order of effects: a higher number always wins.
STRICTNESS: dict[Effect, int] = {"allow": 0, "sandbox": 1, "ask": 2, "deny": 3}

#: Effects that let a command run without a person: matched on the literal argv
#: only (a wrapper or a normalised form never earns them), never a finding's.
LOOSE: frozenset[Effect] = frozenset({"allow", "sandbox"})

#: Sandbox modes from narrowest to widest.
MODE_ORDER: tuple[SandboxMode, ...] = ("read-only", "workspace-write", "full-access")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


_M = TypeVar("_M", bound=BaseModel)


def built(cls: type[_M], /, **values: Any) -> _M:
    """``cls.model_construct(**values)`` for a hot path: no validation, and the
    defaults of the fields not given filled in from a table made once per class
    (pydantic's own ``model_construct`` walks every field for each instance). For
    values this package made with the right types only."""
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        fields = cls.model_fields.items()
        if any(field.default_factory is not None for _, field in fields):
            raise TypeError(f"built({cls.__name__}): a default factory would be shared")
        # In field order (as model_dump and repr show them); required ones have none.
        defaults = _DEFAULTS[cls] = {
            name: None if field.is_required() else field.default for name, field in fields
        }
    given = set(values)  # as model_construct records them
    instance = cls.__new__(cls)
    _set = object.__setattr__
    _set(instance, "__dict__", {name: values.get(name, d) for name, d in defaults.items()})
    _set(instance, "__pydantic_fields_set__", given)
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {}


class Decision(_Frozen):
    """One layer's answer for one segment (or for the whole call).

    ``reason`` is written for both a person and the model; ``layer`` names who
    decided; ``rule`` points at the rule (``file:line`` or an id) for rule-based
    layers. ``require_sandbox`` asks that the call run under the bwrap executor,
    whatever the effect; it is OR-ed across every decision of a call.
    """

    effect: Effect
    reason: str
    layer: str
    rule: str | None = None
    require_sandbox: bool = False
    #: What it decides: the whole ``segment`` (its command), or only the files it
    #: ``writes``. A segment whose command no layer decided gets the closing
    #: default, whatever its writes got (an allowed write never allows a command).
    scope: Literal["segment", "writes"] = "segment"


class Redirect(_Frozen):
    """A redirection of a simple command, after quote removal of its target."""

    op: str  # ">", ">>", "<", "&>", "&>>", ">&", "<&", ">|", "<<", "<<<", "<>"
    fd: int | None = None
    target: str = ""
    is_write: bool = False  # writes a file (not /dev/null, not an fd duplication)


class Write(_Frozen):
    """A file a segment writes: the path it names, as written, and how.

    ``path`` is absolute and read lexically against the segment's directory
    (``..`` and ``~`` resolved, and symlinks the same command line made); the
    layers resolve existing symlinks when they decide. ``how`` says what writes
    it, for explanations (``redirection '>'``, ``'sed' writes it``).
    """

    path: str
    target: str
    how: str


class Segment(_Frozen):
    """One simple command the shell string will run.

    ``argv`` is after quote removal only: the form that *allow* rules match.
    ``forms`` holds every normalised reading for *deny/ask* matching: the argv with
    wrappers (``sudo``, ``env``, ``timeout -s KILL 5`` …) peeled off one by one,
    absolute paths reduced to the basename, backslashes removed. ``forms[0]`` is
    always ``argv`` itself, so a deny rule on a wrapper still matches.

    ``findings`` name every construct the analysis could not prove harmless
    (``$VAR``, a glob, ``eval``, an interpreter reading inline code…): a segment
    with findings can never be auto-allowed. ``writes`` are the files this
    segment writes (redirect targets, heredocs written to a file, known writing
    commands' operands and option values): the protected-paths layer and the
    ``write:`` rules decide them.
    """

    text: str
    argv: tuple[str, ...]
    forms: tuple[tuple[str, ...], ...] = ()
    assignments: tuple[tuple[str, str], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    context: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    writes: tuple[Write, ...] = ()
    #: Canonical spellings (joined) of its forms, for deny and ask rules: options
    #: unbundled, aliased and sorted, inert ones dropped (``rm -Rf x``: ``rm -f -r x``).
    canonical: tuple[str, ...] = ()
    #: Directories in which it runs a program that reads the repository found there
    #: (``git``, ``git -C DIR``; absolute, read lexically): a repository's
    #: configuration runs programs, so one other than the workspace's asks.
    repositories: tuple[str, ...] = ()
    #: A runner's spelling of this program (``python -m pytest -q`` for the segment
    #: ``pytest -q``) and the index of the program's word in it: allow rules that
    #: name the program through its runner cover it (``python -m pytest *``), one
    #: that would cover any program there (``python *``) does not.
    via: tuple[str, ...] = ()
    via_at: int = 0
    #: Paths named inside code it runs (``python -c 'open("/root/.ssh/id_rsa")'``),
    #: as written: the protected-paths and protected-reads layers ask for them.
    mentions: tuple[str, ...] = ()
    #: Files it reads that are named inside an argument rather than as one
    #: (``sed '1r FILE'``), as written: the protected-reads layer checks them as it
    #: checks operands; they are never writes.
    reads: tuple[str, ...] = ()
    #: Drafted from text that does not parse (inside a parse error): no rule is
    #: matched against such a fragment; the parse error asks for the whole line.
    fragment: bool = False
    #: The directory it runs in when known from the command itself (a ``cd``
    #: earlier in the same list moves it), ``""`` when a ``cd`` made it unknown,
    #: ``None`` when nothing says (the call's workdir).
    cwd: str | None = None

    @property
    def command(self) -> str:
        """The allow-form command line: argv joined by single spaces."""
        return " ".join(self.argv)

    @property
    def write_paths(self) -> tuple[str, ...]:
        """The absolute paths of :attr:`writes`, in order."""
        return tuple(w.path for w in self.writes)

    def all_forms(self) -> tuple[tuple[str, ...], ...]:
        """``argv`` followed by every other normalised form, without repeats."""
        seen: list[tuple[str, ...]] = [self.argv]
        for form in self.forms:
            if form not in seen:
                seen.append(form)
        return tuple(seen)


class Analysis(_Frozen):
    """What a shell string will run, as far as static reading can tell.

    ``findings`` are whole-command problems (a parse error, too many segments,
    nesting too deep); they make every segment at most ``ask``. ``refused`` says
    why the command was too large to analyse at all: the input guard then denies
    it (nothing unread may run).
    """

    command: str
    segments: tuple[Segment, ...]
    findings: tuple[str, ...] = ()
    refused: str | None = None


class CallInfo(_Frozen):
    """The facts every policy layer sees about one ``bash`` call."""

    tool: str
    command: str
    description: str = ""
    subject: str
    tenant: str
    session: str
    workdir: str  # absolute, canonical
    workspace: str  # absolute, canonical
    sandbox_permissions: SandboxMode | None = None


class SegmentVerdict(_Frozen):
    segment: Segment
    decision: Decision
    decisions: tuple[Decision, ...] = ()  # every non-abstaining layer's answer


class Verdict(_Frozen):
    """The reduced answer for a whole call: the strictest over all segments."""

    decision: Decision
    segments: tuple[SegmentVerdict, ...]
    require_sandbox: bool = False
    #: The policy store version that decided (None: no store; docs/fleet.md).
    policy_version: int | None = None

    @property
    def effect(self) -> Effect:
        return self.decision.effect

    def segment_records(self) -> list[dict[str, object]]:
        """Each segment's decision as the audit log's ``decision`` record lists it."""
        return [
            {
                "command": sv.segment.command or sv.segment.text,
                "argv": list(sv.segment.argv),
                "decision": sv.decision.effect,
                "layer": sv.decision.layer,
                "rule": sv.decision.rule,
            }
            for sv in self.segments
        ]


class ApprovalRequest(_Frozen):
    """What an approver is asked: a person must approve this exact call."""

    call: CallInfo
    verdict: Verdict
    question: str
    escalation: SandboxMode | None = None
    justification: str | None = None
    session_scope: tuple[
        str, ...
    ] = ()  # commands an allow-for-session would cover; () = not offered
    #: The gate call's id (its audit records' ``call_id``); "" when not known.
    call_id: str = ""


class ApprovalAnswer(_Frozen):
    answer: Literal["allow_once", "allow_session", "deny"]
    message: str | None = None
    approver: str = ""


class OutputView(_Frozen):
    """One stream's kept text and where its whole text went, if it overflowed."""

    text: str = ""
    truncated: bool = False
    spill_path: str | None = None  # None with truncated=True renders "(unavailable)"
    total_bytes: int = 0


class RunResult(_Frozen):
    """How a foreground command ended. Everything here is *reported*, not raised."""

    stdout: OutputView = Field(default_factory=OutputView)
    stderr: OutputView = Field(default_factory=OutputView)
    exit_code: int | None = None
    signal: str | None = None  # "SIGTERM", …
    timed_out: bool = False
    timeout_ms: int | None = None
    duration_ms: float = 0.0
    executor: ExecutorKind = "local"
    sandbox_mode: SandboxMode | None = None
    sandbox_denied: bool = False
    escalation_available: bool = False
