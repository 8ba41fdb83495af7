"""Third-party layers from the ``shellgate`` entry-point group, loaded only by name.

Nothing is loaded because it is installed: only the names in ``[policy] plugins``,
in config order. An entry point may name a class (instantiated with no arguments),
an instance or a module carrying ``@hookimpl`` functions. A name with no entry
point, a duplicate name, or an object that fails to import, instantiate or register
is a :class:`~shellgate.errors.PluginError` at start-up — a configured guard that
silently is not there would be worse than no start. So is a hook the gate would
call wrongly or never: a misspelled hook name, a ``shellgate_execute`` that is not
``@hookimpl(wrapper=True)`` (a plain one is never called; pluggy's old-style
``hookwrapper=True`` would get a ``Result`` object, not the ``RunResult``), or a
``shellgate_check`` declared as a wrapper.
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
        register_plugin(pm, load_plugin(ep), name)
        registered.append(name)
    return registered


def register_plugin(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register one plugin object, or raise :class:`PluginError` naming it.

    On any refusal the plugin is unregistered again: the manager is left as it was.
    """
    try:
        pm.register(plugin, name=name)
    except Exception as exc:  # pluggy's ValueError / PluginValidationError
        raise PluginError(f"plugin '{name}' cannot be registered: {exc}") from exc
    try:
        # A misspelled hook (``shellgate_chek``) would be a guard that never runs:
        # pluggy reports it here, and we report it as this plugin's start-up error.
        pm.check_pending()
        problem = _misdeclared(pm, name)
    except Exception as exc:
        pm.unregister(name=name)
        raise PluginError(f"plugin '{name}' cannot be registered: {exc}") from exc
    if problem is not None:
        pm.unregister(name=name)
        raise PluginError(f"plugin '{name}' cannot be registered: {problem}")


def _misdeclared(pm: pluggy.PluginManager, name: str) -> str | None:
    """Why ``name``'s hooks would be called wrongly or never, or ``None`` if they are fine."""
    for impl in pm.hook.shellgate_execute.get_hookimpls():
        if impl.plugin_name != name:
            continue
        if impl.hookwrapper:
            return ("its shellgate_execute is declared hookwrapper=True (pluggy's old-style "
                    "wrapper, handed a Result object, not the RunResult); declare it "
                    "@hookimpl(wrapper=True)")
        if not impl.wrapper:
            return ("its shellgate_execute is a plain @hookimpl, which the gate never calls "
                    "(the call would run as if the plugin were absent); declare it "
                    "@hookimpl(wrapper=True)")
    for impl in pm.hook.shellgate_check.get_hookimpls():
        if impl.plugin_name == name and (impl.wrapper or impl.hookwrapper):
            return ("its shellgate_check is declared as a wrapper; a policy layer is a plain "
                    "@hookimpl returning a Decision or None")
    return None
