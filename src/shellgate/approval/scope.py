"""Allow-for-session: which exact commands a grant may cover, and the grant store.

Invariants (each enforced here and nowhere else):

* A grant names *exact* simple commands, never a pattern or a prefix: the key of
  a segment is its argv shell-quoted (``shlex.join``), preceded by its variable
  assignments and followed by its redirections, so ``echo hi`` granted does not
  cover ``echo hi > notes.txt`` or ``LD_PRELOAD=x echo hi``. For an ordinary
  segment the key equals :attr:`Segment.command`.
* A grant is never offered, stored or honoured for an interpreter or a wrapper
  (anything that runs code or another command chosen by its arguments, its stdin or
  a file: ``bash``, ``python3``, ``node``, ``env``, ``sudo``, ``xargs``,
  ``find -exec``, ``awk``, ``ssh``, ``docker exec``…, and whatever the command
  catalog reads as running a program or a shell string), looked up by the basename
  of argv[0] and of every normalised form, nor for a segment with findings (what the
  analysis could not prove cannot be approved in advance).
* :func:`session_scope` returns ``()`` ("not offered") unless the deployment
  permits session grants (``[approval] allow_session``); the caller passes that
  fact as ``permitted``. :class:`SessionGrants` re-checks eligibility on every
  :meth:`~SessionGrants.grant` and :meth:`~SessionGrants.covers`, so a grant for
  an ineligible command can never be honoured even if a caller skipped the scope.
* A grant belongs to one ``(subject, tenant, session)``; nothing is shared across
  sessions, and an empty session id never holds grants.
"""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Iterable

from shellgate.models import CallInfo, Segment, Verdict
from shellgate.shell import catalog

#: Commands that run code or another command chosen at run time. Matched against
#: the basename of argv[0] of every normalised form of a segment.
INTERPRETERS_AND_WRAPPERS: frozenset[str] = frozenset(
    {
        # shells
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "ash", "fish", "csh", "tcsh",
        "rbash", "yash", "elvish", "nu", "xonsh", "pwsh", "powershell",
        # language interpreters and REPLs
        "python", "pypy", "pypy3", "ipython", "node", "nodejs", "deno", "bun", "perl",
        "ruby", "irb", "php", "lua", "luajit", "tclsh", "wish", "expect", "rscript", "r",
        "julia", "groovy", "jshell", "scala", "ghci", "runghc", "runhaskell", "guile",
        "racket", "sbcl", "clisp", "gawk", "awk", "mawk", "nawk", "busybox", "toybox",
        "osascript", "swift", "kotlin", "elixir", "iex", "erl", "escript", "dotnet",
        "java", "jrunscript", "qjs", "gdb", "lldb",
        # wrappers that run the command in their arguments
        "env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "eval", "exec",
        "command", "builtin", "nohup", "timeout", "nice", "renice", "ionice", "setsid",
        "stdbuf", "time", "flock", "watch", "chroot", "unshare", "nsenter", "strace",
        "ltrace", "valgrind", "script", "parallel", "sg", "newgrp", "chrt", "taskset",
        "firejail", "bwrap", "systemd-run", "at", "batch", "crontab", "tmux", "screen",
        "source", ".", "fakeroot", "proot", "caffeinate",
        # remote and container execution, package runners
        "ssh", "mosh", "rsh", "telnet", "npx", "pnpx", "bunx", "uvx", "pipx",
    }
)  # fmt: skip

#: ``python3.12``, ``python2.7``, ``pypy3.10``, ``perl5.36``, ``ruby3.2``, ``php8.1``…
_VERSIONED = re.compile(r"(?:python|pypy|perl|ruby|php|lua|node|tclsh)\d+(?:\.\d+)*")

#: Container and cluster front ends: these subcommands run a command elsewhere.
_CONTAINER_TOOLS: frozenset[str] = frozenset({"docker", "podman", "nerdctl", "kubectl", "oc"})
_CONTAINER_RUNS: frozenset[str] = frozenset({"exec", "run", "debug", "attach", "start"})

#: ``find`` actions that run a command.
_FIND_EXEC: frozenset[str] = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def runs_other_code(argv: tuple[str, ...]) -> bool:
    """True when ``argv`` is an interpreter or wrapper (see the module docstring).

    An empty argv counts as "yes": nothing provable can be granted.
    """
    if not argv:
        return True
    name = _basename(argv[0]).lower()
    if name in INTERPRETERS_AND_WRAPPERS or _VERSIONED.fullmatch(name):
        return True
    if name == "find":
        return any(word in _FIND_EXEC for word in argv[1:])
    if name in _CONTAINER_TOOLS:
        return any(word in _CONTAINER_RUNS for word in argv[1:])
    # What the command catalog knows runs something: a wrapper, or an option
    # naming a program or a shell string (`git --upload-pack=…`, `tar -I prog`).
    reading = catalog.read(tuple(argv))
    return reading is not None and bool(reading.programs or reading.payloads)


