"""Read one policy set directory (``model.conf`` + ``policy.csv``), validating every row.

A policy set either loads completely or not at all: every problem is reported as
``<file>:<line>: <reason>`` and :func:`load_policy_set` raises the first one as a
:class:`~shellgate.errors.PolicyError` at start-up (fail closed — a broken file never
silently means "no rules").

The CSV reader is our own, line by line, with standard CSV quoting: casbin's reader
splits on every top-level comma, so a regex such as ``re:a{1,3}`` turns into extra
columns that only fail (or worse, shift into the effect column) at enforce time.
Here a row with the wrong number of columns is a load error naming the line; a
field containing a comma must be quoted (``"re:a{1,3}"``), which casbin's other
adapters read the same way.

``model.conf`` must be shellgate's shipped model (compared key by key, whitespace
and comments ignored): a different effect or matcher could turn "no rule" into
"allow" or disable matching altogether, so it is not the admin's to change.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from shellgate.errors import PolicyError
from shellgate.models import Effect
from shellgate.policy.patterns import REGEX_PREFIX, Pattern, PatternError, compile_pattern

MODEL_FILE = "model.conf"
POLICY_FILE = "policy.csv"
EFFECTS: tuple[Effect, ...] = ("allow", "sandbox", "ask", "deny")
SHIPPED_MODEL = Path(__file__).with_name(MODEL_FILE)
MAX_POLICY_BYTES = 256 * 1024**2  # bytes; a bound, not a target
#: The role every subject holds in the packaged baseline set (docs/policies.md).
EVERYONE = "everyone"


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``p`` row. ``order`` is its position among the set's rows (file order)."""

    subject: str
    tenant: str
    pattern: Pattern
    effect: Effect
    reason: str
    file: str
    line: int
    order: int

    @property
    def ref(self) -> str:
        """The rule's name in decisions and the audit log: ``<policy.csv path>:<line>``."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Link:
    """One ``g`` row: ``user`` has ``role`` in ``tenant`` (``*`` = every tenant)."""

    user: str
    role: str
    tenant: str
    file: str
    line: int


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class PolicySource:
    """A validated policy set: its rules in file order and its role links.

    ``label`` is set for a set read from text (a policy store): the set's name,
    which its rule references use (``<label>/policy.csv:<line>``) in place of a
    name derived from ``directory``.
    """

    directory: Path
    rules: tuple[Rule, ...]
    links: tuple[Link, ...]
    label: str | None = None
    #: The packaged baseline: every subject holds the role :data:`EVERYONE` in it
    #: (and only in it), so its rules bind whoever asks.
    everyone: bool = False

    @property
    def policy_file(self) -> Path:
        return self.directory / POLICY_FILE

    @property
    def rule_file(self) -> str:
        """The ``file`` every rule of this set carries."""
        return str(self.policy_file) if self.label is None else f"{self.label}/{POLICY_FILE}"

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """Rows that load but cannot mean what they say, computed when asked (the gate
        never pays for them): a Claude Code rule pasted as a pattern, ``Bash(git diff:*)``,
        which shellgate reads literally and so matches no command. The commands that
        load a set for a person (``check``, ``policy test``, ``policy push``) print
        them; ``policy lint`` reports them among its findings.
        """
        found: list[Problem] = []
        for rule in self.rules:
            text = rule.pattern.text
            if rule.pattern.kind != "regex" and text.startswith("Bash("):
                message = claude_pattern(text)
                if message is not None:
                    found.append(Problem(rule.file, rule.line, message))
        return tuple(found)


def claude_pattern(text: str) -> str | None:
    """A Claude Code permission rule pasted as a pattern: ``Bash(git diff:*)``, ``git diff:*``.

    shellgate would read it literally (a command whose first word is ``Bash(git``),
    and the glued-star hint would suggest ``diff: *)``; the fix is the command
    itself, as ``policy import --from claude-code`` writes it. ``None`` for
    anything else.
    """
    if not (text.startswith("Bash(") and text.endswith(")")) and not text.endswith(":*"):
        return None
    # Only here, on the way to a message: the translation is the importer's.
    from shellgate.policy.importers.claude import suggest

    fix = suggest(text)
    if not text.startswith("Bash("):
        # "npm run test:*" is also a valid glob (test:unit, test:e2e): say both.
        return (f"pattern {text!r} matches {text[:-1]!r} followed by anything; if it is "
                f"Claude Code's legacy ':*' prefix form, the shellgate pattern is {fix!r}")
    if fix is None:
        return (f"pattern {text!r} is Claude Code's permission syntax, not a shellgate "
                "pattern: write the command itself, one rule per simple command")
    return (f"pattern {text!r} is Claude Code's permission syntax, not a shellgate pattern: "
            f"write {fix!r}")


@dataclass
class _Reader:
    problems: list[Problem] = field(default_factory=list)

    def problem(self, file: Path | str, line: int | None, message: str) -> None:
        self.problems.append(Problem(str(file), line, message))


def parse_model(text: str) -> dict[tuple[str, str], tuple[str, int]]:
    """casbin's INI-like model syntax: ``{(section, key): (value without spaces, line)}``."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    section = ""
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line[0] in "#;"):
            continue
        if not pending and line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        key, sep, value = line.partition("=")
        if not sep:
            out[(section, "?" + line)] = (line, start)
            continue
        out[(section, key.strip())] = ("".join(value.split()), start)
    return out


