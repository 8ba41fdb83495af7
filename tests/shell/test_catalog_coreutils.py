"""The coreutils and system families of the catalog, through the real analyser.

Every spelling of one command reaches the rules as one canonical form (bundles
split, long options and their GNU abbreviations spelled by the short letter,
``-v`` dropped), and a plain deny rule in ``policy.csv`` meets them all through
the real casbin layer. Programs named by an option are segments of their own,
writes through options and operands meet protected paths, and loading options
are findings.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shellgate.models import Segment
from shellgate.policy.loader import SHIPPED_MODEL
from shellgate.policy.patterns import compile_pattern
from shellgate.policy.ruleset import PolicyEngine
from shellgate.shell import analyse, catalog
from tests.shell.shell_policy_helpers import WORKDIR, decision

HOME = str(Path.home())


def segments(command: str) -> tuple[Segment, ...]:
    return analyse(command, workdir=WORKDIR).segments


def first(command: str) -> Segment:
    return segments(command)[0]


def canonical(command: str) -> str:
    """The canonical form of the command's own segment (its argv when spelled so)."""
    segment = first(command)
    return segment.canonical[0] if segment.canonical else segment.command


def findings(command: str) -> list[str]:
    return [f for s in segments(command) for f in s.findings]


def writes(command: str) -> set[str]:
    return {w for s in segments(command) for w in s.write_paths}


def programs(command: str) -> list[tuple[str, ...]]:
    return [s.argv for s in segments(command) if s.context]


# -- canonical forms ------------------------------------------------------------------

SPELLINGS = {
    "rm -f -r x": [
        "rm -rf x", "rm -Rf x", "rm -fr x", "rm -f -r x", "rm -rfv x", "rm -r -f -v x",
        "rm --recursive --force x", "rm --rec --for x", "rm --force -R --verbose x",
        "rm x -rf", "/bin/rm -fr x",
    ],
    "chmod -R 777 /": ["chmod -R 777 /", "chmod --recursive 777 /", "chmod --rec 777 /",
                       "chmod 777 -R /", "chmod -Rv 777 /"],
    "chown -R root /": ["chown -R root /", "chown --recursive root /", "chown --recur root /"],
    "cp -r a b": ["cp -r a b", "cp -R a b", "cp --recursive a b", "cp --recu a b"],
    "mv -f a b": ["mv -f a b", "mv --force a b", "mv --forc a b", "mv -fv a b"],
    "sort -oout in": ["sort -o out in", "sort -oout in", "sort --output=out in",
                       "sort --output out in", "sort --outp=out in", "sort --o out in",
                       "sort in -o out"],
    "kill -9 -- -1": ["kill -9 -01", "kill -9 -0001", "kill -9 ' -1'", "kill -9 -- -1"],
    "systemctl reboot": ["systemctl --force reboot", "systemctl -i reboot",
                         "systemctl reboot --force", "systemctl -H host reboot",
                         "systemctl --no-block -- reboot"],
    "dd of=/dev/sda if=/dev/zero bs=1M": ["dd if=/dev/zero of=/dev/sda bs=1M",
                                          "dd bs=1M of=/dev/sda if=/dev/zero"],
    "less -olog f": ["less -o log f", "less --log-file=log f", "less --LOG-FILE log f",
                      "less --log=log f"],
    "head -n5 f": ["head -n 5 f", "head --lines=5 f", "head --li 5 f"],
    "grep -ex -i -r .": ["grep -ri -e x .", "grep --recursive --ignore-case --regexp=x ."],
}  # fmt: skip


@pytest.mark.parametrize(
    ("command", "expected"),
    [(command, expected) for expected, spelled in SPELLINGS.items() for command in spelled],
)
def test_every_spelling_has_one_canonical_form(command: str, expected: str) -> None:
    assert canonical(command) == expected


def test_an_obsolete_count_is_no_bundle_of_digit_options() -> None:
    assert canonical("head -20 f") == "head -20 f"
    assert canonical("grep -3 x f") == "grep -3 x f"


def test_a_value_is_the_options_not_an_operand() -> None:
    # -t takes "x": the operand is f, and no "-x" appears in the canonical form
    assert canonical("sort -t x -k 2 f") == "sort -k2 -tx f"
    assert canonical("rg -r x -g '*.py' p") == "rg -g*.py -rx p"


# -- one plain deny rule meets every spelling (the casbin layer) ----------------------

