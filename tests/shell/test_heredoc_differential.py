"""Heredocs against the real bash: every command it runs is seen, and every file it writes.

The heredoc lexer (``shell/reader/heredoc_lexer.py``) hides heredoc syntax and
bodies from tree-sitter; a mistake there could hide a command (text bash runs,
read as a body) or a write. So bash runs generated lines — heredoc operators in
any order with redirections, several per line, ``<<-``, quoted and unquoted
delimiters, lists and pipes after them, bodies holding command-like text,
substitutions and near-delimiters — with an empty ``PATH`` and a
``command_not_found_handle`` that records each command's argv and the stdin it
got. The analysis must see every command bash ran, must not read a quoted
body's lines as commands, must list every file bash created as a write, and
must give each command the body bash fed it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shellgate.shell import analyse
from shellgate.shell.reader.heredoc_lexer import split

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")

_RECORD = (
    "PATH=/nonexistent\n"
    "command_not_found_handle() {\n"
    '  local input; input=$(</dev/stdin)\n'
    '  printf "%s\\037" "$@" "$SG_END" >>"$SG_LOG"\n'
    '  printf "%s\\036" "$input" >>"$SG_IN"\n'
    "  return 0\n"
    "}\n"
    'eval "$1"\n'
)


def bash_runs(command: str, tmp: Path) -> tuple[list[tuple[str, ...]], list[str], set[str]]:
    """What bash ran (argvs), the stdin each got, and the files it created."""
    work = tmp / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    log, stdin_log = tmp / "runs.log", tmp / "stdin.log"
    log.write_bytes(b"")
    stdin_log.write_bytes(b"")
    assert BASH is not None
    subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", _RECORD, "sg", command],
        env={"SG_LOG": str(log), "SG_IN": str(stdin_log), "SG_END": "\x1e"},
        cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False,
    )  # fmt: skip
    records = log.read_bytes().decode("utf-8", "replace").split("\x1e\x1f")[:-1]
    ran = [tuple(r.split("\x1f")[:-1]) for r in records]
    inputs = stdin_log.read_bytes().decode("utf-8", "replace").split("\x1e")[:-1]
    created = {str(p) for p in work.rglob("*")}
    return ran, inputs, created


def check(command: str, tmp: Path) -> None:
    ran, inputs, created = bash_runs(command, tmp)
    workdir = str(tmp / "work")
    analysis = analyse(command, workdir=workdir)
    if any(f.startswith("parse error") for s in analysis.segments for f in s.findings):
        # A line that does not parse asks as a whole, and no rule is matched against
        # its pieces (policy.md): what bash would run there is the person's to read.
        assert all(any(f.startswith("parse error") for f in s.findings)
                   for s in analysis.segments), command  # fmt: skip
        return
    argvs = [s.argv for s in analysis.segments]
    heads = {form[0] for s in analysis.segments for form in s.all_forms() if form}
    for argv in ran:
        assert argv[0] in heads, f"bash runs {argv} unseen in {command!r}: {argvs}"
    if not any(s.findings for s in analysis.segments):
        for argv in ran:
            assert argv in argvs, f"bash runs {argv}, read as {argvs} in {command!r}"
    names = {argv[0] for argv in ran if argv}
    assert "bodyword" not in {a[0] for a in argvs if a} - names, (command, argvs)
    writes = {w for s in analysis.segments for w in s.write_paths}
    assert created <= writes, f"bash wrote {sorted(created - writes)} in {command!r}"
    if split(command.encode()) is not None and len(inputs) == len(ran) and ran == argvs:
        # Read by the lexer: each command's heredoc body is what bash fed it.
        for segment, given_input in zip(analysis.segments, inputs, strict=True):
            ops = {r.op for r in segment.redirects if r.op.startswith("<")}
            if ops and ops <= {"<<", "<<-"}:  # fed a heredoc (no here-string, no file)
                bodies = _bodies(segment, command)
                assert bodies is given_any or given_input.strip("\n") in bodies, (command, segment)


def _bodies(segment: object, command: str) -> str:
    """Every heredoc body of ``command`` bash passes as written, joined (each may be
    the one fed); an unquoted body with expansions in it is bash's to expand."""
    found = split(command.encode())
    assert found is not None
    heredocs = list(found[1].values())
    if any(not h.quoted and set(h.body) & set("$`\\") for h in heredocs):
        return given_any
    return "\x00".join(h.body.strip("\n") for h in heredocs)