def check_model(path: Path, reader: _Reader) -> None:
    """Refuse any model that is not shellgate's (see the module docstring)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        reader.problem(path, None, "missing model.conf (`shellgate policy init` writes it)")
        return
    except (OSError, UnicodeDecodeError) as exc:
        reader.problem(path, None, f"cannot read model.conf: {exc}")
        return
    check_model_text(text, str(path), reader)


def check_model_text(text: str, path: str, reader: _Reader) -> None:
    """Refuse a model text that is not shellgate's; problems are named by ``path``."""
    shipped = parse_model(SHIPPED_MODEL.read_text(encoding="utf-8"))
    given = parse_model(text)
    for key, (value, _) in shipped.items():
        if key not in given:
            reader.problem(path, None, f"[{key[0]}] {key[1]} is missing; shellgate runs only "
                           "its shipped model (`shellgate policy init` writes it)")
            return
        if given[key][0] != value:
            reader.problem(path, given[key][1], f"[{key[0]}] {key[1]} differs from shellgate's "
                           "shipped model; shellgate runs only its own model")
            return
    for key, (_, line) in given.items():
        if key not in shipped:
            reader.problem(path, line, f"[{key[0]}] {key[1].lstrip('?')}: not part of "
                           "shellgate's model")
            return


def _fields(raw: str) -> list[str]:
    if '"' not in raw:
        # Without quotes a CSV row is exactly its comma-separated parts; the csv
        # module costs several times more per row, which shows at 100,000 rows.
        return [f.strip() for f in raw.split(",")]
    rows = list(csv.reader([raw], skipinitialspace=True, strict=True))
    return [f.strip() for f in rows[0]] if rows else []


def _comma_hint(fields: list[str]) -> str:
    if any(f.startswith(REGEX_PREFIX) for f in fields):
        return "; a comma inside a pattern splits it: quote the field, e.g. \"re:a{1,3}\""
    return "; quote any field that contains a comma"