def segment_key(segment: Segment) -> str:
    """The exact text a session grant for ``segment`` stores and matches."""
    parts = [f"{name}={shlex.quote(value)}" for name, value in segment.assignments]
    parts.append(shlex.join(segment.argv))
    for redirect in segment.redirects:
        fd = "" if redirect.fd is None else str(redirect.fd)
        parts.append(f"{fd}{redirect.op}{shlex.quote(redirect.target)}")
    return " ".join(parts)


def _eligible(segment: Segment) -> bool:
    if segment.findings or not segment.argv:
        return False
    return not any(runs_other_code(form) for form in segment.all_forms())


def _ask_segments(verdict: Verdict) -> tuple[Segment, ...] | None:
    """The segments whose decision is ``ask``; ``None`` if the call or any segment is
    ``deny``, or any is ``sandbox``: an approved call runs unconfined as a whole, so a
    grant for its asked parts must not carry a part the policy would confine
    (``git push && python x.py`` is not covered by a grant for ``git push``)."""
    if verdict.effect == "deny":
        return None
    asked: list[Segment] = []
    for item in verdict.segments:
        if item.decision.effect in ("deny", "sandbox"):
            return None
        if item.decision.effect == "ask":
            asked.append(item.segment)
    return tuple(asked)


def session_scope(verdict: Verdict, *, permitted: bool) -> tuple[str, ...]:
    """The exact commands an allow-for-session answer would cover, or ``()``.

    ``()`` means "do not offer it": the deployment does not permit session grants
    (``permitted`` is ``config.approval.allow_session``), the call has a denied
    segment or nothing to ask, or any segment needing approval is an interpreter
    or wrapper or has findings. Keys are unique and in segment order.
    """
    if not permitted:
        return ()
    asked = _ask_segments(verdict)
    if not asked or not all(_eligible(segment) for segment in asked):
        return ()
    return tuple(dict.fromkeys(segment_key(segment) for segment in asked))


def _first_word(command: str) -> tuple[str, ...]:
    """argv of a stored key, without leading assignments (for the eligibility re-check)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0], re.DOTALL):
        words.pop(0)
    return tuple(words)


class SessionGrants:
    """Per-gate store of allow-for-session grants, keyed by (subject, tenant, session).

    Bounded: at most ``max_commands`` keys per session and ``max_sessions``
    sessions; a grant beyond either bound is not stored (the person is simply asked
    again, which fails closed). Thread-safe.
    """

    def __init__(self, *, max_commands: int = 256, max_sessions: int = 10_000) -> None:
        if max_commands <= 0 or max_sessions <= 0:
            raise ValueError("SessionGrants bounds must be positive")
        self._max_commands = max_commands
        self._max_sessions = max_sessions
        self._grants: dict[tuple[str, str, str], set[str]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _owner(call: CallInfo) -> tuple[str, str, str]:
        return (call.subject, call.tenant, call.session)

    def grant(self, call: CallInfo, commands: Iterable[str]) -> None:
        """Record that ``commands`` (keys from :func:`session_scope`) are allowed.

        Raises ``ValueError`` for an empty session id, an empty command, or a
        command that is an interpreter or wrapper: such a grant is a caller bug and
        must not be silently widened or dropped.
        """
        if not call.session:
            raise ValueError("session grants need a session id; this call has none")
        keys = tuple(commands)
        for key in keys:
            if not key.strip() or runs_other_code(_first_word(key)):
                raise ValueError(
                    f"refusing a session grant for {key!r}: not an exact, "
                    "non-interpreter simple command"
                )
        owner = self._owner(call)
        with self._lock:
            held = self._grants.get(owner)
            if held is None:
                if len(self._grants) >= self._max_sessions:
                    return
                held = self._grants[owner] = set()
            for key in keys:
                if len(held) >= self._max_commands:
                    break
                held.add(key)

    def covers(self, call: CallInfo, verdict: Verdict) -> bool:
        """True only if every ``ask`` segment's exact key was granted to this session.

        False when any segment is ``deny``, when there is nothing to ask, when the
        session id is empty, or when any asked segment is ineligible (re-checked
        here, so the answer never depends on what was stored).
        """
        if not call.session:
            return False
        asked = _ask_segments(verdict)
        if not asked or not all(_eligible(segment) for segment in asked):
            return False
        with self._lock:
            held = self._grants.get(self._owner(call), set())
            return all(segment_key(segment) in held for segment in asked)

    def granted(self, call: CallInfo) -> frozenset[str]:
        """The keys granted to ``call``'s session (for display and audit)."""
        with self._lock:
            return frozenset(self._grants.get(self._owner(call), ()))

    def end_session(self, subject: str, tenant: str, session: str) -> None:
        """Forget every grant of one session (call when the session ends)."""
        with self._lock:
            self._grants.pop((subject, tenant, session), None)