RULES = {
    "rm -rf *": SPELLINGS["rm -f -r x"] + ["rm -rf *", "sudo rm -Rf /", "env rm --for -r /"],
    "chmod -R 777 /": SPELLINGS["chmod -R 777 /"],
    "chown -R root *": SPELLINGS["chown -R root /"],
    "cp -r *": SPELLINGS["cp -r a b"],
    "mv -f *": SPELLINGS["mv -f a b"],
    "sort -o out *": SPELLINGS["sort -oout in"],
    "sort -o *": [*SPELLINGS["sort -oout in"], "sort -mo other in", "sort --outp=x in"],
    "kill -9 -1": ["kill -9 -01", "kill -9 -0001", "kill -9 ' -1'", "sudo kill -9 -01"],
    "systemctl reboot": SPELLINGS["systemctl reboot"],
}
NOT_MATCHED = {
    "rm -rf *": ["rm -r x", "rm -f x", "rm --dir x", "rm -i -r x"],
    "chmod -R 777 /": ["chmod 777 /", "chmod -R 755 /"],
    "chown -R root *": ["chown root f"],
    "cp -r *": ["cp a b", "cp -a a b"],
    "mv -f *": ["mv a b", "mv -i a b"],
    "sort -o out *": ["sort in", "sort -o other in"],
    "sort -o *": ["sort in", "sort -r in", "sort -k 2 in"],
    "kill -9 -1": ["kill -9 1234", "kill -9 -10"],
    "systemctl reboot": ["systemctl status reboot.target", "systemctl --force restart x"],
}


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, PolicyEngine]:
    """One policy set per rule: the rule that decides is the one under test."""
    out = {}
    for index, pattern in enumerate(RULES):
        directory = tmp_path_factory.mktemp("policy") / f"set{index}"
        directory.mkdir()
        shutil.copy(SHIPPED_MODEL, directory / "model.conf")
        (directory / "policy.csv").write_text(f"p, agent, *, {pattern}, deny\n", encoding="utf-8")
        out[pattern] = PolicyEngine.load([directory])
    return out


def denied(engine: PolicyEngine, command: str) -> bool:
    for segment in segments(command):
        match = engine.match("agent", "default", segment)
        if match is not None and match.rule.effect == "deny":
            return True
    return False


@pytest.mark.parametrize(
    ("pattern", "command"), [(p, c) for p, commands in RULES.items() for c in commands]
)
def test_a_plain_deny_rule_meets_every_spelling(
    engines: dict[str, PolicyEngine], pattern: str, command: str
) -> None:
    assert denied(engines[pattern], command)


@pytest.mark.parametrize(
    ("pattern", "command"), [(p, c) for p, commands in NOT_MATCHED.items() for c in commands]
)
def test_a_deny_rule_keeps_its_options_required(
    engines: dict[str, PolicyEngine], pattern: str, command: str
) -> None:
    assert not denied(engines[pattern], command)


# -- programs named by an option are segments of their own -----------------------------


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("sort --compress-program=rm x", ("rm",)),
        ("sort --compress-prog rm x", ("rm",)),
        ("sort --co=rm x", ("rm",)),
        ("sort --random-source -- --compress-program=rm x", ("rm",)),
        ("rg --pre=rm p", ("rm",)),
        ("rg --pre rm p", ("rm",)),
        ("rg --hostname-bin=rm p", ("rm",)),
        ("rg -e -- --pre=rm p", ("rm",)),
        ("install --strip-program=rm -s a b", ("rm",)),
        ("man -P 'rm -rf x' ls", ("rm", "-rf", "x")),
        ("man --pager=rm ls", ("rm",)),
        ("man -Hrm ls", ("rm",)),
        ("man --html='firefox:rm %s' ls", ("rm", "%s")),
    ],
)
def test_a_denied_program_behind_an_option_is_denied(
    command: str, program: tuple[str, ...]
) -> None:
    assert program in programs(command), segments(command)
    assert decision(command, "denylist") == "deny"
    assert decision(command, "allowlist") != "allow"


def test_an_option_value_that_is_no_program_runs_nothing() -> None:
    assert programs("sort -S 1k -T /tmp f") == []
    assert programs("man -p t ls") == []
    assert programs("rg --pre-glob '*.gz' p") == []


# -- loading options are findings -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["less -k keys f", "less -kkeys f", "less -Nk keys f", "less --lesskey-src=k f",
     "less --LESSKEY-SRC=k f", "less --lesskey k f", "less '+!id' f", "less +-olog f",
     "man -C my.conf ls", "man --config-file=my.conf ls", "man --conf my.conf ls"],
)  # fmt: skip
def test_options_that_load_settings_are_findings(command: str) -> None:
    assert findings(command), command
    assert decision(command, "denylist") == "ask"


@pytest.mark.parametrize(
    "command", ["less -N f", "less +G f", "less +/x f", "man ls", "man -k printf", "grep -r x ."]
)
def test_plain_reads_have_no_findings(command: str) -> None:
    assert findings(command) == []
    assert writes(command) == set()


# -- writes ---------------------------------------------------------------------------------

