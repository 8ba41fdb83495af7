"""The environment a command sees (tools.md, "Process behaviour"): built here for
the executors, and read by the analysis so it knows what `$HOME` and the like hold.

parent environment − credentials − shell start-up hooks
  + model-friendly overrides + trusted caller entries + managed ``SHELLGATE_*``.

Managed facts come last and every other ``SHELLGATE_*`` name is dropped first, so
nothing — not the parent, not a caller — can forge a session or task id.
Variables that make ``bash`` run code before the command (``BASH_ENV``, ``ENV``,
exported functions ``BASH_FUNC_*``, ``SHELLOPTS``/``BASHOPTS``, ``PS4``) are removed
from every source: they would let something other than the analysed string run.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping

CREDENTIAL_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "CREDENTIAL")
#: Names that carry credentials (in a URL's userinfo, a DSN) but no marker above.
CREDENTIAL_NAMES = frozenset(
    {"DATABASE_URL", "REDIS_URL", "MONGODB_URI", "MONGO_URL", "AMQP_URL", "SENTRY_DSN"}
)
#: Name suffixes that mean a credential: ``GITHUB_PAT``, ``SENTRY_DSN``, ``NPM_AUTH``,
#: ``DOCKER_CREDS``, ``SESSION_COOKIE``. Suffixes only, after an underscore, so that
#: ``PATH`` or ``AUTHOR_NAME`` pass.
CREDENTIAL_SUFFIXES = ("_PAT", "_DSN", "_AUTH", "_CREDS", "_COOKIE")
OVERRIDES = {"NO_COLOR": "1", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
_STARTUP_HOOKS = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND")
_MARKERS = re.compile("|".join(CREDENTIAL_MARKERS), re.IGNORECASE)


def is_credential(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether ``name`` looks like it carries a credential (case-insensitive)."""
    upper = name.upper()
    if _MARKERS.search(name) or upper in CREDENTIAL_NAMES or upper.endswith(CREDENTIAL_SUFFIXES):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in extra)


def _runs_code(name: str) -> bool:
    return name in _STARTUP_HOOKS or name.startswith("BASH_FUNC_")


@functools.lru_cache(maxsize=4096)
def _passes(name: str, extra: tuple[str, ...]) -> bool:
    """Whether a parent variable may reach commands (cached: names repeat every call)."""
    return not (is_credential(name, extra) or _runs_code(name) or name.startswith("SHELLGATE_"))


_cache: tuple[dict[bytes, bytes], tuple[str, ...], dict[str, str]] | None = None


def scrubbed_parent(extra_scrub: Iterable[str] = ()) -> dict[str, str]:
    """``os.environ`` minus credentials and start-up hooks, recomputed only on change.

    Copying and decoding ``os.environ`` costs ~30 µs a call; its raw bytes dict
    compares in about one. (``_data`` is CPython's storage behind ``os.environ``;
    without it we simply recompute every time.)
    """
    global _cache
    scrub = tuple(extra_scrub)
    raw = getattr(os.environ, "_data", None)
    if isinstance(raw, dict) and _cache is not None and _cache[1] == scrub and _cache[0] == raw:
        return dict(_cache[2])
    env = {name: value for name, value in os.environ.items() if _passes(name, scrub)}
    if isinstance(raw, dict):
        _cache = (dict(raw), scrub, env)
    return dict(env)


def seen(
    names: Iterable[str], caller: Mapping[str, str], *, extra_scrub: Iterable[str] = ()
) -> dict[str, str]:
    """The values of ``names`` that a command run with ``caller`` entries gets, as
    :func:`build_env` would set them (for the analysis, which expands ``$HOME``…
    as the command will see them); a name it would not set is absent."""
    scrub = tuple(extra_scrub)
    out: dict[str, str] = {}
    for name in names:
        if name in caller and not (_runs_code(name) or name.startswith("SHELLGATE_")):
            out[name] = caller[name]
        elif name in OVERRIDES:
            out[name] = OVERRIDES[name]
        elif name in os.environ and _passes(name, scrub):
            out[name] = os.environ[name]
    return out


def exports(caller: Mapping[str, str], *, extra_scrub: Iterable[str] = ()) -> Callable[[str], bool]:
    """Whether the environment :func:`build_env` makes with ``caller`` has a name."""
    scrub = tuple(extra_scrub)

    def has(name: str) -> bool:
        if name in OVERRIDES or name.startswith("SHELLGATE_"):
            return True  # an override, or managed (some are set on every call)
        if name in caller:
            return not _runs_code(name)
        return name in os.environ and _passes(name, scrub)

    return has


def build_env(
    parent: Mapping[str, str],
    caller: Mapping[str, str],
    managed: Mapping[str, str],
    *,
    extra_scrub: Iterable[str] = (),
) -> dict[str, str]:
    scrub = tuple(extra_scrub)
    if parent is os.environ:
        env = scrubbed_parent(scrub)
    else:
        env = {name: value for name, value in parent.items() if _passes(name, scrub)}
    env.update(OVERRIDES)
    for name, value in caller.items():
        if _runs_code(name) or name.startswith("SHELLGATE_"):
            continue
        env[name] = value
    env.update(managed)
    return env
