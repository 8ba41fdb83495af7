"""Where this installation's ``sg-exec`` helper is.

The build hook (``hatch_build.py``) compiles the helper in a temporary build
directory and puts it into the wheel at ``shellgate/executors/_helper/sg-exec``:

- a wheel install: the file lies next to this package's modules;
- an editable install (``pip install -e .``, as ``make`` does): the package is
  imported from ``src/``, but the editable wheel installs the helper under
  site-packages, recorded in the distribution's ``RECORD``.

A helper placed next to the modules by hand (a copy in a work tree) wins over
the recorded one. The recorded one is used only when the distribution is an
editable install of *this* source tree, so a checkout run through ``PYTHONPATH``
never picks up another checkout's helper. Whatever is found is then vetted by
``_hardening`` (owner, mode, a probe run); without one the gate hardens with
``setpriv`` + ``prlimit``.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

PACKAGED = Path(__file__).parent / "_helper" / "sg-exec"
RECORDED_AS = "shellgate/executors/_helper/sg-exec"
#: The project root of a ``src/`` layout checkout: src/shellgate/executors/ -> root.
SOURCE_ROOT = Path(__file__).resolve().parents[3]


def _editable_of_this_tree(dist: metadata.Distribution) -> bool:
    try:
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except (OSError, ValueError):
        return False
    if not isinstance(info, dict) or not info.get("dir_info", {}).get("editable"):
        return False
    url = info.get("url", "")
    if not isinstance(url, str) or urlsplit(url).scheme != "file":
        return False
    try:
        return Path(unquote(urlsplit(url).path)).resolve() == SOURCE_ROOT
    except OSError:
        return False


def locate_helper() -> Path:
    """The helper's path (which may not exist: then the gate uses setpriv)."""
    if PACKAGED.exists():
        return PACKAGED
    try:
        dist = metadata.distribution("shellgate")
    except metadata.PackageNotFoundError:
        return PACKAGED
    if not _editable_of_this_tree(dist):
        return PACKAGED
    for file in dist.files or ():
        if file.as_posix() == RECORDED_AS:
            return Path(str(file.locate()))
    return PACKAGED
