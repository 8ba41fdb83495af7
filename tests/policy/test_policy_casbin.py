"""The casbin layer: semantics, RBAC with tenants, several sets, and the pycasbin hazards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest

from shellgate.config import Config, load_config
from shellgate.decider import Decider
from shellgate.errors import ConfigError
from shellgate.policy.casbin_layer import CasbinLayer
from shellgate.policy.loader import load_policy_set
from shellgate.policy.reference import ReferenceEnforcer
from tests.policy.policy_helpers import call, seg, write_set

ROOT = Path(__file__).resolve().parents[2]


def layer(tmp_path: Path, *sets: str) -> CasbinLayer:
    return CasbinLayer([write_set(tmp_path, rows, name=f"s{i}") for i, rows in enumerate(sets)])


def effect(lay: CasbinLayer, segment: object, **kw: str) -> str | None:
    decision = lay.shellgate_check(call(**kw), segment)  # type: ignore[arg-type]
    return None if decision is None else decision.effect


def test_decision_names_layer_and_rule_by_file_and_line(tmp_path: Path) -> None:
    lay = layer(tmp_path, "# header\np, agent, *, ls *, allow\n")
    decision = lay.shellgate_check(call(), seg("ls", "-la"))
    assert decision is not None
    assert (decision.effect, decision.layer) == ("allow", "casbin")
    assert decision.rule == "s0/policy.csv:2"  # relative to its set: no host path


def test_allow_matches_only_argv_never_a_peeled_form(tmp_path: Path) -> None:
    lay = layer(tmp_path, "p, agent, *, ls *, allow\n")
    assert effect(lay, seg("sudo", "ls", forms=(("ls",),))) is None


def test_deny_and_ask_match_every_form(tmp_path: Path) -> None:
    lay = layer(tmp_path, "p, agent, *, rm *, deny\np, agent, *, curl *, ask\n")
    denied = lay.shellgate_check(call(), seg("sudo", "/bin/rm", "x", forms=(("rm", "x"),)))
    assert denied is not None
    assert denied.effect == "deny"
    assert "read as 'rm x'" in denied.reason
    assert effect(lay, seg("env", "curl", "x", forms=(("curl", "x"),))) == "ask"


def test_strictest_rule_wins_whatever_the_line_order(tmp_path: Path) -> None:
    lay = layer(tmp_path, "p, agent, *, git *, allow\np, agent, *, git push *, ask\n"
                          "p, agent, *, git push --force *, deny\n")
    assert effect(lay, seg("git", "log")) == "allow"
    assert effect(lay, seg("git", "push")) == "ask"
    assert effect(lay, seg("git", "push", "--force", "x")) == "deny"


def test_ask_as_casbin_eft_is_silently_skipped_but_not_here(tmp_path: Path) -> None:
    """The hazard: with `ask` in casbin's eft column a lower allow wins in plain casbin."""
    import casbin

    model = casbin.Enforcer.new_model(text="""
[request_definition]
r = sub, cmd
[policy_definition]
p = sub, cmd, eft
[policy_effect]
e = priority(p.eft) || deny
[matchers]
m = r.sub == p.sub && r.cmd == p.cmd
""")
    naive = casbin.Enforcer(model)
    naive.add_policy("agent", "git push", "ask")
    naive.add_policy("agent", "git push", "allow")
    assert naive.enforce_ex("agent", "git push") == (True, ["agent", "git push", "allow"])
    ours = layer(tmp_path, "p, agent, *, git push, ask\np, agent, *, git push, allow\n")
    assert effect(ours, seg("git", "push")) == "ask"
    ref = ReferenceEnforcer(load_policy_set(tmp_path / "s0"))
    found = ref.best("agent", "default", "git push")
    assert found is not None
    assert found.effect == "ask"


