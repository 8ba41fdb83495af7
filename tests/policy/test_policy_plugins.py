"""Plugins load from the `shellgate` entry-point group, only by name, failing closed."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellgate.config import Config
from shellgate.decider import Decider
from shellgate.errors import PluginError
from tests.policy.policy_helpers import call, write_set

PLUGIN_CODE = '''
from shellgate.hookspecs import hookimpl
from shellgate.models import Decision

class NoCurl:
    @hookimpl
    def shellgate_check(self, call, segment):
        if segment.argv[:1] == ("ls",):
            return Decision(effect="deny", reason="no ls today", layer="nocurl")
        return None

class Crashes:
    @hookimpl
    def shellgate_check(self, call, segment):
        raise RuntimeError("boom")

class Junk:
    @hookimpl
    def shellgate_check(self, call, segment):
        return "allow"

class Misspelled:
    @hookimpl
    def shellgate_chek(self, call, segment):
        return None

class CannotStart:
    def __init__(self):
        raise OSError("no licence server")

class PlainExecute:
    """Meant to move every call to bwrap, but a plain hookimpl is never called."""
    @hookimpl
    def shellgate_execute(self, plan):
        plan["executor"] = "bwrap"

class OldStyleExecute:
    @hookimpl(hookwrapper=True)
    def shellgate_execute(self, plan):
        outcome = yield
        return outcome

class WrapperCheck:
    @hookimpl(wrapper=True)
    def shellgate_check(self, call, segment):
        return (yield)
'''

ENTRY_POINTS = """
[shellgate]
nocurl = sgplugin_demo:NoCurl
crashes = sgplugin_demo:Crashes
junk = sgplugin_demo:Junk
misspelled = sgplugin_demo:Misspelled
cannot-start = sgplugin_demo:CannotStart
missing-module = sgplugin_nowhere:Thing
plain-execute = sgplugin_demo:PlainExecute
old-style-execute = sgplugin_demo:OldStyleExecute
wrapper-check = sgplugin_demo:WrapperCheck
"""


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[Path]:
    site = tmp_path / "site"
    dist = site / "sgplugin_demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sgplugin-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    (site / "sgplugin_demo.py").write_text(PLUGIN_CODE)
    sys.path.insert(0, str(site))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("sgplugin_demo", None)


def decider(root: Path, *plugins: str) -> Decider:
    policy = write_set(root, "p, agent, *, ls *, allow\n", name="pol")
    base = Config()
    return Decider(base.model_copy(update={"policy": base.policy.model_copy(
        update={"paths": (policy,), "plugins": plugins})}))


def test_a_named_plugin_runs_after_the_built_in_layers(installed: Path) -> None:
    d = decider(installed, "nocurl")
    registered = [i.plugin_name for i in d.pm.hook.shellgate_check.get_hookimpls()]
    assert registered == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root",
                          "nocurl"]
    verdict = d.decide(call(command="ls -la"))
    assert verdict.effect == "deny"
    assert verdict.decision.reason == "no ls today"


def test_installed_plugins_are_not_loaded_unless_named(installed: Path) -> None:
    d = decider(installed)
    assert "nocurl" not in {name for name, _ in d.pm.list_name_plugin()}
    assert d.decide(call(command="ls -la")).effect == "allow"


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        pytest.param("crashes", "policy layer 'crashes' failed (RuntimeError: boom)", id="raises"),
        pytest.param("junk", "policy layer 'junk' returned str", id="junk"),
    ],
)
def test_a_broken_plugin_fails_closed_naming_itself(installed: Path, name: str,
                                                    needle: str) -> None:
    verdict = decider(installed, name).decide(call(command="ls"))
    assert verdict.effect == "deny"
    assert needle in verdict.decision.reason


@pytest.mark.parametrize(
    ("names", "needle"),
    [
        pytest.param(("nope",), "unknown plugin 'nope'", id="unknown"),
        pytest.param(("nocurl", "nocurl"), "configured twice", id="duplicate"),
        pytest.param(("cannot-start",), "cannot be created: OSError: no licence server",
                     id="constructor-fails"),
        pytest.param(("missing-module",), "cannot be loaded: ModuleNotFoundError",
                     id="import-fails"),
    ],
)
def test_plugin_problems_stop_start_up(installed: Path, names: tuple[str, ...],
                                       needle: str) -> None:
    with pytest.raises(PluginError, match=needle):
        decider(installed, *names)


def test_a_misspelled_hook_is_a_start_up_error(installed: Path) -> None:
    with pytest.raises(PluginError, match=r"plugin 'misspelled' cannot be registered.*"
                       r"shellgate_chek"):
        decider(installed, "misspelled")


MISDECLARED = [
    pytest.param("plain-execute", r"its shellgate_execute is a plain @hookimpl, which the gate "
                 r"never calls.*declare it @hookimpl\(wrapper=True\)", id="plain-execute"),
    pytest.param("old-style-execute", r"its shellgate_execute is declared hookwrapper=True.*"
                 r"declare it @hookimpl\(wrapper=True\)", id="hookwrapper-execute"),
    pytest.param("wrapper-check", r"its shellgate_check is declared as a wrapper",
                 id="wrapper-check"),
]


@pytest.mark.parametrize(("name", "needle"), MISDECLARED)
def test_a_misdeclared_hook_is_a_start_up_error(installed: Path, name: str, needle: str) -> None:
    with pytest.raises(PluginError, match=rf"plugin '{name}' cannot be registered: {needle}"):
        decider(installed, name)


@pytest.mark.parametrize(("name", "needle"), MISDECLARED)
def test_register_refuses_a_misdeclared_hook_and_leaves_nothing_behind(
    installed: Path, name: str, needle: str
) -> None:
    d = decider(installed)
    sgplugin_demo = importlib.import_module("sgplugin_demo")  # written by the fixture
    before = d.pm.list_name_plugin()
    cls = {"plain-execute": sgplugin_demo.PlainExecute,
           "old-style-execute": sgplugin_demo.OldStyleExecute,
           "wrapper-check": sgplugin_demo.WrapperCheck}[name]
    with pytest.raises(PluginError, match=rf"plugin 'mine' cannot be registered: {needle}"):
        d.register(cls(), name="mine")
    assert d.pm.list_name_plugin() == before
    assert d.layer_names == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root"]


def test_register_names_the_plugin_for_a_misspelled_hook(installed: Path) -> None:
    d = decider(installed)
    sgplugin_demo = importlib.import_module("sgplugin_demo")
    with pytest.raises(PluginError, match=r"plugin 'typo' cannot be registered.*shellgate_chek"):
        d.register(sgplugin_demo.Misspelled(), name="typo")
    assert d.pm.get_plugin("typo") is None
