"""Decisions kept for a later call, and approvals given out of band: sealed, bound, single use.

Agent frameworks approve by pausing a run and resuming it later (an interruption,
a deferred tool call, a graph interrupt). The gate cannot hold the call open
meanwhile, so a person's yes travels as an :class:`Approval`: a value the gate
sealed with a key only it holds, naming the exact call it covers — tool, the
validated arguments (as a digest), subject, tenant, session and the decision it
answers — who approved it, and when it stops being good.

Invariants (each failure is a ``deny`` naming the cause, never an allow):

* **Sealed.** An HMAC-SHA256 over the canonical fields with the gate's key; a
  changed field, a token from another gate or a made-up one does not verify.
* **Bound.** The call that presents it must have the same tool, arguments,
  subject, tenant and session as the decision it answers.
* **Single use.** The decision id is spent by the first call that presents it,
  whatever that call's outcome; a second presentation is refused. The call runs
  on that decision: the policy is not consulted again (one decision per call).
* **Expiring.** ``expires_at`` is sealed in; an approval past it is refused.
* **Local.** The key and the spent ids live in the gate that issued it: another
  process, or the same process after a restart, refuses it (there is no shared
  store to make single use hold across processes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from dataclasses import asdict, dataclass, replace
from typing import Literal

from shellgate.errors import ShellgateError

TOKEN_PREFIX = "sga1"  # noqa: S105 - a format tag, not a secret
Answer = Literal["allow_once", "deny"]
#: Decisions kept waiting for their call at once, per gate (bounds a flood of decides).
MAX_PENDING = 4096
#: The longest approval token read (a person's message included); longer is malformed.
MAX_TOKEN_CHARS = 256 * 1024
_MAC = re.compile(r"[0-9a-f]{64}")


class ApprovalRefused(ShellgateError):
    """An approval that does not cover the call presenting it (forged, reused, …).

    ``known`` says the decision it names is one this gate made (and the refusal is
    part of that call's story on the record); a forged seal or an unknown id is not.
    """

    def __init__(self, message: str, *, known: bool = False) -> None:
        super().__init__(message)
        self.known = known


def arguments_digest(tool: str, arguments: dict[str, object]) -> str:
    """SHA-256 of the tool name and its validated arguments, as canonical JSON."""
    canonical = json.dumps(
        [tool, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Approval:
    """A person's answer to one ``ask`` decision, sealed by the gate that asked.

    Pass it (or its :attr:`token`) to ``gate.call(..., approval=...)``. Fields
    are readable; changing any of them breaks the seal.
    """

    decision_id: str
    tool: str
    digest: str
    subject: str
    tenant: str
    session: str
    approver: str
    answer: Answer
    expires_at: float
    message: str | None = None
    mac: str = ""

    def _payload(self) -> bytes:
        fields = asdict(self)
        del fields["mac"]
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()

    @property
    def token(self) -> str:
        """A string form for storing the approval in a framework's run state."""
        body = base64.urlsafe_b64encode(self._payload()).decode().rstrip("=")
        return f"{TOKEN_PREFIX}.{body}.{self.mac}"

    @classmethod
    def parse(cls, token: str) -> Approval:
        """Read a :attr:`token`; raises :class:`ApprovalRefused` for anything malformed."""
        if not isinstance(token, str):
            raise ApprovalRefused(f"approval is a {type(token).__name__}, not a token")
        if len(token) > MAX_TOKEN_CHARS:
            raise ApprovalRefused(f"approval token is malformed (over {MAX_TOKEN_CHARS} chars)")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != TOKEN_PREFIX or not _MAC.fullmatch(parts[2]):
            raise ApprovalRefused("approval token is malformed")
        try:
            raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
            fields = json.loads(raw)
            if not isinstance(fields, dict):
                raise ValueError("not an object")
            return cls(**fields, mac=parts[2])
        except RecursionError:  # JSON nested past the interpreter's limit
            raise ApprovalRefused("approval token is malformed (nested too deeply)") from None
        except (binascii.Error, ValueError, TypeError) as exc:
            raise ApprovalRefused(f"approval token is malformed ({exc})") from None


@dataclass(frozen=True)
class Pending:
    """A decision made by :meth:`Gate.decide`, waiting for the call that runs it."""

    digest: str
    owner: tuple[str, str, str]  # subject, tenant, session
    expires_at: float
    decided: object  # the bash call's decision (tools.bash.Decided), handed back on redeem


class ApprovalSeal:
    """One gate's decisions waiting to run, and its key for sealing approvals to them.

    A decision is redeemed at most once, by a call with the same tool, arguments
    and owner, before it expires; an approval must carry this gate's seal and
    name that decision.
    """

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        if len(self._key) < 16:
            raise ValueError("an approval key needs at least 16 bytes")
        self._pending: dict[str, Pending] = {}
        self._spent: dict[str, float] = {}  # decision id -> kept until its expiry
        self._lock = threading.Lock()

    def _mac(self, approval: Approval) -> str:
        return hmac.new(self._key, approval._payload(), hashlib.sha256).hexdigest()

    def _verify(self, approval: Approval) -> None:
        """Raise :class:`ApprovalRefused` unless this gate sealed exactly ``approval``.

        Anything an ``Approval`` can be made to hold (a mac that is not ASCII text, a
        field JSON cannot encode) is a refusal, never another exception.
        """
        mac = approval.mac
        try:
            good = isinstance(mac, str) and bool(_MAC.fullmatch(mac)) and hmac.compare_digest(
                mac, self._mac(approval))
        except (TypeError, ValueError, RecursionError):
            good = False
        if not good:
            raise ApprovalRefused("approval is not sealed by this gate (forged or altered)")

    def decided(self, decision_id: str) -> object | None:
        """The decision kept under ``decision_id`` (``tools.bash.Decided``), if still waiting."""
        with self._lock:
            self._prune(time.time())
            pending = self._pending.get(decision_id)
        return None if pending is None else pending.decided

    def issue(self, decision_id: str, pending: Pending) -> None:
        """Keep ``decision_id`` for the call that will run it."""
        with self._lock:
            self._prune(time.time())
            self._pending[decision_id] = pending
            while len(self._pending) > MAX_PENDING:  # the oldest goes: it can be decided again
                del self._pending[next(iter(self._pending))]

    def seal(self, approval: Approval) -> Approval:
        """``approval`` with its seal, for a decision this gate made and has not spent.

        The approval must describe that decision as the gate keeps it — the tool,
        the arguments' digest, the owner and the expiry — so a person's answer
        given to an altered copy of a decision never covers the real one.
        """
        with self._lock:
            self._prune(time.time())
            did = approval.decision_id
            if did in self._spent:
                raise ApprovalRefused(f"decision {did} was already used")
            pending = self._pending.get(did)
            if pending is None:
                raise ApprovalRefused(f"decision {did} was not made by this gate, or has expired")
        claimed = (approval.tool, approval.digest, approval.subject, approval.tenant,
                   approval.session, approval.expires_at)
        kept = ("bash", pending.digest, *pending.owner, pending.expires_at)
        for name, got, want in zip(("tool", "arguments", "subject", "tenant", "session",
                                    "expiry"), claimed, kept, strict=True):
            if got != want:
                raise ApprovalRefused(
                    f"this is not the decision the gate made under {did} (its {name} differs)"
                )
        return replace(approval, mac=self._mac(approval))

    def redeem(
        self,
        decision_id: str,
        approval: Approval | str | None,
        *,
        digest: str,
        owner: tuple[str, str, str],
    ) -> tuple[Pending, Approval | None]:
        """Spend ``decision_id`` for this call; raises :class:`ApprovalRefused` if it may not.

        The id is spent before anything is compared, so a probe with the wrong
        arguments, or a racing second call, cannot use it afterwards.
        """
        if isinstance(approval, str):
            approval = Approval.parse(approval)
        if approval is not None:
            if not isinstance(approval, Approval):
                raise ApprovalRefused(f"approval is a {type(approval).__name__}, not an Approval")
            self._verify(approval)
            if approval.decision_id != decision_id:
                raise ApprovalRefused(
                    f"approval answers decision {approval.decision_id}, not {decision_id}"
                )
        now = time.time()
        with self._lock:
            self._prune(now)
            if decision_id in self._spent:
                raise ApprovalRefused(f"decision {decision_id} was already used", known=True)
            pending = self._pending.pop(decision_id, None)
            if pending is None or (approval is not None and approval.expires_at <= now):
                raise ApprovalRefused(
                    f"decision {decision_id} was not made by this gate, or has expired"
                )
            self._spent[decision_id] = pending.expires_at
        if pending.digest != digest:
            raise ApprovalRefused(
                f"decision {decision_id} was made for another call (its arguments differ)",
                known=True,
            )
        for name, want, got in zip(("subject", "tenant", "session"), pending.owner, owner,
                                   strict=True):
            if want != got:
                raise ApprovalRefused(
                    f"decision {decision_id} was made for another call (its {name} differs)",
                    known=True,
                )
        return pending, approval

    def _prune(self, now: float) -> None:
        for key in [k for k, p in self._pending.items() if p.expires_at <= now]:
            del self._pending[key]
        for key in [k for k, until in self._spent.items() if until <= now]:
            del self._spent[key]
