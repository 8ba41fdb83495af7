"""Differential check: the commands bash runs against the commands the analysis sees.

bash runs each generated string with an empty ``PATH`` and a
``command_not_found_handle`` that records the argv of every command it would
have run (nothing else runs). The analysis must see each of them: its name as
the head of some segment's form (so a deny rule on it matches), and, when the
analysis found nothing to ask about, its whole argv (so an allow is earned).

The strings are built from the pieces tree-sitter-bash and bash read
differently: backslashes before blanks and newlines, ``#``, here-strings,
braces and quotes (a red-team pass found ``ls;\\ #;rm -rf ~`` allowed this way).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shellgate.shell import analyse

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")

_PIECES = ["aa", "bb", "rm", "x", " ", "\t", "\n", "\\", "#", ";", "||", "|", "<<<",
           "'q r'", '"d e"', "$'c'", "(", ")", "{ ", "}", "$(", "`", "=", "-f"]  # fmt: skip
_RECORD = (
    "PATH=/nonexistent\n"
    'command_not_found_handle() { printf "%s\\037" "$@" "$SG_END" >>"$SG_LOG"; return 0; }\n'
    'eval "$1"\n'
)

# Found by red-team passes and fuzzing; each once ran a command the analysis missed.
KNOWN = [
    "echo a\\\n#; rm -rf /",
    "ls;\\ #;rm -rf ~",
    "echo a\n\\ #;rm -rf /",
    "echo a;\\\t#;rm -rf /",
    "cat x <<<\\ \nrm -rf /",
    "echo a\n\\rm -rf /",
    "echo a\n\\\\rm -rf /",
    "x=1\n\\rm -rf /",
    "\\ rm<<<{ \\aabb",
    "<<<-f \\ \n",
    "aa}<<<}\\rm -rf",
    "ls <<<{ }",
    "'q r'#\\\t\nrm -rf /",
    '"d e"#aa\\ \\\t\n\nrm -rf /',
    "echo aa\r#;rm -rf /",
    "x=aa\x0bbb rm -rf /",
    "aa;{}#;rm -rf /",
]
# Read right (an empty substitution expands to nothing), so nothing to ask about.
EMPTY_SUBSTITUTIONS = ["r``m -rf /", "r$()m -rf /", "r$( )m -rf /", "r` `m -rf /"]


def bash_runs(command: str, tmp: Path) -> list[tuple[str, ...]] | None:
    """The argv of every command bash would run for ``command`` (None: it hung)."""
    log = tmp / "runs.log"
    log.write_bytes(b"")
    assert BASH is not None
    try:
        subprocess.run(
            [BASH, "--norc", "--noprofile", "-c", _RECORD, "sg", command],
            env={"SG_LOG": str(log), "SG_END": "\x1e"},
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    records = log.read_bytes().decode("utf-8", "replace").split("\x1e\x1f")[:-1]
    return [tuple(r.split("\x1f")[:-1]) for r in records]


def check_seen(command: str, tmp: Path) -> None:
    ran = bash_runs(command, tmp)
    if ran is None:
        return
    analysis = analyse(command)
    seen = {tuple(form) for s in analysis.segments for form in (s.argv, *s.forms)}
    heads = {form[0] for form in seen if form}
    clean = not any(s.findings for s in analysis.segments)
    dynamic = "`" in command or "$(" in command
    if dynamic and not clean:
        # A name glued to a substitution's output (aa`#`aa runs aaaa) is made at
        # run time: it is asked about, and no rule can match it by name.
        return
    for argv in ran:
        # Deny rules name plain commands (rm, curl): each of those must be seen,
        # whatever the analysis thought of the rest.
        if argv and argv[0].isalnum():
            assert argv[0] in heads, f"bash runs {argv} unseen in {command!r}"
        if clean:
            assert argv in seen, f"bash runs {argv} but {command!r} was read as {seen}"


@pytest.mark.parametrize("command", KNOWN)
def test_known_misreadings_are_seen(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)
    assert any(s.findings for s in analyse(command).segments), command


@pytest.mark.parametrize("command", EMPTY_SUBSTITUTIONS)
def test_empty_substitutions_vanish(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)
    assert ("rm", "-rf", "/") in {s.argv for s in analyse(command).segments}


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=st.lists(st.sampled_from(_PIECES), min_size=2, max_size=9).map("".join))
# A `#` glued to a quoted word, an escaped tab, a newline: bash runs rm, which
# tree-sitter had glued onto the word as the comment's next line. After `{}`,
# tree-sitter read an empty group and a comment.
@example(command="'q r'#\\\t\nrm -rf /")
@example(command="aa;{}#;rm -rf /")
# tree-sitter reads the `;` after `==` as an error inside the command; bash ends it.
@example(command="aa{ ==;aa")
def test_every_command_bash_runs_is_seen(command: str, tmp_path: Path) -> None:
    check_seen(command, tmp_path)


# --- payload extraction (issue 10): what wrappers run is a segment of its own ----------
#
# bash runs each generated string with PATH holding only a temp bin dir. There, each
# wrapper name (env, xargs, find, timeout, nice, nohup) is a script that logs its
# argv and execs the REAL binary, which in turn execs its payload through PATH; each
# payload name (aa, bb, rm) is a script that only logs its argv and exits 0 (never
# the real rm). Every argv so logged must be some segment's argv: the wrapper's own
# segment, and the payload's segment (a ``{}`` there stands for what find fills in).
# No generated string touches PATH (no env -i, -u PATH, PATH=), so every exec stays
# inside the temp bin dir.

_WRAPPERS = ("env", "xargs", "find", "timeout", "nice", "nohup")
_PAYLOAD_NAMES = ("aa", "bb", "rm")
_LOG_LINE = 'printf "%s\\037" "{name}" "$@" "$SG_END" >>"$SG_LOG"\n'
_RECORD_PAYLOADS = (
    'command_not_found_handle() { printf "%s\\037" "$@" "$SG_END" >>"$SG_LOG"; return 0; }\n'
    'eval "$1"\n'
)


def _real_binary(name: str) -> str | None:
    for directory in ("/usr/bin", "/bin"):
        path = Path(directory) / name
        if path.is_file():
            return str(path)
    return None


_REAL = {name: _real_binary(name) for name in _WRAPPERS}
_HAVE_WRAPPERS = all(_REAL.values())


def _bin_dir(tmp: Path) -> Path:
    bin_dir = tmp / "bin"
    if bin_dir.is_dir():
        return bin_dir
    bin_dir.mkdir()
    for name in _PAYLOAD_NAMES:
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + _LOG_LINE.format(name=name) + "exit 0\n")
        script.chmod(0o755)
    for name, real in _REAL.items():
        assert real is not None
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + _LOG_LINE.format(name=name) + f'exec {real} "$@"\n')
        script.chmod(0o755)
    return bin_dir


def wrappers_run(command: str, tmp: Path) -> list[tuple[str, ...]] | None:
    """Every argv bash and the real wrappers run for ``command`` (None: it hung)."""
    bin_dir = _bin_dir(tmp)
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    log = tmp / "payloads.log"
    log.write_bytes(b"")
    assert BASH is not None
    try:
        subprocess.run(
            [BASH, "--norc", "--noprofile", "-c", _RECORD_PAYLOADS, "sg", command],
            env={"SG_LOG": str(log), "SG_END": "\x1e", "PATH": str(bin_dir)},
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    records = log.read_bytes().decode("utf-8", "replace").split("\x1e\x1f")[:-1]
    return [tuple(r.split("\x1f")[:-1]) for r in records]


def _fits(segment_argv: tuple[str, ...], ran: tuple[str, ...]) -> bool:
    return len(segment_argv) == len(ran) and all(
        want == got or want == "{}" for want, got in zip(segment_argv, ran, strict=True)
    )


def check_payloads_seen(command: str, tmp: Path) -> None:
    ran = wrappers_run(command, tmp)
    if ran is None:
        return
    argvs = [s.argv for s in analyse(command).segments]
    for argv in ran:
        assert any(_fits(seen, argv) for seen in argvs), (
            f"{command!r} runs {argv}, which is no segment's argv: {argvs}"
        )


# Each wrapper as a template around its payload ("@" marks the payload).
_WRAP_TEMPLATES = [
    "env @", "env A=1 @", "env -- @", "env LANG=C B=2 @", "env -u A @",
    "xargs @", "xargs -0 @", "xargs -n 1 @", "xargs -- @",
    "find . -maxdepth 0 -exec @ {} \\;", "find . -maxdepth 0 -execdir @ \\;",
    "find . -maxdepth 0 -exec @ {} +",
    "timeout 5 @", "timeout -s KILL 5 @", "timeout --kill-after=1 5 @",
    "nice @", "nice -n 1 @", "nice --adjustment=1 @",
    "nohup @",
]  # fmt: skip
_ARGS = ["x", "y", "-f", "'q r'", '"d e"', "z=1"]

_payload_base = st.tuples(
    st.sampled_from(_PAYLOAD_NAMES), st.lists(st.sampled_from(_ARGS), max_size=3)
).map(lambda t: " ".join((t[0], *t[1])))
_wrapped = st.recursive(
    _payload_base,
    lambda inner: st.tuples(st.sampled_from(_WRAP_TEMPLATES), inner).map(
        lambda t: t[0].replace("@", t[1])
    ),
    max_leaves=4,
)
_payload_commands = st.one_of(
    _wrapped,
    st.tuples(_wrapped, st.sampled_from([" | ", "; ", " && "]), _wrapped).map("".join),
)

KNOWN_PAYLOADS = [
    "env A=1 aa x",
    "xargs -0 bb",
    "find . -maxdepth 0 -exec aa {} \\;",
    "timeout 5 nice -n 1 bb y",
    "nohup env A=1 timeout 5 aa 'q r'",
    "env -S 'aa x'",
    "env -- bb",
    "xargs -n 1 env aa",
    "find . -maxdepth 0 -execdir timeout 5 aa {} +",
    "nice -n 1 xargs aa y",
    "aa x | xargs bb",
    "env A=1 rm -f x",
    "timeout -s KILL 5 rm x",
    "find . -maxdepth 0 -exec nice rm {} \\;",
    "find . -maxdepth 0 -exec aa {} \\; -exec bb {} \\;",
    "command env aa",
    "nohup nohup aa",
    "xargs xargs xargs aa",
    "env env env bb x",
]

needs_wrappers = pytest.mark.skipif(not _HAVE_WRAPPERS, reason="needs env/xargs/find/…")


@needs_wrappers
@pytest.mark.parametrize("command", KNOWN_PAYLOADS)
def test_known_payloads_are_segments(command: str, tmp_path: Path) -> None:
    check_payloads_seen(command, tmp_path)


@needs_wrappers
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(command=_payload_commands)
@example(command="env A=1 aa x")
@example(command="xargs -0 bb")
@example(command="find . -maxdepth 0 -exec aa {} \\;")
@example(command="timeout 5 nice -n 1 bb y")
@example(command="nohup xargs -n 1 find . -maxdepth 0 -exec env B=2 rm -f {} \\;")
def test_every_payload_a_wrapper_runs_is_a_segment(command: str, tmp_path: Path) -> None:
    check_payloads_seen(command, tmp_path)


@needs_wrappers
def test_payload_harness_logs_wrapper_and_payload(tmp_path: Path) -> None:
    """The harness itself: the wrapper and its payload are both logged, nothing else runs."""
    ran = wrappers_run("timeout 5 nice -n 1 bb y", tmp_path)
    assert ran == [
        ("timeout", "5", "nice", "-n", "1", "bb", "y"),
        ("nice", "-n", "1", "bb", "y"),
        ("bb", "y"),
    ]
    assert wrappers_run("find . -maxdepth 0 -exec aa {} \\;", tmp_path) == [
        ("find", ".", "-maxdepth", "0", "-exec", "aa", "{}", ";"),
        ("aa", "."),
    ]
