"""Programs the gate itself runs, looked up where no sandboxed call can plant them.

The gate runs ``bwrap``, the shell and (without the sg-exec helper) ``setpriv``
and ``prlimit`` by name, from its own ``PATH``. That ``PATH`` often holds a
directory inside the workspace — an activated virtualenv, ``uv run``, ``npm
run``'s ``node_modules/.bin``, direnv's ``PATH_add``, a relative entry — and a
sandboxed call may write the workspace. A ``bwrap`` planted there would make
every later sandbox decision run unconfined, a planted shell would run every
allowed call. So the lookup skips relative entries and entries inside a root a
sandboxed call can write (the workspace, ``[sandbox] writable_roots``), and a
program whose real path lies in one. An absolute path in the config is the
admin's own choice and is taken as written.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence


def writable_roots(workspace: str, extra: Sequence[object]) -> tuple[str, ...]:
    """The canonical roots a sandboxed call can write: the workspace and ``extra``."""
    return tuple(os.path.realpath(str(root)) for root in (workspace, *extra))


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def find_program(name: str, untrusted: Sequence[str]) -> str | None:
    """``name`` as ``shutil.which`` finds it, but never in or through ``untrusted``
    (canonical roots) nor through a relative ``PATH`` entry; ``None`` if nowhere else."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    if os.sep in name:  # relative to the gate's current directory: not a trusted place
        return None
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(entry) or _inside(os.path.realpath(entry), untrusted):
            continue
        found = shutil.which(name, path=entry)
        if found is not None and not _inside(os.path.realpath(found), untrusted):
            return found
    return None
