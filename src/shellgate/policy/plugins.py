"""Third-party layers from the ``shellgate`` entry-point group, loaded only by name.

Nothing is loaded because it is installed: only the names in ``[policy] plugins``,
in config order. An entry point may name a class (instantiated with no arguments),
an instance or a module carrying ``@hookimpl`` functions. A name with no entry
point, a duplicate name, or an object that fails to import, instantiate or register
is a :class:`~shellgate.errors.PluginError` at start-up — a configured guard that
silently is not there would be worse than no start.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

from shellgate.errors import PluginError
from shellgate.hookspecs import PROJECT

if TYPE_CHECKING:
    from importlib import metadata

GROUP = PROJECT  # the entry-point group: [project.entry-points.shellgate]


def _entry_points() -> dict[str, metadata.EntryPoint]:
    from importlib import metadata  # ~40 ms: only paid when a plugin is configured

    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)  # first on sys.path wins, as for imports
    return found


def load_plugin(ep: metadata.EntryPoint) -> object:
    """Import one entry point and turn it into a plugin object."""
    try:
        obj = ep.load()
    except Exception as exc:  # any import-time failure is the plugin's, reported by name
        raise PluginError(f"plugin '{ep.name}' ({ep.value}) cannot be loaded: "
                          f"{type(exc).__name__}: {exc}") from exc
    if inspect.isclass(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise PluginError(f"plugin '{ep.name}' ({ep.value}) cannot be created: "
                              f"{type(exc).__name__}: {exc}") from exc
    return obj


def register_plugins(pm: pluggy.PluginManager, names: Sequence[str]) -> list[str]:
    """Register the named plugins on ``pm`` in order; returns their names."""
    if not names:
        return []
    available = _entry_points()
    registered: list[str] = []
    for name in names:
        if name in registered:
            raise PluginError(f"plugin '{name}' is configured twice")
        ep = available.get(name)
        if ep is None:
            known = ", ".join(sorted(available)) or "none installed"
            raise PluginError(f"unknown plugin '{name}': no entry point of that name in group "
                              f"'{GROUP}' ({known})")
        plugin = load_plugin(ep)
        try:
            pm.register(plugin, name=name)
            # A misspelled hook (``shellgate_chek``) would be a guard that never runs:
            # pluggy reports it here, and we report it as this plugin's start-up error.
            pm.check_pending()
        except Exception as exc:  # pluggy's ValueError / PluginValidationError
            raise PluginError(f"plugin '{name}' cannot be registered: {exc}") from exc
        registered.append(name)
    return registered
