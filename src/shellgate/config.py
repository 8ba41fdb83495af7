"""Configuration: one TOML file, overridden by ``SHELLGATE_<SECTION>__<KEY>``.

Unknown keys are errors at every level (a misspelled ``defualt = "allow"`` must
never be silently ignored), in the file and in the environment. Every limit is
finite and named with its unit. Every path-valued key is listed once, in
:data:`PATH_KEYS`, and :func:`_rebase` is the one place that reads a relative path
in the file against the file's directory (values from the environment or from
``load_config(**overrides)`` stay relative to the current directory). With no
``[policy] paths`` anywhere, the packaged default policy set is used, never a
``policies/default`` that happens to be in the current directory.

The environment overlay is done here rather than by pydantic-settings: importing
that package cost ~110 ms of every cold ``shellgate check`` (measured; the target
is 400 ms in all), for a dozen lines of behaviour: ``SHELLGATE_A__B=v`` sets
``[a] b = v``; a value that looks like a JSON list or object is parsed as JSON;
anything else is a string that pydantic coerces (``"7000"`` -> 7000). Names
without ``__`` (``SHELLGATE_CONFIG``, the ``SHELLGATE_*`` facts commands see) are
not configuration.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from shellgate.errors import ConfigError
from shellgate.models import Effect, ExecutorKind, SandboxMode

CONFIG_ENV = "SHELLGATE_CONFIG"
DEFAULT_POLICY_SET = "default"
#: The packaged set loaded under every configuration unless ``[policy] baseline = false``.
BASELINE_POLICY_SET = "baseline"


def packaged_policy_set(name: str = DEFAULT_POLICY_SET) -> Path | None:
    """The policy set ``name`` shipped with shellgate, or None when this copy has none.

    A wheel carries ``policies/`` inside the package (``shellgate/policies/<name>``);
    a source checkout has it next to ``src/``. The current directory is never
    searched: a repository an agent works in must not choose the gate's policy.
    """
    package = Path(__file__).resolve().parent
    for candidate in (package / "policies" / name, package.parent.parent / "policies" / name):
        if (candidate / "policy.csv").is_file() and (candidate / "model.conf").is_file():
            return candidate
    return None


def _check_store(value: object) -> object:
    """``""`` is no store; anything else must be a store URL (checked, never opened)."""
    if value == "" or value is None:
        return None
    if isinstance(value, str):
        from shellgate.errors import StoreError
        from shellgate.store.db import parse_url

        try:
            parse_url(value)
        except StoreError as exc:
            raise ValueError(str(exc)) from None
    return value


def _default_policy_paths() -> tuple[Path, ...]:
    # When even the packaged set is missing, name where it should be: the loader's
    # "policy set directory not found" then points at the broken installation.
    found = packaged_policy_set()
    if found is None:
        found = Path(__file__).resolve().parent / "policies" / DEFAULT_POLICY_SET
    return (found,)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Section):
    """Resource limits applied to every command (``ulimit``-style, per process)."""

    open_files: int = Field(1024, gt=0)
    processes: int = Field(4096, gt=0)  # RLIMIT_NPROC counts the whole uid: keep it generous
    cpu_seconds: int = Field(3600, gt=0)
    file_size_bytes: int = Field(8 * 1024**3, gt=0)
    address_space_bytes: int = Field(16 * 1024**3, gt=0)


class ExecutorConfig(_Section):
    kind: ExecutorKind = "local"
    workspace: Path = Path(".")
    timeout_ms: int = Field(120_000, gt=0)
    max_timeout_ms: int = Field(600_000, gt=0)
    max_output_bytes: int = Field(64_000, gt=0)
    max_spill_bytes: int = Field(64 * 1024**2, ge=0)
    spill_budget_bytes: int = Field(1024**3, ge=0)  # all spill files of one gate together
    grace_ms: int = Field(3000, ge=0)
    max_tasks: int = Field(10, gt=0)
    shell: str = "bash"
    scrub_env: tuple[str, ...] = ()  # extra variable names (or fnmatch patterns) removed
    drop_capabilities: bool = True  # as root, the local executor drops the bounding set
    limits: Limits = Limits()


class SandboxConfig(_Section):
    mode: SandboxMode = "workspace-write"
    network: bool = False
    deny_read: tuple[str, ...] = ()
    writable_roots: tuple[Path, ...] = ()
    escalation: bool = True
    bwrap_path: str = "bwrap"
    seccomp: bool = True
    allow_without_seccomp: bool = False


class PolicyConfig(_Section):
    #: Unset: the packaged default set (see :func:`packaged_policy_set`).
    paths: tuple[Path, ...] = Field(default_factory=_default_policy_paths)
    subject: str = "agent"
    tenant: str = "default"
    #: The closing default, for segments no layer decided: ``sandbox`` (run them
    #: confined, asking only where they cannot be), ``ask`` or ``deny``; never ``allow``.
    #: Unset (``None``): see :attr:`closing_default`.
    default: Effect | None = None
    #: The packaged baseline set (catastrophic denies) stays loaded under every
    #: listed set; only ``false`` turns it off (docs/policies.md).
    baseline: bool = True
    plugins: tuple[str, ...] = ()
    plugin_timeout_ms: int = Field(1000, gt=0)
    protected_paths: tuple[str, ...] = ()  # added to the built-in protected paths
    secret_paths: tuple[str, ...] = ()  # added to the built-in secrets (asked on read, masked)
    #: Places that run code later (docs/policies.md): writes denied / asked whatever
    #: the rules say. Unset: the built-in lists (shellgate.policy.later_code); set:
    #: replaced as a whole. ``~/`` entries are in the home directory.
    run_later_paths: tuple[str, ...] | None = None
    run_later_ask_paths: tuple[str, ...] | None = None
    max_command_bytes: int = Field(100_000, gt=0)
    max_segments: int = Field(64, gt=0)
    max_depth: int = Field(16, gt=0)
    max_syntax_nodes: int = Field(10_000, gt=0)  # bounds analysis time (~7 µs a node)
    #: A database of policy sets (docs/fleet.md): ``sqlite:…`` or ``postgresql://…``.
    store: str | None = None
    #: The store's sets in force, in order (empty: every set in the store, by name).
    store_sets: tuple[str, ...] = ()
    #: How often a gate looks for a new policy where nothing notifies it (SQLite
    #: stores, policy files; 0: only on SIGHUP); PostgreSQL also listens.
    reload_poll_ms: int = Field(1000, ge=0)

    @field_validator("store", mode="before")
    @classmethod
    def _store_url(cls, value: object) -> object:
        return _check_store(value)

    @property
    def closing_default(self) -> Effect:
        """The closing default in force: ``default`` where set; unset, ``sandbox`` with
        the packaged default set alone (it is written for it) and ``ask`` with sets
        an admin names or a store (docs/configuration.md, "Choices made where the spec
        is silent")."""
        if self.default is not None:
            return self.default
        packaged = packaged_policy_set()  # canonical: no symlink on its way
        # Compared as written (made absolute), not through symlinks: a link of the
        # admin's names the admin's own set, which they may point elsewhere under a
        # running gate (live reload swaps the rules, not this default).
        alone = (
            self.store is None
            and packaged is not None
            and [os.path.abspath(p) for p in self.paths] == [str(packaged)]
        )
        return "sandbox" if alone else "ask"

    @field_validator("default")
    @classmethod
    def _default_not_allow(cls, value: Effect | None) -> Effect | None:
        if value == "allow":
            raise ValueError(
                "the closing default must be 'sandbox', 'ask' or 'deny', never 'allow'"
            )
        return value


class ApprovalConfig(_Section):
    mode: Literal["deny", "prompt", "allow", "queue"] = "deny"
    timeout_ms: int = Field(300_000, gt=0)
    allow_session: bool = False
    #: How long an approval given out of band (``gate.decide`` → ``gate.approve``)
    #: stays good for the call it covers.
    resume_ttl_ms: int = Field(3_600_000, gt=0)
    #: ``mode = "queue"``: the database holding pending approvals (docs/fleet.md).
    store: str | None = None
    #: Refuse approvals that name nobody (pydantic-ai's ``DeferredToolResults(approvals=
    #: {id: True})``): every ask then needs a named person (docs/integrations.md).
    require_named: bool = False

    @field_validator("store", mode="before")
    @classmethod
    def _store_url(cls, value: object) -> object:
        return _check_store(value)

    @model_validator(mode="after")
    def _queue_needs_store(self) -> ApprovalConfig:
        if self.mode == "queue" and self.store is None:
            raise ValueError("mode 'queue' needs [approval] store (sqlite:… or postgresql://…)")
        return self


class AuditConfig(_Section):
    path: Path | None = Path("shellgate-audit.jsonl")  # "" disables the file (None)
    fsync: bool = False  # also survive a kernel crash or power loss; one disk flush per record
    #: A database instead of the file (docs/fleet.md): ``sqlite:…`` or ``postgresql://…``.
    store: str | None = None
    #: The chain's name in the store: one table holds many logs, each its own chain.
    log: str = Field("default", min_length=1, max_length=200)

    @field_validator("path", mode="before")
    @classmethod
    def _empty_disables(cls, value: object) -> object:
        # Path("") is Path("."): the empty string must mean "no file", never the cwd.
        return None if value == "" else value

    @field_validator("store", mode="before")
    @classmethod
    def _store_url(cls, value: object) -> object:
        return _check_store(value)

    @model_validator(mode="after")
    def _one_destination(self) -> AuditConfig:
        if self.store is not None and "path" in self.model_fields_set and self.path is not None:
            raise ValueError("set either [audit] path or [audit] store, not both")
        return self


class ConsoleConfig(_Section):
    """``shellgate serve``: the web console (docs/console.md)."""

    listen: str = "127.0.0.1:8470"  # [HOST:]PORT
    allow_remote: bool = False  # may it listen on a non-loopback address?
    tokens_file: Path | None = None  # login tokens: "TOKEN PERSON" a line, mode 0600
    session_ttl_ms: int = Field(8 * 3_600_000, gt=0)  # a login lasts this long


class ObservabilityConfig(_Section):
    """Logs, spans (docs/operations.md); metrics are the console's ``/metrics``."""

    log_format: Literal["text", "json"] = "text"  # json: one object a line, with call_id
    otel: bool = False  # an OpenTelemetry span per call (needs an SDK configured by the host)


class McpConfig(_Section):
    """``shellgate mcp --http``: who may connect, and from where (docs/mcp.md)."""

    tokens_file: Path | None = None  # bearer tokens: "TOKEN SUBJECT TENANT" lines
    allow_remote: bool = False  # may --http listen on a non-loopback address?
    max_sessions: int = Field(100, gt=0)  # open MCP sessions, all principals together
    session_idle_timeout_ms: int = Field(1_800_000, gt=0)  # an idle session ends (tasks stop)


class Config(BaseModel):
    """The whole deployment's configuration (see ``docs/configuration.md``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    #: Where this config came from (set by load_config, never read from the file):
    #: the protected-paths layer keeps commands from rewriting it.
    config_file: Path | None = None
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)

    @property
    def default_policy(self) -> Path | None:
        """The packaged policy set in use because no ``[policy] paths`` was given, if so."""
        if "paths" in self.policy.model_fields_set or len(self.policy.paths) != 1:
            return None
        return self.policy.paths[0]

    @property
    def baseline_policy(self) -> Path | None:
        """The packaged baseline set, loaded under every listed set, unless
        ``[policy] baseline = false`` (``None`` then). A copy without one names
        where it should be, so loading it fails closed, naming the broken install."""
        if not self.policy.baseline:
            return None
        found = packaged_policy_set(BASELINE_POLICY_SET)
        if found is None:
            found = Path(__file__).resolve().parent / "policies" / BASELINE_POLICY_SET
        return found

    def policy_paths(self, paths: tuple[Path, ...] | None = None) -> tuple[Path, ...]:
        """The file sets a decider loads: ``paths`` (default: ``[policy] paths``), then
        the baseline (unless off or already listed). Last, so that where a listed set
        denies too, its own rule and reason are the ones reported (the strictest
        answer wins either way)."""
        listed = self.policy.paths if paths is None else paths
        baseline = self.baseline_policy
        if baseline is None or any(_same_dir(p, baseline) for p in listed):
            return tuple(listed)
        return (*listed, baseline)


def _same_dir(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


ENV_PREFIX = "SHELLGATE_"


def _env_overlay(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """Nested settings from ``SHELLGATE_<SECTION>__<KEY>`` variables, and their names."""
    overlay: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = tuple(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
        if not all(path):
            raise ConfigError(f"environment variable {name}: empty key in its name")
        value: Any = raw
        if raw.strip().startswith(("[", "{")):
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"environment variable {name}: not valid JSON: {exc}") from exc
        node = overlay
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment variable {name}: '{part}' is not a section")
            node = child
        node[path[-1]] = value
        names[path] = name
    return overlay, names


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


#: Every path-valued key: (section, key) -> how a relative value in the file is read.
#: "path" / "paths": against the file's directory (``~`` expands first);
#: "program": a bare name is looked up on PATH when used, a relative path with a
#: slash is against the file's directory. ``sandbox.deny_read`` and
#: ``policy.protected_paths`` are not here: they name paths inside the workspace
#: and are read against it where they are used (docs/sandbox.md).
PATH_KEYS: dict[tuple[str, str], Literal["path", "paths", "program", "store"]] = {
    ("executor", "workspace"): "path",
    ("executor", "shell"): "program",
    ("sandbox", "writable_roots"): "paths",
    ("sandbox", "bwrap_path"): "program",
    ("policy", "paths"): "paths",
    ("audit", "path"): "path",
    ("mcp", "tokens_file"): "path",
    ("console", "tokens_file"): "path",
    # "store": a relative SQLite path (sqlite:rel.db) is against the file's directory
    ("policy", "store"): "store",
    ("audit", "store"): "store",
    ("approval", "store"): "store",
}


def _rebased(value: object, base: Path, kind: str, where: str, source: str) -> object:
    """``value`` read against ``base``; anything not a string is left for pydantic."""
    if not isinstance(value, str):
        return value
    if not value:
        if where == "audit.path":
            return value  # documented: empty disables the audit log
        # Path("") is Path("."): an empty entry would silently mean "the whole directory".
        raise ConfigError(f"{source}: invalid value for '{where}': empty path")
    if kind == "program" and "/" not in value:
        return value  # looked up on PATH
    if kind == "store":
        rest = value.removeprefix("sqlite:")
        if rest == value or rest.startswith("/") or not rest:
            return value  # PostgreSQL, an absolute SQLite path, or an error for parse_url
        return f"sqlite://{base / Path(rest).expanduser()}"
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def _refuse_empty_paths(overlay: dict[str, Any], names: dict[tuple[str, ...], str]) -> None:
    """An empty path from a variable is an error, as in the file: ``Path("")`` is
    the current directory (``SHELLGATE_SANDBOX__WRITABLE_ROOTS='[""]'`` made it
    writable; an empty ``SHELLGATE_EXECUTOR__WORKSPACE`` made it the workspace)."""
    for (section, key), _kind in PATH_KEYS.items():
        table = overlay.get(section)
        if not isinstance(table, dict) or key not in table or (section, key) == ("audit", "path"):
            continue
        value = table[key]
        if "" in (value if isinstance(value, list) else [value]):
            raise ConfigError(
                f"environment variable {names[(section, key)]}: "
                f"invalid value for '{section}.{key}': empty path"
            )


def _rebase(data: dict[str, Any], base: Path, source: str) -> dict[str, Any]:
    """Read every relative path of the file (:data:`PATH_KEYS`) against ``base``."""
    for (section, key), kind in PATH_KEYS.items():
        table = data.get(section)
        if not isinstance(table, dict) or key not in table:
            continue
        where = f"{section}.{key}"
        value = table[key]
        if kind == "paths" and isinstance(value, list):
            table[key] = [_rebased(v, base, kind, where, source) for v in value]
        else:
            table[key] = _rebased(value, base, kind, where, source)
    return data


def _section_model(loc: tuple[str, ...]) -> type[BaseModel] | None:
    """The model of the table at ``loc`` (``()`` is the top level), if it is one."""
    model: type[BaseModel] = Config
    for part in loc:
        field: FieldInfo | None = model.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _unknown_key_hint(loc: tuple[str, ...], env_name: str | None) -> str | None:
    """'did you mean …?' for a near miss, else the keys the table takes."""
    import difflib

    model = _section_model(loc[:-1])
    if model is None:
        return None
    known = [name for name in model.model_fields if name != "config_file"]
    near = difflib.get_close_matches(loc[-1], known, n=1)
    if near:
        fixed = (*loc[:-1], near[0])
        if env_name is not None:  # the whole variable, keys below the typo included
            parts = env_name[len(ENV_PREFIX) :].split("__")
            whole = (*fixed, *parts[len(fixed) :])
            return f"did you mean {ENV_PREFIX}{'__'.join(whole).upper()}?"
        return f"did you mean '{'.'.join(fixed)}'?"
    if not loc[:-1]:
        return f"the sections are: {', '.join(known)}"
    return f"[{'.'.join(loc[:-1])}] takes: {', '.join(known)}"


def _describe(
    exc: ValidationError, source: str, env_names: dict[tuple[str, ...], str]
) -> ConfigError:
    first = exc.errors()[0]
    loc = tuple(str(p) for p in first["loc"])
    where = ".".join(loc) or "(top level)"
    env_name = None
    for length in range(len(loc), 0, -1):
        if loc[:length] in env_names:
            env_name = env_names[loc[:length]]
            break
    else:  # an unknown section: the variable's name goes on below the key at fault
        env_name = next((n for p, n in env_names.items() if loc and p[: len(loc)] == loc), None)
    if env_name is not None:
        source = f"environment variable {env_name}"
    if first["type"] == "extra_forbidden":
        return ConfigError(
            f"{source}: unknown key '{where}'", hint=_unknown_key_hint(loc, env_name)
        )
    value = first.get("input")
    # A store URL may carry a password: never echoed.
    shown = f" (got {value!r})" if not isinstance(value, dict) and loc[-1:] != ("store",) else ""
    # pydantic prefixes a validator's own message with "Value error, ": not for people.
    msg = first["msg"].removeprefix("Value error, ")
    hint = None
    if first["type"] in ("tuple_type", "list_type"):
        msg = "expected a list"  # not "a valid tuple": no Python type names
        if env_name is not None:
            hint = f"""a list in a variable is JSON: {env_name}='["{value}"]'"""
    return ConfigError(f"{source}: invalid value for '{where}': {msg}{shown}", hint=hint)


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Config:
    """Load the config file (``path``, else ``$SHELLGATE_CONFIG``, else defaults).

    Precedence: defaults < the file < ``overrides`` (for embedding code and
    tests, section by section) < ``SHELLGATE_<SECTION>__<KEY>`` variables.
    Raises :class:`ConfigError` with one line naming the file (or the variable)
    and the key at fault; for an unknown key its ``hint`` is the nearest known
    key, else the keys of that table.
    """
    chosen = path if path is not None else os.environ.get(CONFIG_ENV)
    data: dict[str, Any] = {}
    source = "configuration"
    if chosen:
        file = Path(chosen)
        source = str(file)
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{file}: cannot read config file: {exc.strerror}") from exc
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
        if "config_file" in data:
            raise ConfigError(f"{file}: unknown key 'config_file'")
        data = _rebase(data, file.resolve().parent, source)
        data["config_file"] = str(file.resolve())
    for key, value in overrides.items():
        data[key] = value
    overlay, env_names = _env_overlay(os.environ)
    if "config_file" in overlay:
        raise ConfigError(f"environment variable {env_names[('config_file',)]}: unknown key")
    _refuse_empty_paths(overlay, env_names)
    data = _merge(data, overlay)
    try:
        return Config(**data)
    except ValidationError as exc:
        raise _describe(exc, source, env_names) from exc
