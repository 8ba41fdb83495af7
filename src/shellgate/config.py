"""Configuration: one TOML file, overridden by ``SHELLGATE_<SECTION>__<KEY>``.

Unknown keys are errors at every level (a misspelled ``defualt = "allow"`` must
never be silently ignored), in the file and in the environment. Every limit is
finite and named with its unit. Relative paths in the file resolve against the
file's directory; without a file, against the current directory.

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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shellgate.errors import ConfigError
from shellgate.models import Effect, ExecutorKind, SandboxMode

CONFIG_ENV = "SHELLGATE_CONFIG"


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
    paths: tuple[Path, ...] = (Path("policies/default"),)
    subject: str = "agent"
    tenant: str = "default"
    default: Effect = "ask"
    plugins: tuple[str, ...] = ()
    plugin_timeout_ms: int = Field(1000, gt=0)
    protected_paths: tuple[str, ...] = ()  # added to the built-in protected paths
    secret_paths: tuple[str, ...] = ()  # added to the built-in secrets (asked on read, masked)
    max_command_bytes: int = Field(100_000, gt=0)
    max_segments: int = Field(64, gt=0)
    max_depth: int = Field(16, gt=0)
    max_syntax_nodes: int = Field(10_000, gt=0)  # bounds analysis time (~7 µs a node)

    @field_validator("default")
    @classmethod
    def _default_not_allow(cls, value: Effect) -> Effect:
        if value == "allow":
            raise ValueError("the closing default must be 'ask' or 'deny', never 'allow'")
        return value


class ApprovalConfig(_Section):
    mode: Literal["deny", "prompt", "allow"] = "deny"
    timeout_ms: int = Field(300_000, gt=0)
    allow_session: bool = False


class AuditConfig(_Section):
    path: Path | None = Path("shellgate-audit.jsonl")
    fsync: bool = False  # also survive a kernel crash or power loss; one disk flush per record


class Config(BaseModel):
    """The whole deployment's configuration (see ``docs/configuration.md``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    executor: ExecutorConfig = ExecutorConfig()
    sandbox: SandboxConfig = SandboxConfig()
    #: Where this config came from (set by load_config, never read from the file):
    #: the protected-paths layer keeps commands from rewriting it.
    config_file: Path | None = None
    policy: PolicyConfig = PolicyConfig()
    approval: ApprovalConfig = ApprovalConfig()
    audit: AuditConfig = AuditConfig()


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


def _resolve(base: Path, path: Path) -> Path:
    return path if path.is_absolute() else (base / path)


def _rebase(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Make the file's relative paths relative to the file, not the cwd."""
    ex = data.get("executor")
    if isinstance(ex, dict) and isinstance(ex.get("workspace"), str):
        ex["workspace"] = str(_resolve(base, Path(ex["workspace"])))
    pol = data.get("policy")
    if isinstance(pol, dict) and isinstance(pol.get("paths"), list):
        pol["paths"] = [
            str(_resolve(base, Path(p))) if isinstance(p, str) else p for p in pol["paths"]
        ]
    aud = data.get("audit")
    if isinstance(aud, dict) and isinstance(aud.get("path"), str) and aud["path"]:
        aud["path"] = str(_resolve(base, Path(aud["path"])))
    return data


def _describe(exc: ValidationError, source: str, env_names: dict[tuple[str, ...], str]) -> str:
    first = exc.errors()[0]
    loc = tuple(str(p) for p in first["loc"])
    where = ".".join(loc) or "(top level)"
    for length in range(len(loc), 0, -1):
        if loc[:length] in env_names:
            source = f"environment variable {env_names[loc[:length]]}"
            break
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'"
    value = first.get("input")
    shown = f" (got {value!r})" if not isinstance(value, dict) else ""
    return f"{source}: invalid value for '{where}': {first['msg']}{shown}"


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Config:
    """Load the config file (``path``, else ``$SHELLGATE_CONFIG``, else defaults).

    Precedence: defaults < the file < ``overrides`` (for embedding code and
    tests, section by section) < ``SHELLGATE_<SECTION>__<KEY>`` variables.
    Raises :class:`ConfigError` with one line naming the file (or the variable)
    and the key at fault.
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
        data = _rebase(data, file.resolve().parent)
        data["config_file"] = str(file.resolve())
    for key, value in overrides.items():
        data[key] = value
    overlay, env_names = _env_overlay(os.environ)
    if "config_file" in overlay:
        raise ConfigError(f"environment variable {env_names[('config_file',)]}: unknown key")
    data = _merge(data, overlay)
    try:
        return Config(**data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source, env_names)) from exc