HOOK = f"{WORKDIR}/.git/hooks"


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("cp x --target-directory .git/hooks", HOOK),
        ("cp -t.git/hooks x", HOOK),
        ("mv x --targ=.git/hooks", HOOK),
        ("install --t=.git/hooks x", HOOK),
        ("install -d .git/hooks/x", f"{HOOK}/x"),
        ("ln -sf /tmp/x .git/hooks/pre-commit", f"{HOOK}/pre-commit"),
        ("touch .git/hooks/pre-commit", f"{HOOK}/pre-commit"),
        ("truncate -s 0 .git/config", f"{WORKDIR}/.git/config"),
        ("tee -a ~/.bashrc", f"{HOME}/.bashrc"),
        ("chmod +x .git/hooks/pre-commit", f"{HOOK}/pre-commit"),
        ("chmod -x .git/hooks/pre-commit", f"{HOOK}/pre-commit"),
        ("chown -R me .git/hooks", HOOK),
        ("mktemp -p .git/hooks", HOOK),
        ("mkfifo .git/hooks/p", f"{HOOK}/p"),
        ("mknod .git/hooks/p p", f"{HOOK}/p"),
        ("dd if=x of=.git/config", f"{WORKDIR}/.git/config"),
        ("sort --outp ~/.bashrc x", f"{HOME}/.bashrc"),
        ("sort -mo.git/config x", f"{WORKDIR}/.git/config"),
        ("uniq x .git/config", f"{WORKDIR}/.git/config"),
        ("tree -Io x .git/config .", f"{WORKDIR}/.git/config"),
        ("tree -o.git/config .", f"{WORKDIR}/.git/config"),
        ("tree -R -H x .git/hooks", f"{HOOK}/00Tree.html"),
        ("file -C -m .git/hooks/magic", f"{WORKDIR}/magic.mgc"),
        ("less -O .git/config f", f"{WORKDIR}/.git/config"),
        ("less --LOG-FILE=.git/config f", f"{WORKDIR}/.git/config"),
    ],
)
def test_writes_reach_the_protected_paths_layer(command: str, target: str) -> None:
    assert target in writes(command), writes(command)


@pytest.mark.parametrize(
    "command", ["cp a b", "rm -rf build", "mkdir -p d", "touch x", "dd if=a of=b", "mktemp"]
)
def test_obvious_writers_write_without_a_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    "command", ["sort -o out in", "uniq in out", "tree -o out", "file -C -m m"]
)
def test_a_reader_that_writes_lists_the_write_for_the_rules(command: str) -> None:
    """The write is an effect the ``write:`` rules decide, no finding of its own."""
    assert writes(command), command
    assert not any("via its operand" in f for f in findings(command)), findings(command)


def test_chmod_mode_and_chown_owner_are_not_written() -> None:
    assert writes("chmod 755 run.sh") == {f"{WORKDIR}/run.sh"}
    assert writes("chown root:root f") == {f"{WORKDIR}/f"}
    assert writes("chmod --reference=r f") == {f"{WORKDIR}/f"}


def test_kill_and_systemctl_keep_their_deny_side_forms() -> None:
    assert ("kill", "-9", "--", "-1") in first("kill -9 -01").forms
    assert ("systemctl", "reboot") in first("systemctl --force reboot").forms
    assert canonical("kill -l") == "kill -l"


def test_mktemp_writes_in_its_directory() -> None:
    assert HOOK in writes("mktemp --tmpdir=.git/hooks")
    assert f"{HOOK}/x.XXXX" in writes("mktemp -p .git/hooks x.XXXX")


@pytest.mark.parametrize(
    "command",
    ["kill -s KILL 1", "kill -KILL 1", "kill -SIGKILL 1", "kill -sKILL 1", "kill -kill 1",
     "kill -s kill 1", "kill -n 9 1", "kill -09 1", "kill -s 0009 1", "kill --signal=9 1"],
)  # fmt: skip
def test_every_spelling_of_a_signal_meets_a_rule_on_its_number(command: str) -> None:
    reading = catalog.read(tuple(command.split()))
    assert reading is not None
    assert reading.canonical == ("kill", "-9", "--", "1")
    assert compile_pattern("kill -9 *").matches_canonical(" ".join(reading.canonical))


@pytest.mark.parametrize(
    "command",
    ["dd if=x of=/dev/sda", "dd bs=1M if=x of=/dev/sda", "dd of=//dev/sda if=x",
     "dd of=/proc/self/root/dev/sda", "dd -- if=x of=/dev/sda"],
)  # fmt: skip
def test_a_dd_rule_written_with_of_first_meets_every_operand_order(command: str) -> None:
    segment = analyse(command, workdir=WORKDIR).segments[0]
    pattern = compile_pattern("dd of=/dev/*")
    assert any(pattern.matches_canonical(c) for c in segment.canonical), segment.canonical
