"""PolicyStore over a real SQLite file and a real PostgreSQL database: every call, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shellgate.errors import PolicyError, StoreError
from shellgate.store.db import Database
from shellgate.store.policies import CHANNEL, PolicyStore
from tests.policy_store.helpers import BASE, write_set


@pytest.fixture
def store(store_url: str) -> Iterator[PolicyStore]:
    db = Database(store_url)
    yield PolicyStore(db)
    db.close()


def test_push_pull_history_rollback(store: PolicyStore, tmp_path: Path) -> None:
    assert store.head() == 0
    assert store.history() == []
    a = write_set(tmp_path / "a", BASE + "p, agent, *, git push *, ask, needs OK\n",
                  "agent, default, allow, ls -la\nagent, default, ask, git push\n")
    assert store.push("team", a, author="ann", reason="first") == 1
    b = write_set(tmp_path / "b", "p, agent, *, cat *, allow\n",
                  "agent, default, allow, cat x\n")
    assert store.push("extra", b, author="bob", reason="second") == 2
    write_set(a, BASE, "agent, default, allow, ls\n")
    assert store.push("team", a, author="ann", reason="drop push rule") == 3
    assert store.head() == 3
    assert list(store.sets()) == ["extra", "team"]
    assert store.sets(1)["team"].policy_csv.endswith("needs OK\n")
    assert store.sets()["team"].policy_csv == BASE
    assert "extra" not in store.sets(1)

    history = store.history()
    assert [(v.version, v.action, v.set_name, v.author, v.reason) for v in history] == [
        (3, "push", "team", "ann", "drop push rule"),
        (2, "push", "extra", "bob", "second"),
        (1, "push", "team", "ann", "first")]
    assert history[0].time.endswith("Z")
    assert history[0].time[:2] == "20"
    assert [v.version for v in store.history("team")] == [3, 1]
    assert [v.version for v in store.history(limit=1)] == [3]

    assert store.rollback(1, author="cy", reason="bad change") == 4
    assert store.sets() == store.sets(1)
    rolled = store.history()[0]
    assert (rolled.action, rolled.set_name, rolled.rollback_to) == ("rollback", None, 1)
    # The rollback removed "extra" and changed "team": both histories show it.
    assert [v.version for v in store.history("team")] == [4, 3, 1]
    assert [v.version for v in store.history("extra")] == [4, 2]
    assert store.push("extra", b, author="bob", reason="same files, on purpose") == 5
    assert [v.version for v in store.history("extra")] == [5, 4, 2]

    out = tmp_path / "out"
    assert store.pull("team", out, version=3) == 3
    assert (out / "policy.csv").read_text() == BASE
    assert (out / "model.conf").read_text() == (a / "model.conf").read_text()
    assert (out / "tests.csv").read_text() == "agent, default, allow, ls\n"


def test_text_is_kept_as_the_loader_reads_it(store: PolicyStore, tmp_path: Path) -> None:
    """Line endings read as the loader reads files (CRLF is one end); every other
    character, the last line without an end and form feeds included, is kept."""
    policy = "# crlf\r\np, agent, *, ls *, allow\r\n\x0c\r\np, agent, *, \"re:a{1,3}\", deny"
    directory = write_set(tmp_path / "s", "")
    (directory / "policy.csv").write_bytes(policy.encode())
    store.push("s", directory, author="a", reason="r")
    read = policy.replace("\r\n", "\n")
    assert store.sets()["s"].policy_csv == read
    out = tmp_path / "o"
    store.pull("s", out)
    assert (out / "policy.csv").read_bytes() == read.encode()


def test_contents_are_deduplicated(store: PolicyStore, tmp_path: Path) -> None:
    directory = write_set(tmp_path / "s", BASE * 3)
    for n in range(3):
        store.push(f"s{n}", directory, author="a", reason="r")
    with store.db.transaction() as tx:
        rows = tx.one("SELECT COUNT(*) FROM sg_policy_rows")
        texts = tx.one("SELECT COUNT(*) FROM sg_policy_texts")
    assert rows == (3,)
    assert texts == (2,)


@pytest.mark.parametrize(("policy", "tests", "model", "expect"), [
    (BASE + "p, agent, *, ls\n", None, None, "s/policy.csv:2: a p row has 4 or 5 fields"),
    (BASE + "p, agent, *, rm *, deny\n", "agent, default, allow, rm x\n", None,
     "s/tests.csv:1: test failed: agent in default: 'rm x': expected allow, got deny"),
    (BASE, "agent, default, maybe, ls\n", None, "s/tests.csv:1: unknown expected decision"),
    (BASE, "# only comments\n", None, "s/tests.csv: no test rows"),
    (BASE, None, "[request_definition]\nr = sub, obj\n", "s/model.conf"),
    ("p, agent, *, ls\x00, allow\n", None, None, "s/policy.csv:1: contains a NUL"),
])
def test_push_refuses_a_bad_set_and_writes_nothing(
    store: PolicyStore, tmp_path: Path, policy: str, tests: str | None, model: str | None,
    expect: str,
) -> None:
    good = write_set(tmp_path / "good", BASE)
    store.push("s", good, author="a", reason="good")
    bad = write_set(tmp_path / "s", policy, tests or "agent, default, allow, ls\n", model)
    with pytest.raises(PolicyError, match=None) as info:
        store.push("s", bad, author="a", reason="bad")
    assert expect in str(info.value), str(info.value)
    assert store.head() == 1
    assert store.sets()["s"].policy_csv == BASE


def test_push_refuses_missing_files_and_bad_arguments(store: PolicyStore, tmp_path: Path) -> None:
    directory = write_set(tmp_path / "s", BASE)
    (directory / "tests.csv").unlink()
    with pytest.raises(PolicyError, match=r"s/tests.csv: missing"):
        store.push("s", directory, author="a", reason="r")
    with pytest.raises(PolicyError, match="policy set directory not found"):
        store.push("s", tmp_path / "nope", author="a", reason="r")
    write_set(directory, BASE)
    for name in ("", "a/b", "-x", "x" * 101, "sp ace"):
        with pytest.raises(PolicyError, match="set name"):
            store.push(name, directory, author="a", reason="r")
    with pytest.raises(PolicyError, match="reason is empty"):
        store.push("s", directory, author="a", reason=" ")
    with pytest.raises(PolicyError, match="author is empty"):
        store.push("s", directory, author="", reason="r")
    assert store.head() == 0


def test_unknown_versions_and_sets(store: PolicyStore, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no policy pushed yet"):
        store.sets()
    with pytest.raises(PolicyError, match=r"unknown version 1 .nothing pushed yet"):
        store.rollback(1, author="a", reason="r")
    store.push("s", write_set(tmp_path / "s", BASE), author="a", reason="r")
    for bad in (0, 2, -1):
        with pytest.raises(PolicyError, match=rf"unknown version {bad} \(versions are 1..1\)"):
            store.rollback(bad, author="a", reason="r")
        with pytest.raises(PolicyError, match="unknown version"):
            store.pull("s", tmp_path / "o", version=bad)
    with pytest.raises(PolicyError, match="version 1 has no set 'other'"):
        store.pull("other", tmp_path / "o")
    with pytest.raises(PolicyError, match="no set 'other' in any version"):
        store.history("other")
    assert store.head() == 1


def test_pull_refuses_a_directory_that_is_not_empty(store: PolicyStore, tmp_path: Path) -> None:
    store.push("s", write_set(tmp_path / "s", BASE), author="a", reason="r")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(PolicyError, match="not empty"):
        store.pull("s", out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert store.pull("s", out, force=True) == 1
    assert (out / "policy.csv").read_text() == BASE
    assert (out / "notes.txt").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(PolicyError, match="not a directory"):
        store.pull("s", tmp_path / "file")


def test_a_push_notifies_listeners_at_commit(pg_url: str, tmp_path: Path) -> None:
    db = Database(pg_url)
    store = PolicyStore(db)
    listener = db.listen(CHANNEL)
    try:
        version = store.push("s", write_set(tmp_path / "s", BASE), author="a", reason="r")
        got: list[str] = []
        for _ in range(50):
            got += listener.wait(0.1)
            if got:
                break
        assert got == [str(version)]
        store.rollback(1, author="a", reason="again")
        assert listener.wait(5) == ["2"]
    finally:
        listener.close()
        db.close()


def test_unreachable_store_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"postgresql://u:\*\*\*@127.0.0.1:1/x: cannot connect"):
        PolicyStore(Database("postgresql://u:secret@127.0.0.1:1/x"))


def test_hosts_are_upserted(store: PolicyStore) -> None:
    from shellgate.store.policies import HostState

    store.report(HostState("h1", 10, "g1", 3, "t0", "t1", "ok"))
    store.report(HostState("h1", 10, "g1", 4, "t2", "t3", "ok"))
    store.report(HostState("h0", 11, "g2", None, None, "t3", "policy store unreachable"))
    assert [(h.host, h.gate, h.policy_version, h.status) for h in store.hosts()] == [
        ("h0", "g2", None, "policy store unreachable"), ("h1", "g1", 4, "ok")]


def test_concurrent_pushes_get_consecutive_versions(store_url: str, tmp_path: Path) -> None:
    import threading

    directory = write_set(tmp_path / "s", BASE)
    errors: list[BaseException] = []

    def pusher(name: str) -> None:
        try:
            with Database(store_url) as db:
                store = PolicyStore(db)
                for _ in range(4):
                    store.push(name, directory, author=name, reason="race")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=pusher, args=(f"s{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Database(store_url) as db:
        store = PolicyStore(db)
        assert [v.version for v in store.history()] == list(range(12, 0, -1))
        assert sorted(store.sets()) == ["s0", "s1", "s2"]  # no push lost another's set


def test_the_tests_run_through_the_tester_the_store_is_given(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store does not import the decision: its tester is handed in, or the one the
    installed shellgate registers; with neither, nothing untested is stored."""
    from shellgate.policy.testrun import check_pushed
    from shellgate.store import policy_push

    seen: list[tuple[Path, Path]] = []

    def tester(copy: Path, shown: Path, config: object) -> None:
        seen.append((copy, shown))
        check_pushed(copy, shown, None)

    directory = write_set(tmp_path / "s", BASE)
    db = Database(store_url)
    try:
        assert PolicyStore(db, tester=tester).push("s", directory, author="a", reason="r") == 1
        assert [(c.name, s) for c, s in seen] == [("s", directory / "tests.csv")]
        assert policy_push.installed_tester() is check_pushed  # pyproject's entry point
        monkeypatch.setattr(policy_push, "TESTER_NAME", "no-such-tester")
        with pytest.raises(PolicyError, match="no set tester is installed"):
            PolicyStore(db).push("s", directory, author="a", reason="again")
        assert PolicyStore(db).head() == 1
    finally:
        db.close()


def test_only_shellgates_own_registration_is_the_tester(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another installed package declaring the same entry point is passed over."""
    import sys

    from shellgate.store import policy_push

    site = tmp_path / "site"
    (site / "impostor").mkdir(parents=True)
    (site / "impostor" / "__init__.py").write_text("def tester(copy, shown, config):\n    pass\n")
    info = site / "impostor-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: impostor\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{policy_push.TESTER_GROUP}]\n{policy_push.TESTER_NAME} = impostor:tester\n"
    )
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    from shellgate.policy.testrun import check_pushed

    assert policy_push.installed_tester() is check_pushed