def _policy_row(
    fields: list[str], file: str, line: int, order: int, reader: _Reader
) -> Rule | None:
    if len(fields) not in (5, 6):
        reader.problem(file, line, f"a p row has 4 or 5 fields after 'p' (subject, tenant, "
                       f"pattern, effect[, reason]), got {len(fields) - 1}{_comma_hint(fields)}")
        return None
    subject, tenant, text, effect = fields[1:5]
    reason = fields[5] if len(fields) == 6 else ""
    if not _check_names(subject, tenant, file, line, reader):
        return None
    if effect not in EFFECTS:
        hint = _comma_hint(fields) if text.startswith(REGEX_PREFIX) else ""
        import difflib  # only on the error path: keep start-up lean

        close = difflib.get_close_matches(effect.lower(), EFFECTS, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        reader.problem(file, line, f"unknown effect {effect!r} (expected allow, sandbox, ask "
                       f"or deny){guess}{hint}")
        return None
    try:
        pattern = compile_pattern(text)
    except PatternError as exc:
        reader.problem(file, line, str(exc))
        return None
    return Rule(subject, tenant, pattern, effect, reason, file, line, order)


def _check_names(subject: str, tenant: str, file: str, line: int, reader: _Reader) -> bool:
    if not subject or "*" in subject:
        reader.problem(file, line, f"subject {subject!r} must be a subject or role name "
                       "(there is no wildcard subject: give the rule to a role)")
        return False
    if not tenant or ("*" in tenant and tenant != "*"):
        reader.problem(file, line, f"tenant {tenant!r} must be a tenant name or '*'")
        return False
    return True


def read_policy_set(directory: Path) -> tuple[PolicySource | None, list[Problem]]:
    """Read and validate a set, collecting *every* problem (``policy lint`` shows them all)."""
    reader = _Reader()
    if not directory.is_dir():
        reader.problem(directory, None, "policy set directory not found")
        return None, reader.problems
    check_model(directory / MODEL_FILE, reader)
    file = directory / POLICY_FILE
    try:
        if file.stat().st_size > MAX_POLICY_BYTES:
            reader.problem(file, None, f"larger than {MAX_POLICY_BYTES} bytes")
            return None, reader.problems
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        reader.problem(file, None, "missing policy.csv")
        return None, reader.problems
    except (OSError, UnicodeDecodeError) as exc:
        reader.problem(file, None, f"cannot read policy.csv: {exc}")
        return None, reader.problems
    empty = PolicySource(directory, (), (), everyone=is_baseline(directory))
    return _read_rows(text, empty, reader)


def is_baseline(directory: Path) -> bool:
    """Whether ``directory`` is the packaged baseline set (the one whose rules bind
    every subject): that directory itself, not a copy of it."""
    from shellgate.config import BASELINE_POLICY_SET, packaged_policy_set

    shipped = packaged_policy_set(BASELINE_POLICY_SET)
    return shipped is not None and os.path.realpath(directory) == os.path.realpath(shipped)


def read_policy_text(
    model_conf: str, policy_csv: str, *, label: str
) -> tuple[PolicySource | None, list[Problem]]:
    """Read a set from its two texts (a policy store's rows), exactly as from files.

    Problems and rule references name ``<label>/model.conf`` and
    ``<label>/policy.csv:<line>``, as for a file set of that name.
    """
    reader = _Reader()
    check_model_text(model_conf, f"{label}/{MODEL_FILE}", reader)
    if len(policy_csv.encode("utf-8", "surrogatepass")) > MAX_POLICY_BYTES:
        reader.problem(f"{label}/{POLICY_FILE}", None, f"larger than {MAX_POLICY_BYTES} bytes")
        return None, reader.problems
    return _read_rows(policy_csv, PolicySource(Path(label), (), (), label), reader)


def _read_rows(
    text: str, empty: PolicySource, reader: _Reader
) -> tuple[PolicySource | None, list[Problem]]:
    """The rows of ``policy.csv`` (its text) into ``empty``'s set, or every problem."""
    file = empty.rule_file
    rules: list[Rule] = []
    links: list[Link] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            fields = _fields(stripped)
        except csv.Error as exc:
            reader.problem(file, line, f"not a valid CSV row: {exc}")
            continue
        kind = fields[0] if fields else ""
        if kind == "p":
            rule = _policy_row(fields, file, line, len(rules), reader)
            if rule is not None:
                rules.append(rule)
        elif kind == "g":
            if len(fields) != 4:
                reader.problem(file, line, "a g row has 3 fields after 'g' (subject, role, "
                               f"tenant), got {len(fields) - 1}")
            elif _check_names(fields[1], fields[3], file, line, reader) and _check_names(
                fields[2], fields[3], file, line, reader
            ):
                links.append(Link(fields[1], fields[2], fields[3], file, line))
        else:
            reader.problem(file, line, f"unknown row type {kind!r} (expected 'p' or 'g')")
    if reader.problems:
        return None, reader.problems
    return PolicySource(
        empty.directory, tuple(rules), tuple(links), empty.label, empty.everyone
    ), []


def load_policy_set(directory: Path) -> PolicySource:
    """Load a set or raise :class:`PolicyError` naming the first problem's file and line."""
    source, problems = read_policy_set(directory)
    if source is None:
        raise PolicyError(str(problems[0]))
    return source


def load_policy_text(model_conf: str, policy_csv: str, *, label: str) -> PolicySource:
    """:func:`read_policy_text`, raising :class:`PolicyError` for the first problem."""
    source, problems = read_policy_text(model_conf, policy_csv, label=label)
    if source is None:
        raise PolicyError(str(problems[0]))
    return source