#: Stands for "any input": no body of the command is passed as written.
given_any = "\x01any"

KNOWN = [
    "aa <<EOF > f1; bb\nx\nEOF",
    "aa <<A > f1 <<B\na\nA\nb\nB",
    "aa > f1 <<A <<B\na\nA\nb\nB",
    "aa <<-EOF 2>&1 >> f2; bb\n\tbodyword\n\tEOF\ncc",
    "aa - <<'PY'\nbodyword x\nPY",
    "aa <<EOF | bb > f3\nbodyword $(cc)\nEOF",
    "aa <<'EOF' | bb && cc\nbodyword\nEOF",
    "aa <<EOF > f1; aa <<EOF2 > f2\nx\nEOF\ny\nEOF2",
    "x=$(aa <<EOF\nbodyword\nEOF\n)\nbb \"$x\"",
    'aa "$(bb <<\'EOF\'\nbodyword\nEOF\n)"',
    "aa <<EOF\nhi\nEO\\\nF\nbb\nEOF",
    "aa <<E''OF\nbodyword\nEOF\nbb",
    "aa <<EOF; bb \"multi\nline\"\nbodyword\nEOF\ncc",
    "aa <<EOF >f1 2>/dev/null || bb\nbodyword `cc`\nEOF",
    "(aa <<EOF) > f1\nx\nEOF",
    "aa <<EOF\nnever ends",
    "aa $((1<<2)) <<EOF > f1\nbodyword\nEOF",
    "aa '<<EOF' > f1\nbb",
    "aa # <<EOF\nbb",
    "aa <<<x > f1; bb <<EOF\nbodyword\nEOF",
]


@pytest.mark.parametrize("command", KNOWN)
def test_known_heredoc_shapes(command: str, tmp_path: Path) -> None:
    check(command, tmp_path)


_OPS = ["<<EOF", "<<'EOF'", "<<-EOF", '<< "EOF"', "<<A", "<<\\A", "<<<word"]
_REDIRECTS = ["> f1", ">> f2", "2>&1", "2> f3", "&> f4", "< /dev/null", ">/dev/null"]
_AFTER = ["", "; bb", " && bb", " | bb", " | bb > f5", " || bb"]
_BODY_LINES = ["bodyword", "bodyword rm -rf /", "\tEOF", "EOF ", "$(cc)", "`cc`", "A", "EO\\",
               "F", "\tA", "x\\", "'"]  # fmt: skip


@st.composite
def heredoc_lines(draw: st.DrawFn) -> str:
    parts = ["aa", *draw(st.lists(st.sampled_from(["-", "x", "y"]), max_size=2))]
    parts += draw(st.lists(st.sampled_from(_OPS + _REDIRECTS), min_size=1, max_size=4))
    head = " ".join(draw(st.permutations(parts[1:]))) if len(parts) > 1 else ""
    line = f"aa {head}".rstrip() + draw(st.sampled_from(_AFTER))
    bodies: list[str] = []
    for op in parts:
        if op.startswith("<<") and not op.startswith("<<<"):
            delimiter = "A" if "A" in op else "EOF"
            lines = draw(st.lists(st.sampled_from(_BODY_LINES), max_size=3))
            end = ("\t" if op.startswith("<<-") and draw(st.booleans()) else "") + delimiter
            bodies.append("\n".join([*lines, end]))
    tail = draw(st.sampled_from(["", "\ncc", "\ncc > f6"]))
    return "\n".join([line, *bodies]) + tail


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(command=heredoc_lines())
@example(command="aa <<-EOF x <<A\n\tEOF\nA")
@example(command="aa <<A <<EOF - -\nA\nbodyword\nEOF\n'\nA")
@example(command="aa <<A - <<EOF -; bb\nA\nEOF\n'\nA")
def test_generated_heredoc_lines(command: str, tmp_path: Path) -> None:
    check(command, tmp_path)