def test_empty_policy_means_no_rule_never_allow(tmp_path: Path) -> None:
    """The hazard: a regexMatch-only model with no p rows allows everything in casbin."""
    import casbin

    model = casbin.Enforcer.new_model(text="""
[request_definition]
r = sub, cmd
[policy_definition]
p = sub, cmd
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = regexMatch(r.sub, p.sub) && regexMatch(r.cmd, p.cmd)
""")
    assert casbin.Enforcer(model).enforce("anyone", "rm -rf /") is True
    empty = layer(tmp_path, "# no rules at all\n")
    assert effect(empty, seg("rm", "-rf", "/")) is None
    assert ReferenceEnforcer(load_policy_set(tmp_path / "s0")).best("x", "t", "rm") is None
    config = Config().model_copy(update={"policy": Config().policy.model_copy(
        update={"paths": (tmp_path / "s0",)})})
    verdict = Decider(config).decide(call(command="ls", subject="stranger"))
    assert verdict.effect == "ask"  # an admin's own set closes with ask: never allow
    assert verdict.decision.layer == "default"


def test_unknown_subject_and_tenant_abstain(tmp_path: Path) -> None:
    lay = layer(tmp_path, "p, agent, web, ls *, allow\n")
    assert effect(lay, seg("ls"), subject="mallory", tenant="web") is None
    assert effect(lay, seg("ls"), subject="agent", tenant="data") is None
    assert effect(lay, seg("ls"), subject="agent", tenant="web") == "allow"


def test_roles_with_tenants_and_inheritance(tmp_path: Path) -> None:
    lay = layer(tmp_path, """
        g, developer, viewer, *
        g, bob, developer, web
        g, carol, viewer, data
        g, alice, admin, *
        g, admin, developer, *
        p, viewer, *, ls *, allow
        p, viewer, data, psql *, ask
        p, developer, *, make *, allow
        p, admin, web, kubectl delete *, allow
    """)
    assert effect(lay, seg("make"), subject="bob", tenant="web") == "allow"
    assert effect(lay, seg("make"), subject="bob", tenant="data") is None  # developer only in web
    assert effect(lay, seg("ls"), subject="bob", tenant="web") == "allow"  # inherited viewer
    assert effect(lay, seg("psql", "db"), subject="carol", tenant="data") == "ask"
    assert effect(lay, seg("ls"), subject="carol", tenant="web") is None
    assert effect(lay, seg("kubectl", "delete", "x"), subject="alice", tenant="web") == "allow"
    assert effect(lay, seg("kubectl", "delete", "x"), subject="alice", tenant="data") is None
    assert effect(lay, seg("make"), subject="alice", tenant="data") == "allow"


def test_several_sets_strictest_across_all_later_sets_cannot_loosen(tmp_path: Path) -> None:
    lay = layer(tmp_path, "p, agent, *, git *, allow\np, agent, *, rm *, deny\n",
                "p, agent, *, git push *, ask\np, agent, *, rm *, allow\n")
    assert effect(lay, seg("git", "log")) == "allow"
    assert effect(lay, seg("git", "push")) == "ask"
    decision = lay.shellgate_check(call(), seg("rm", "x"))
    assert decision is not None
    assert decision.effect == "deny"
    assert decision.rule == "s0/policy.csv:2"  # relative to its set: no host path


def test_ten_thousand_role_links_load_and_first_check_under_a_second(tmp_path: Path) -> None:
    """The hazard: casbin's per-tenant role manager is quadratic in a tenant's links."""
    rows = [f"g, user{i}, role{i % 50}, tenant{i % 2}" for i in range(10_000)]
    rows += [f"p, role{r}, *, tool{r} *, allow" for r in range(50)]
    directory = write_set(tmp_path, "\n".join(rows) + "\n")
    start = time.perf_counter()
    lay = CasbinLayer([directory])
    first = effect(lay, seg("tool7", "x"), subject="user9957", tenant="tenant1")
    elapsed = time.perf_counter() - start
    assert first == "allow"
    assert elapsed < 1.0, f"load + first check took {elapsed:.2f} s"


