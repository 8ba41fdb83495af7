"""Allow-for-session: exact commands only, never interpreters or wrappers, per session."""

from __future__ import annotations

import pytest

from shellgate.approval import SessionGrants, runs_other_code, segment_key, session_scope
from shellgate.models import Redirect
from tests.approval.approval_helpers import call, seg, verdict

INTERPRETER_ARGVS = [
    pytest.param(("bash", "build.sh"), id="bash"),
    pytest.param(("sh", "-c", "ls"), id="sh-c"),
    pytest.param(("dash",), id="dash"),
    pytest.param(("zsh", "x"), id="zsh"),
    pytest.param(("fish",), id="fish"),
    pytest.param(("python", "x.py"), id="python"),
    pytest.param(("python3", "-m", "pytest"), id="python3"),
    pytest.param(("python3.12", "x.py"), id="python3.12"),
    pytest.param(("python2.7",), id="python2.7"),
    pytest.param(("/usr/bin/python3", "x.py"), id="abs-python3"),
    pytest.param(("/bin/bash", "-c", "true"), id="abs-bash"),
    pytest.param(("node", "-e", "1"), id="node-e"),
    pytest.param(("node", "server.js"), id="node"),
    pytest.param(("deno", "run", "x.ts"), id="deno"),
    pytest.param(("bun", "x.ts"), id="bun"),
    pytest.param(("perl", "-e", "1"), id="perl"),
    pytest.param(("ruby", "x.rb"), id="ruby"),
    pytest.param(("php", "x.php"), id="php"),
    pytest.param(("lua", "x.lua"), id="lua"),
    pytest.param(("env", "ls"), id="env"),
    pytest.param(("sudo", "ls"), id="sudo"),
    pytest.param(("doas", "ls"), id="doas"),
    pytest.param(("su", "-c", "ls"), id="su"),
    pytest.param(("xargs", "rm"), id="xargs"),
    pytest.param(("eval", "ls"), id="eval"),
    pytest.param(("exec", "ls"), id="exec"),
    pytest.param(("command", "ls"), id="command"),
    pytest.param(("builtin", "cd"), id="builtin"),
    pytest.param(("nohup", "ls"), id="nohup"),
    pytest.param(("timeout", "5", "ls"), id="timeout"),
    pytest.param(("nice", "ls"), id="nice"),
    pytest.param(("setsid", "ls"), id="setsid"),
    pytest.param(("busybox", "sh"), id="busybox"),
    pytest.param(("find", ".", "-exec", "rm", "{}", ";"), id="find-exec"),
    pytest.param(("find", ".", "-execdir", "rm", "{}", "+"), id="find-execdir"),
    pytest.param(("find", ".", "-ok", "rm", "{}", ";"), id="find-ok"),
    pytest.param(("awk", "{print}"), id="awk"),
    pytest.param(("gawk", 'BEGIN{system("id")}'), id="gawk"),
    pytest.param(("ssh", "host", "ls"), id="ssh"),
    pytest.param(("docker", "exec", "c1", "ls"), id="docker-exec"),
    pytest.param(("docker", "run", "--rm", "alpine"), id="docker-run"),
    pytest.param(("podman", "exec", "c1", "ls"), id="podman-exec"),
    pytest.param(("kubectl", "exec", "pod", "--", "ls"), id="kubectl-exec"),
    pytest.param(("npx", "cowsay"), id="npx"),
    pytest.param(("PYTHON3",), id="uppercase"),
    pytest.param((), id="empty-argv"),
]


@pytest.mark.parametrize("argv", INTERPRETER_ARGVS)
def test_interpreters_and_wrappers_are_never_offered_for_the_session(argv: tuple[str, ...]) -> None:
    assert runs_other_code(argv)
    v = verdict((seg("git", "status"), "ask"), (seg(*argv), "ask"))
    assert session_scope(v, permitted=True) == ()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("git", "push"), id="git-push"),
        pytest.param(("find", ".", "-name", "*.py"), id="find-without-exec"),
        pytest.param(("docker", "ps"), id="docker-ps"),
        pytest.param(("/usr/bin/make", "test"), id="abs-make"),
        pytest.param(("pythonic-tool",), id="python-prefix-not-python"),
        pytest.param(("envsubst",), id="env-prefix-not-env"),
    ],
)
def test_ordinary_commands_are_eligible(argv: tuple[str, ...]) -> None:
    assert not runs_other_code(argv)


def test_wrapper_seen_through_a_normalised_form_is_not_offered() -> None:
    # argv[0] is ordinary-looking, but the analysis peeled a form that is a wrapper
    # (e.g. an alias-like path): any form naming an interpreter disqualifies.
    s = seg("/opt/tools/run", "x", forms=(("/opt/tools/run", "x"), ("sudo", "rm", "x")))
    assert session_scope(verdict((s, "ask")), permitted=True) == ()


def test_scope_is_the_exact_asked_commands_in_order_without_repeats() -> None:
    v = verdict(
        (seg("git", "status"), "allow"),
        (seg("git", "push", "origin", "main"), "ask"),
        (seg("make", "deploy"), "ask"),
        (seg("git", "push", "origin", "main"), "ask"),
    )
    assert session_scope(v, permitted=True) == ("git push origin main", "make deploy")


def test_scope_not_offered_when_the_deployment_does_not_permit_it() -> None:
    v = verdict((seg("git", "push"), "ask"))
    assert session_scope(v, permitted=False) == ()
    assert session_scope(v, permitted=True) == ("git push",)


