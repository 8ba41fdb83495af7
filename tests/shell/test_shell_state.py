"""The shell's state across a line: the directory after a ``cd`` that may fail and
variables assigned in a branch bash may skip. Held against the real bash: every
file bash writes is a write the analysis names, unless the analysis asks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shellgate.shell import analyse

BASH = shutil.which("bash")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    return root


def writes(command: str, ws: Path) -> set[str]:
    return {p for s in analyse(command, workdir=str(ws)).segments for p in s.write_paths}


def findings(command: str, ws: Path) -> list[str]:
    return [f for s in analyse(command, workdir=str(ws)).segments for f in s.findings]


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("cd src; echo x > out", ["src/out"]),  # src exists: the cd succeeds
        ("cd nosuch; echo x > out", ["nosuch/out", "out"]),  # it fails: the shell stays
        ("cd nosuch && echo x > out", ["nosuch/out"]),  # runs only if it succeeded
        ("cd nosuch || echo x > out", ["out"]),  # runs only if it failed
        ("cd nosuch && true; echo x > out", ["nosuch/out", "out"]),
        ("if false; then cd src; fi; echo x > out", ["src/out", "out"]),
        ("true && cd src; echo x > out", ["src/out", "out"]),
        ("rm -rf src; cd src; echo x > out", ["src/out", "out"]),  # the line removes it
        ("mkdir -p new && cd new && echo x > out", ["new/out"]),
        ("cd nosuch; cd src; echo x > out", ["nosuch/src/out", "src/out", "nosuch/out", "out"]),
        ("cd src && cd nosuch || cd ..; echo x > out", ["src/nosuch/out", "out"]),
        ("(cd nosuch); echo x > out", ["out"]),
        ("cd nosuch | true; echo x > out", ["out"]),
    ],
)
def test_a_cd_that_may_fail_leaves_every_directory_the_shell_may_be_in(
    ws: Path, command: str, where: list[str]
) -> None:
    out = {p for p in writes(command, ws) if os.path.basename(p) == "out"}
    assert out == {f"{ws}/{w}" for w in where}, out


def test_a_protected_file_in_the_directory_a_failed_cd_leaves_is_seen(ws: Path) -> None:
    assert f"{ws}/.bashrc" in writes("cd nosuch; echo x > .bashrc", ws)
    link = writes("cd nosuch; ln -s ~/.bashrc x; echo y > x", ws)
    assert os.path.expanduser("~/.bashrc") in link


@pytest.mark.parametrize(
    "command",
    ["x=/etc/passwd; if false; then x=notes; fi; echo > $x",
     "x=/etc/passwd; false && x=notes; echo > $x",
     "x=/etc/passwd; true || x=notes; echo > $x",
     "x=/etc/passwd; case a in b) x=notes;; esac; echo > $x",
     "x=/etc/passwd; while false; do x=notes; done; echo > $x",
     "x=/etc/passwd; for i in; do x=notes; done; echo > $x",
     "if false; then x=notes; fi; echo > $x"],
)  # fmt: skip
def test_a_variable_a_skipped_branch_may_assign_is_not_known_after_it(
    ws: Path, command: str
) -> None:
    assert any("value unknown" in f for f in findings(command, ws)), command


def test_inside_its_branch_an_assignment_is_known(ws: Path) -> None:
    segments = analyse("if true; then x=notes; echo > $x; fi", workdir=str(ws)).segments
    assert f"{ws}/notes" in {p for s in segments for p in s.write_paths}
    assert not any(s.findings for s in segments)
    [_, echo] = analyse("x=a && echo $x", workdir=str(ws)).segments
    assert echo.argv == ("echo", "a")


def test_a_program_named_by_a_known_variable_is_still_a_finding(ws: Path) -> None:
    assert any("command position" in f for f in findings("x=ls; $x", ws))


# -- against the real bash ------------------------------------------------------------

_ATOMS = ["cd src", "cd nosuch", "cd ..", "cd deep", "x=a", "x=b", "true", "false"]


@st.composite
def lines(draw: st.DrawFn) -> str:
    def statement(depth: int) -> str:
        shape = draw(st.sampled_from(["atom", "atom", "and", "or", "if", "ifelse", "case",
                                      "for", "sub"] if depth < 2 else ["atom"]))  # fmt: skip
        atom = draw(st.sampled_from(_ATOMS))
        if shape == "atom":
            return atom
        a, b = statement(depth + 1), statement(depth + 1)
        return {
            "and": f"{a} && {b}", "or": f"{a} || {b}",
            "if": f"if {a}; then {b}; fi", "ifelse": f"if {a}; then {b}; else {atom}; fi",
            "case": f"case k in k) {a};; esac", "for": f"for i in 1 2; do {a}; done",
            "sub": f"( {a} )",
        }[shape]

    body = [statement(0) for _ in range(draw(st.integers(1, 3)))]
    target = draw(st.sampled_from(["out", "$x.out", ".bashrc"]))
    return "; ".join([*body, f"echo w > {target}"])


def bash_writes(command: str, ws: Path) -> set[str]:
    assert BASH is not None
    subprocess.run([BASH, "--norc", "--noprofile", "-c", command], cwd=ws, env={"PATH": "/usr/bin:/bin"},
                   capture_output=True, timeout=10, check=False)  # fmt: skip
    return {str(p) for p in ws.rglob("*") if p.is_file()}


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(command=lines())
@example(command="cd nosuch; echo w > .bashrc")
@example(command="x=a; if false; then x=b; fi; echo w > $x.out")
@example(command="cd src || cd deep; echo w > out")
def test_every_file_bash_writes_is_a_write_the_analysis_names(
    tmp_path: Path, command: str
) -> None:
    ws = tmp_path / "w"
    if ws.exists():
        shutil.rmtree(ws)
    (ws / "src" / "deep").mkdir(parents=True)
    segments = analyse(command, workdir=str(ws)).segments
    if any(s.findings for s in segments if s.write_paths or s.redirects):
        return  # the line asks
    named = {p for s in segments for p in s.write_paths}
    assert bash_writes(command, ws) <= named, (command, named)


# -- writes into a directory no command visibly makes -----------------------------------


@pytest.mark.parametrize(
    ("command", "asks"),
    [
        ("python3 -c 'pass'; echo x > made/.bashrc", True),
        ("echo x > made/f | python3 gen.py", True),  # beside it in a pipeline
        ("git checkout other && echo x >> made/f", True),
        ("echo x > made/f", False),  # alone it fails, as bash says
        ("sed -i s/a/b/ made/x.py; sed -i s/c/d/ made/y.py", False),  # writes only what it names
        ("mkdir -p made && python3 gen.py && echo x > made/f", False),  # made visibly
        ("cd src && python3 gen.py > out.txt", False),  # src exists
    ],
)
def test_a_write_into_a_directory_another_program_may_make_asks(
    ws: Path, command: str, asks: bool
) -> None:
    found = any("no command of the line makes" in f for f in findings(command, ws))
    assert found is asks, findings(command, ws)


@pytest.mark.skipif(BASH is None or shutil.which("python3") is None, reason="needs bash, python3")
def test_why_a_program_may_make_the_directory_a_link(ws: Path, tmp_path: Path) -> None:
    """The real bash and python: the write lands outside, where the link leads."""
    outside = tmp_path / "outside"
    outside.mkdir()
    command = f"python3 -c \"import os; os.symlink('{outside}', 'made')\"; echo x > made/f"
    assert BASH is not None
    subprocess.run([BASH, "--norc", "--noprofile", "-c", command], cwd=ws, check=True,
                   timeout=10)  # fmt: skip
    assert (outside / "f").read_text() == "x\n"
    (ws / "made").unlink()
    assert any("no command of the line makes" in f for f in findings(command, ws))