def test_concurrent_reload_gives_zero_wrong_answers(tmp_path: Path) -> None:
    """Readers check while another thread reloads a set over and over."""
    directory = write_set(tmp_path, "p, agent, *, ls *, allow\np, agent, *, rm *, deny\n")
    lay = CasbinLayer([directory])
    stop = threading.Event()
    wrong: list[str] = []
    checks = [0]

    def reader() -> None:
        while not stop.is_set():
            for segment, want in ((seg("ls", "-l"), "allow"), (seg("rm", "x"), "deny"),
                                  (seg("cat"), None)):
                got = effect(lay, segment)
                checks[0] += 1
                if got != want:
                    wrong.append(f"{segment.command}: {got}")

    threads = [threading.Thread(target=reader) for _ in range(2)]
    # With the default 5 ms switch interval the two spinning readers kept the GIL
    # while the reloader waited for its turn after every file write: 30 reloads took
    # 6 s. Switching more often runs the reloads sooner and interleaves them with
    # more reads, not fewer.
    saved = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    try:
        for thread in threads:
            thread.start()
        for i in range(30):
            # Rewrite the file each time (other rules change; the checked answers do not).
            (directory / "policy.csv").write_text(
                f"p, agent, *, tool{i} *, ask\np, agent, *, ls *, allow\np, agent, *, rm *, deny\n")
            lay.reload()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        sys.setswitchinterval(saved)
    assert wrong == []
    assert checks[0] > 0


def test_a_failed_reload_keeps_the_old_rules(tmp_path: Path) -> None:
    directory = write_set(tmp_path, "p, agent, *, rm *, deny\n")
    lay = CasbinLayer([directory])
    (directory / "policy.csv").write_text("p, agent, *, rm *, dney\n")
    with pytest.raises(Exception, match="unknown effect"):
        lay.reload()
    assert effect(lay, seg("rm", "x")) == "deny"


def test_casbin_switches_are_not_reachable_from_config(tmp_path: Path) -> None:
    config_file = tmp_path / "shellgate.toml"
    config_file.write_text("[policy]\nenable_enforce = false\n")
    with pytest.raises(ConfigError, match=r"unknown key 'policy\.enable_enforce'"):
        load_config(config_file)


def test_the_gate_never_imports_casbin_and_casbin_is_pycasbin() -> None:
    """Deciding uses the index only; casbin (and so enable_enforce) is not even loaded."""
    code = ("import sys; from shellgate.config import Config; from shellgate.decider import "
            "Decider; from shellgate.models import CallInfo\n"
            "d = Decider(Config())\n"
            "v = d.decide(CallInfo(tool='bash', command='ls', subject='agent', tenant='default',"
            " session='s', workdir='/', workspace='/'))\n"
            "print(v.effect, 'casbin' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True)
    assert out.stdout.split() == ["allow", "False"]


def test_no_dependency_on_casbin_sqlalchemy_adapter() -> None:
    """It drags in the old `casbin` package, which overwrites pycasbin's files."""
    from importlib import metadata

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps]
    assert "casbin-sqlalchemy-adapter" not in names
    assert "casbin" not in names
    assert "pycasbin" in names
    assert "casbin/__init__.py" in {str(f) for f in metadata.files("pycasbin") or ()}


def _decider(directory: Path) -> Decider:
    base = Config()
    return Decider(base.model_copy(update={"policy": base.policy.model_copy(
        update={"paths": (directory,), "default": "ask"})}))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("git status && rm -rf /", "deny", id="chained-deny"),
        pytest.param("git status\nrm notes", "ask", id="newline-second-command"),
        pytest.param("git status; git log", "allow", id="both-allowed"),
        pytest.param("sudo git status", "ask", id="wrapper-earns-no-allow"),
    ],
)
def test_patterns_never_match_across_segments(tmp_path: Path, command: str,
                                              expected: str) -> None:
    directory = write_set(tmp_path, "p, agent, *, re:git (status|log).*, allow\n"
                                    "p, agent, *, rm -rf *, deny\n")
    verdict = _decider(directory).decide(call(command=command))
    assert verdict.effect == expected
    assert len(verdict.segments) == 2 or command.startswith("sudo")
