"""The index gives exactly plain casbin's answers: random policies, random commands."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellgate.models import Segment
from shellgate.policy.index import PolicyIndex
from shellgate.policy.loader import EFFECTS, Link, PolicySource, Rule
from shellgate.policy.patterns import compile_pattern
from shellgate.policy.reference import ReferenceEnforcer
from shellgate.policy.ruleset import PolicyEngine

NAMES = ["a", "b", "c", "r1", "r2", "r3", "everyone"]
TENANTS = ["t1", "t2", "*"]
WORDS = ["git", "ls", "rm", "x", "gitk", "-f"]
PATTERNS = [
    "git", "git x", "ls", "rm -f", "git *", "ls *", "rm -f *", "git x *", "*", "g*", "* x",
    "git * x", "rm*", "re:git (x|-f)", "re:l.*", "re:(?i)GIT x", "re:.*x", "re:rm( .*)?",
    "re:gitk|ls", "re:git x\\b.*",
]

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(tuple)


@st.composite
def policies(draw: st.DrawFn) -> PolicySource:
    rows = draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(TENANTS),
                                   st.sampled_from(PATTERNS), st.sampled_from(EFFECTS)),
                         max_size=25))
    links = draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES),
                                    st.sampled_from(TENANTS)), max_size=10))
    rules = tuple(Rule(s, t, compile_pattern(p), e, "", "policy.csv", i + 1, i)
                  for i, (s, t, p, e) in enumerate(rows))
    # everyone: the baseline's reading, every subject holds the role "everyone"
    return PolicySource(Path("."), rules,
                        tuple(Link(u, r, t, "policy.csv", 100 + i)
                              for i, (u, r, t) in enumerate(links)),
                        everyone=draw(st.booleans()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=policies(),
       requests=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(["t1", "t2"]), words,
                                   st.lists(words, max_size=2)), min_size=1, max_size=8))
def test_index_agrees_with_casbin_enforce(
    source: PolicySource, requests: list[tuple[str, str, tuple[str, ...], list[tuple[str, ...]]]]
) -> None:
    index, reference = PolicyIndex(source), ReferenceEnforcer(source)
    ours, theirs = PolicyEngine([index]), PolicyEngine([reference])
    for subject, tenant, argv, forms in requests:
        text = " ".join(argv)
        for allow in (True, False):
            a = index.best(subject, tenant, text, allow=allow)
            b = reference.best(subject, tenant, text, allow=allow)
            assert (a and a.ref) == (b and b.ref), (subject, tenant, text, allow)
        segment = Segment(text=text, argv=argv, forms=(argv, *forms))
        m1, m2 = ours.match(subject, tenant, segment), theirs.match(subject, tenant, segment)
        assert (m1 and (m1.rule.ref, m1.text)) == (m2 and (m2.rule.ref, m2.text))


def test_deep_role_chains_stop_where_casbin_stops() -> None:
    """casbin's role manager follows at most 9 links; the index must stop there too."""
    chain = [Link(f"n{i}", f"n{i + 1}", "*", "policy.csv", i) for i in range(12)]
    rules = tuple(Rule(f"n{i}", "*", compile_pattern(f"c{i}"), "allow", "", "policy.csv",
                       100 + i, i) for i in range(13))
    source = PolicySource(Path("."), rules, tuple(chain))
    index, reference = PolicyIndex(source), ReferenceEnforcer(source)
    reached = [i for i in range(13) if index.best("n0", "t", f"c{i}") is not None]
    assert reached == [i for i in range(13) if reference.best("n0", "t", f"c{i}") is not None]
    assert reached == list(range(10))


def _policy_text(rows: list[tuple[str, str, str, str]], links: list[tuple[str, str, str]]) -> str:
    lines = [f"g, {u}, {r}, {t}" for u, r, t in links]
    lines += [f"p, {s}, {t}, {p}, {e}" for s, t, p, e in rows]
    return "\n".join(lines) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(TENANTS),
                               st.sampled_from(PATTERNS), st.sampled_from(EFFECTS)),
                     max_size=25),
       links=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES),
                                st.sampled_from(TENANTS)), max_size=10),
       requests=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(["t1", "t2"]), words,
                                   st.lists(words, max_size=2)), min_size=1, max_size=8))
def test_a_store_loaded_set_agrees_with_casbin_and_with_its_files(
    rows: list[tuple[str, str, str, str]], links: list[tuple[str, str, str]],
    requests: list[tuple[str, str, tuple[str, ...], list[tuple[str, ...]]]],
) -> None:
    """A set read from text (a policy store's rows) is the same set as from files:
    the index agrees with casbin over it, and with the file set, rule refs included."""
    import tempfile

    from shellgate.policy.loader import SHIPPED_MODEL, load_policy_set, load_policy_text

    model = SHIPPED_MODEL.read_text(encoding="utf-8")
    text = _policy_text(rows, links)
    stored = load_policy_text(model, text, label="team")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "team"
        directory.mkdir()
        (directory / "model.conf").write_text(model, encoding="utf-8")
        (directory / "policy.csv").write_text(text, encoding="utf-8")
        from_files = load_policy_set(directory)
    ours = PolicyEngine([PolicyIndex(stored)])
    theirs = PolicyEngine([ReferenceEnforcer(stored)])
    files = PolicyEngine([PolicyIndex(from_files)])
    for subject, tenant, argv, forms in requests:
        segment = Segment(text=" ".join(argv), argv=argv, forms=(argv, *forms))
        found = [e.match(subject, tenant, segment) for e in (ours, theirs, files)]
        refs = [m and (e.ref(m.rule), m.text) for e, m in zip((ours, theirs, files), found,
                                                              strict=True)]
        assert refs[0] == refs[1] == refs[2], (subject, tenant, argv, refs)
        if refs[0]:
            assert refs[0][0].startswith("team/policy.csv:")
