"""Which layers a gate runs, in the documented order.

1. input guard (run by :class:`~shellgate.decider.Decider` before parsing)
2. command analysis     3. protected paths     4. protected reads (secrets)
5. repositories (git run in a repository other than the workspace's)
6. casbin rules (the listed sets, the packaged baseline set, a store's sets)
7. write rules (the same sets' ``write:`` rules)
8. workspace root (a write of the workspace itself, or above it, asks)
9. configured plugins   10. closing default (in the engine)

Every failure here (a policy set that does not load, an unknown plugin) raises at
start-up: the gate never runs with a layer silently missing. A policy store that
cannot give a good policy is the one exception: the gate starts and its rules
layer denies every call, naming the problem, until one loads (docs/fleet.md).
"""

from __future__ import annotations

import pluggy

from shellgate.config import Config
from shellgate.policy.builtin import AnalysisLayer
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.plugins import register_plugins
from shellgate.policy.protected import ProtectedPathsLayer
from shellgate.policy.repositories import RepositoriesLayer
from shellgate.policy.secrets import ProtectedReadsLayer
from shellgate.policy.workspace_root import WorkspaceRootLayer
from shellgate.policy.write_rules import WriteRulesLayer


def register_layers(pm: pluggy.PluginManager, config: Config) -> None:
    """Register every layer for ``config`` on ``pm``, in order; fail closed on errors.

    Raises :class:`~shellgate.errors.PolicyError` for a policy set that does not load
    and :class:`~shellgate.errors.PluginError` for a plugin that cannot be loaded.
    """
    pm.register(AnalysisLayer(), name=AnalysisLayer.name)
    config_file = str(config.config_file) if config.config_file else None
    # The baseline set is the gate's own policy too, wherever it is installed.
    baseline = config.baseline_policy
    protected = ProtectedPathsLayer(
        config, config_file=config_file, extra=() if baseline is None else (str(baseline),)
    )
    pm.register(protected, name=protected.name)
    reads = ProtectedReadsLayer(config)
    pm.register(reads, name=reads.name)
    repositories = RepositoriesLayer()
    pm.register(repositories, name=repositories.name)
    pol = config.policy
    # With a store and no explicit [policy] paths, the store alone: the packaged
    # default set is not added (docs/fleet.md).
    listed = () if pol.store is not None and config.default_policy is not None else pol.paths
    # The baseline (catastrophic denies) under whatever is listed or stored, loaded
    # last, unless [policy] baseline = false (docs/policies.md).
    paths = config.policy_paths(listed)
    after = paths[len(listed):]
    rules = CasbinLayer(paths[: len(listed)], store=pol.store, store_sets=pol.store_sets,
                        after=after)
    pm.register(rules, name=rules.name)
    writes = WriteRulesLayer(rules, pol.closing_default)
    pm.register(writes, name=writes.name)
    root = WorkspaceRootLayer()  # the workspace itself, or above it: never sandboxed
    pm.register(root, name=root.name)
    register_plugins(pm, config.policy.plugins)