def test_scope_not_offered_when_any_segment_has_findings() -> None:
    v = verdict(
        (seg("git", "push"), "ask"), (seg("rm", "$TARGET", findings=("expansion $TARGET",)), "ask")
    )
    assert session_scope(v, permitted=True) == ()


def test_scope_not_offered_when_a_segment_is_denied_or_nothing_is_asked() -> None:
    assert (
        session_scope(
            verdict((seg("git", "push"), "ask"), (seg("rm", "-rf", "/"), "deny")), permitted=True
        )
        == ()
    )
    assert session_scope(verdict((seg("ls"), "allow")), permitted=True) == ()


def test_key_is_unambiguous_and_includes_redirects_and_assignments() -> None:
    assert segment_key(seg("echo", "a b")) == "echo 'a b'"
    assert segment_key(seg("echo", "a", "b")) == "echo a b"
    redirected = seg("echo", "hi", redirects=(Redirect(op=">", target="notes.txt", is_write=True),))
    assert segment_key(redirected) == "echo hi >notes.txt"
    assigned = seg("make", assignments=(("CC", "clang -O2"),))
    assert segment_key(assigned) == "CC='clang -O2' make"


def test_grant_covers_exactly_the_granted_commands() -> None:
    grants = SessionGrants()
    c = call()
    push = verdict((seg("git", "push"), "ask"))
    grants.grant(c, session_scope(push, permitted=True))
    assert grants.covers(c, push)
    assert grants.granted(c) == frozenset({"git push"})
    # same program, other arguments: not covered
    assert not grants.covers(c, verdict((seg("git", "push", "--force"), "ask")))
    # a redirect makes it a different command
    redirected = seg("git", "push", redirects=(Redirect(op=">", target="log", is_write=True),))
    assert not grants.covers(c, verdict((redirected, "ask")))
    # granted plus an ungranted ask segment: not covered
    assert not grants.covers(c, verdict((seg("git", "push"), "ask"), (seg("make"), "ask")))


def test_grant_does_not_cover_a_denied_segment_or_other_sessions() -> None:
    grants = SessionGrants()
    c = call(session="s1")
    push = verdict((seg("git", "push"), "ask"))
    grants.grant(c, ["git push"])
    assert not grants.covers(c, verdict((seg("git", "push"), "ask"), (seg("rm"), "deny")))
    assert not grants.covers(call(session="s2"), push)
    assert not grants.covers(call(session="s1", subject="other"), push)
    assert not grants.covers(call(session="s1", tenant="acme"), push)
    grants.end_session("agent", "default", "s1")
    assert not grants.covers(c, push)


def test_grant_refuses_interpreters_empty_commands_and_missing_sessions() -> None:
    grants = SessionGrants()
    for bad in [
        "bash",
        "python3 x.py",
        "FOO=1 sudo ls",
        "  ",
        "find . -exec rm {} ;",
        "'unbalanced",
    ]:
        with pytest.raises(ValueError, match="refusing a session grant"):
            grants.grant(call(), [bad])
    with pytest.raises(ValueError, match="session id"):
        grants.grant(call(session=""), ["git push"])
    assert grants.granted(call()) == frozenset()


def test_covers_rechecks_eligibility_whatever_was_stored() -> None:
    grants = SessionGrants()
    c = call()
    grants.grant(c, ["git push"])
    with_findings = seg("git", "push", findings=("glob",))
    assert not grants.covers(c, verdict((with_findings, "ask")))
    assert not grants.covers(call(session=""), verdict((seg("git", "push"), "ask")))


def test_grants_are_bounded_and_excess_is_not_stored() -> None:
    grants = SessionGrants(max_commands=2, max_sessions=1)
    grants.grant(call(), ["a 1", "a 2", "a 3"])
    assert grants.granted(call()) == frozenset({"a 1", "a 2"})
    grants.grant(call(session="s2"), ["a 1"])
    assert not grants.covers(call(session="s2"), verdict((seg("a", "1"), "ask")))
    with pytest.raises(ValueError, match="positive"):
        SessionGrants(max_commands=0)


def test_a_call_denied_as_a_whole_is_never_in_scope_or_covered() -> None:
    from shellgate.models import Decision, SegmentVerdict, Verdict

    asked = seg("git", "push")
    v = Verdict(
        decision=Decision(effect="deny", reason="guard", layer="input-guard"),
        segments=(
            SegmentVerdict(
                segment=asked, decision=Decision(effect="ask", reason="r", layer="casbin")
            ),
        ),
    )
    grants = SessionGrants()
    grants.grant(call(), ["git push"])
    assert session_scope(v, permitted=True) == ()
    assert not grants.covers(call(), v)


@pytest.mark.parametrize(
    "argv",
    [("git", "ls-remote", "--upload-pack=x", "."), ("chpst", "-u", "nobody", "ls"),
     ("tar", "-tf", "a.tar", "--to-command=x"), ("sort", "--compress-program=gzip", "f")],
)  # fmt: skip
def test_what_the_catalog_reads_as_running_a_program_gets_no_grant(
    argv: tuple[str, ...],
) -> None:
    # None of these names is on the interpreter list: the catalog knows they run one.
    assert runs_other_code(argv)


@pytest.mark.parametrize("argv", [("git", "log", "-3"), ("tar", "-tf", "a.tar"), ("sort", "f")])
def test_plain_uses_of_the_same_tools_can_be_granted(argv: tuple[str, ...]) -> None:
    assert not runs_other_code(argv)
