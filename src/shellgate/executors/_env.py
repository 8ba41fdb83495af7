"""The environment a command sees (tools.md, "Process behaviour").

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
from collections.abc import Iterable, Mapping

CREDENTIAL_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "CREDENTIAL")
OVERRIDES = {"NO_COLOR": "1", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
_STARTUP_HOOKS = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND")


def is_credential(name: str, extra: Iterable[str] = ()) -> bool:
    upper = name.upper()
    if any(marker in upper for marker in CREDENTIAL_MARKERS):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in extra)


def _runs_code(name: str) -> bool:
    return name in _STARTUP_HOOKS or name.startswith("BASH_FUNC_")


def build_env(
    parent: Mapping[str, str],
    caller: Mapping[str, str],
    managed: Mapping[str, str],
    *,
    extra_scrub: Iterable[str] = (),
) -> dict[str, str]:
    scrub = tuple(extra_scrub)
    env = {
        name: value
        for name, value in parent.items()
        if not is_credential(name, scrub)
        and not _runs_code(name)
        and not name.startswith("SHELLGATE_")
    }
    env.update(OVERRIDES)
    for name, value in caller.items():
        if _runs_code(name) or name.startswith("SHELLGATE_"):
            continue
        env[name] = value
    env.update(managed)
    return env
