"""The interpreters and builtins families of the catalog, through the real analyser.

Every spelling of awk's and sed's code-running and file-writing options and
commands is a finding or a write target; plain reads stay clean; payloads with
a denied program are denied; canonical forms spell options one way.
"""

from __future__ import annotations

import os

import pytest

from shellgate.models import CallInfo, Decision, Segment
from shellgate.policy.builtin import AnalysisLayer
from shellgate.policy.engine import Layer, decide
from shellgate.shell import analyse
from shellgate.shell.catalog.sedscript import read_sed
from tests.shell.shell_policy_helpers import WORKDIR, call_for, decision, matches

HOME = os.path.expanduser("~")


def segments(command: str) -> tuple[Segment, ...]:
    return analyse(command, workdir=WORKDIR).segments


def findings(command: str) -> list[str]:
    return [f for s in segments(command) for f in s.findings]


def writes(command: str) -> set[str]:
    return {w for s in segments(command) for w in s.write_paths}


def canonical(command: str) -> tuple[str, ...]:
    return segments(command)[0].canonical


# -- sed ------------------------------------------------------------------------

SED_RUNS = [
    "sed e f", "sed 'e id' f", "sed '1e id' f", "sed '$e' f", "sed '/x/e id' f",
    "sed '1,3e' f", "sed '/a/,/b/ e' f", "sed '0~3e' f", "sed '1!e' f", "sed '1 ! e id' f",
    "sed '1,+2e' f", "sed '\\%x%e' f", "sed '/x/I e' f", "sed '{e id\n}' f",
    "sed '1{p;e id\n}' f", "sed 'p;e' f", "sed 'p\ne id' f", "sed 's/a/b/e' f",
    "sed 's|a|b|ge' f", "sed 's/a/b/2e' f", "sed 'p;s/x/y/e' f", "sed -e 's/a/b/e' f",
    "sed --expression='1e id' f", "sed --expr '1e id' f", "sed --e=e f", "sed -ne 1e f",
    "sed -nEe '1e id' f", "sed -n -s -z -e '$e' f", "sed -E 's/(a)/\\1/e' f",
    "sed -e p -e 'e id' f", "sed f -e 1e", "sed ':a;e id' f", "sed 'b x;e id' f",
    "gsed 1e f", "/bin/sed '1e id' f",
]  # fmt: skip


@pytest.mark.parametrize("command", SED_RUNS)
def test_every_spelling_of_sed_e_is_a_finding(command: str) -> None:
    assert any("runs commands (e)" in f for f in findings(command)), findings(command)


SED_WRITES = [
    ("sed 'w out' f", "out"), ("sed -n '1w out' f", "out"), ("sed '$W out' f", "out"),
    ("sed '/x/w out' f", "out"), ("sed 's/a/b/w out' f", "out"), ("sed 's/a/b/gw out' f", "out"),
    ("sed -e 'p;w my out;x' f", "my out;x"), ("sed '1{w out\n}' f", "out"),
    ("sed --expression='w .git/hooks/pre-commit' f", ".git/hooks/pre-commit"),
    (f"sed -n 's/x/y/w {HOME}/.bashrc' f", f"{HOME}/.bashrc"),
    ("sed -i s/a/b/ f", "f"), ("sed -i.bak s/a/b/ f", "f"), ("sed --in-pl s/a/b/ f", "f"),
    ("sed --in-place=.b -e s/a/b/ f g", "g"), ("sed -ni s/a/b/ f", "f"),
    ("sed s/a/b/ -i f", "f"), ("sed -f s.sed -i f", "f"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "target"), SED_WRITES)
def test_sed_writes_are_write_targets(command: str, target: str) -> None:
    expected = target if target.startswith("/") else f"{WORKDIR}/{target}"
    assert expected in writes(command), writes(command)


@pytest.mark.parametrize(
    ("command", "text"),
    [("sed -f s.sed f", "script read from a file"), ("sed --file=s.sed f", "from a file"),
     ("sed -nf s.sed f", "from a file")],
)  # fmt: skip
def test_sed_script_files_are_findings(command: str, text: str) -> None:
    assert any(text in f for f in findings(command)), findings(command)


@pytest.mark.parametrize(
    ("command", "read"),
    [("sed 'r /etc/shadow' f", "/etc/shadow"), ("sed '1R x y' f", "x y"),
     ("sed -e '$r a;d' f", "a;d"), ("sed -n '/x/{r in\n}' f", "in")],
)  # fmt: skip
def test_sed_r_files_are_mentions_not_findings(command: str, read: str) -> None:
    """The file ends at the line's end, as sed reads it; the reads and secrets
    layers check it as they check an operand."""
    (segment,) = segments(command)
    assert read in segment.reads
    assert segment.mentions == ()
    assert findings(command) == []


SED_CLEAN = [
    "sed -n 1,5p f", "sed s/a/b/ f", "sed -E 's/(x)+/y/g' f", "sed '/e/d' f",
    "sed 's/e/w/' f", "sed 's/x/e/g' f", "sed 'y/ew/we/' f", "sed '1i\\\nwe edit' f",
    "sed '1a e w r' f", "sed '$!N;P;D' f", "sed -n '/start/,/end/p' f", "sed 'q5' f",
    "sed '# e id' f", "sed -e 1d -e '$d' f", "sed -s -n '$p' a b", "sed -z s/x/y/ f",
]  # fmt: skip


@pytest.mark.parametrize("command", SED_CLEAN)
def test_plain_sed_scripts_stay_clean(command: str) -> None:
    assert findings(command) == []
    assert writes(command) == set()


class _AllowSed:
    name = "allow-sed"

    def check(self, call: CallInfo, segment: Segment) -> Decision | None:
        del call
        if matches("sed *", segment.argv):
            return Decision(effect="allow", reason="allowed by sed *", layer=self.name)
        return None


def test_sed_print_range_is_allowed_under_an_allow_rule() -> None:
    analysis_layer = AnalysisLayer()
    layers = [
        Layer(analysis_layer.name, analysis_layer.shellgate_check),
        Layer("allow-sed", _AllowSed().check),
    ]
    for command, effect in (("sed -n 1,5p f", "allow"), ("sed '1e id' f", "ask")):
        verdict = decide(
            call_for(command), analyse(command, workdir=WORKDIR), layers, default="ask"
        )
        assert verdict.effect == effect, command


def test_sed_e_command_is_its_own_segment() -> None:
    assert decision("sed '1e rm x' f", "denylist") == "deny"
    assert decision("sed -n '/a/,/b/{e rm x\n}' f", "denylist") == "deny"


def test_sed_script_reader_skips_text_and_labels() -> None:
    found = read_sed("a\\\ne id\nb e\n:w\ns/w/e/w out\ny/e/w/\n$e date")
    assert found.runs == ["date"]
    assert found.writes == ["out"]


# -- awk ------------------------------------------------------------------------

AWK_FINDINGS = [
    ("awk -f prog.awk data", "-f"), ("awk --file=prog.awk data", "--file"),
    ("gawk --fi prog.awk data", "--fi"), ("gawk -E prog.awk data", "-E"),
    ("gawk --exec prog.awk", "--exec"), ("gawk -i lib.awk '{print}'", "-i"),
    ("gawk --include=lib '{print}'", "--include"), ("gawk -l ext '{print}'", "-l"),
    ("gawk --load=ext '{print}'", "--load"), ("gawk -lext '{print}'", "-l"),
    ("mawk -W exec prog.awk", "--exec"), ("mawk -Wexec prog.awk", "--exec"),
    ("mawk -We prog.awk", "--e"), ("gawk -W exec=prog.awk", "--exec"),
    ("gawk -W file=prog.awk x", "--file"), ("gawk -nW load=ext 1", "--load"),
    ("gawk -D '{print}'", "-D"), ("gawk --debug=cmds '{print}'", "--debug"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "option"), AWK_FINDINGS)
def test_awk_options_that_load_code_are_findings(command: str, option: str) -> None:
    name = command.split()[0]
    assert any(f.startswith(f"'{name} {option}'") for f in findings(command)), findings(command)


AWK_PROGRAMS = [
    "awk 'BEGIN{system(\"id\")}'", "awk '{print | \"sh\"}' f", "awk '{\"id\" | getline x}'",
    "awk '{print > \"out\"}' f", "gawk '@load \"filefuncs\"; {print}' f",
    "gawk '@include \"x.awk\"' f", "awk 'BEGIN{print ENVIRON[\"HOME\"]}'",
    "gawk 'BEGIN{print PROCINFO[\"pid\"]}'", "gawk 'BEGIN{f=\"system\"; @f(\"id\")}'",
    "gawk 'BEGIN{ @ name (1) }'", "gawk -e 'BEGIN{system(\"id\")}' f",
    "gawk --source='BEGIN{system(\"id\")}'", "gawk -W source='BEGIN{system(1)}'",
    "awk -v x=1 -F: 'BEGIN{system(\"id\")}'", "awk -- 'BEGIN{system(1)}'",
]  # fmt: skip


@pytest.mark.parametrize("command", AWK_PROGRAMS)
def test_awk_programs_that_run_or_write_are_findings(command: str) -> None:
    assert any("program can run commands" in f for f in findings(command)), findings(command)


AWK_OUTPUTS = [
    ("gawk -o '{print}' f", "awkprof.out"), ("gawk -oout.awk '{print}' f", "out.awk"),
    ("gawk --pretty-print '{print}' f", "awkprof.out"),
    ("gawk --pretty-print=p.awk '{print}' f", "p.awk"), ("gawk --pre=p.awk 1 f", "p.awk"),
    ("gawk -p '{print}' f", "awkprof.out"), ("gawk -pprof '{print}' f", "prof"),
    ("gawk --profile '{print}' f", "awkprof.out"), ("gawk --profile=prof 1 f", "prof"),
    ("gawk -d '{print}' f", "awkvars.out"), ("gawk -dvars 1 f", "vars"),
    ("gawk --dump-variables 1 f", "awkvars.out"), ("gawk --dump=v 1 f", "v"),
    ("gawk -W profile=prof 1 f", "prof"), ("gawk -W dump-variables 1 f", "awkvars.out"),
    ("gawk --profile=.git/hooks/pre-commit 1 f", ".git/hooks/pre-commit"),
    (f"gawk -d{HOME}/.bashrc 1 f", f"{HOME}/.bashrc"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "target"), AWK_OUTPUTS)
def test_awk_file_writing_options_are_write_targets(command: str, target: str) -> None:
    expected = target if target.startswith("/") else f"{WORKDIR}/{target}"
    assert expected in writes(command), writes(command)


def test_awk_output_outside_the_workdir_is_a_write_the_rules_decide() -> None:
    assert "/tmp/prof" in writes("gawk -p/tmp/prof 1 f")


AWK_CLEAN = [
    "awk '{print $1}' f", "awk -F: '{print $1}' /etc/passwd", "awk -v n=3 'NR<n' f",
    "gawk -e '{print}' f", "awk 'NR==1' f", "awk -- '{print}' f", "gawk --version",
    "awk '{print}' -f x",  # after the program -f is an operand, not an option
]  # fmt: skip


@pytest.mark.parametrize("command", AWK_CLEAN)
def test_plain_awk_programs_stay_clean(command: str) -> None:
    assert findings(command) == []
    assert writes(command) == set()


# -- shells and interpreters ------------------------------------------------------


#: Code an interpreter runs itself is covered by the allow of that invocation: no
#: finding for plain code (docs/analysis.md "Code a program runs itself").
OWN_CODE = [
    "python3 -c pass", "python3 -Bc pass", "python3.12 -cpass", "pypy3 -c 'print(1)'",
    "perl -e 1", "perl -lne print f", "perl5.36 -E say", "ruby -e x", "jruby -e x",
    "node -e x", "node --eval=x", "node -pe x", "bun -e x", "php -r x", "php8.2 -R x",
    "php --run x", "lua -e x", "lua5.4 -e x", "luajit -e x", "Rscript -e x", "expect -c x",
    "deno repl --eval x", "deno eval x", "sqlite3 -readonly db 'SELECT 1'", "psql -c 'select 1'",
]  # fmt: skip


@pytest.mark.parametrize("command", OWN_CODE)
def test_an_interpreters_own_code_is_no_finding(command: str) -> None:
    assert findings(command) == [], findings(command)


#: One step away: the same code starting a program, using the network, loading
#: native code, or picking what it imports at run time is a finding.
ESCAPING_CODE = [
    ("python3 -c 'import os; os.system(\"sh\")'", "starts other programs"),
    ("python3 -c 'import subprocess; subprocess.run([\"id\"])'", "starts other programs"),
    ("python3 -c 'import pty; pty.spawn(\"/bin/sh\")'", "starts other programs"),
    ("python3 -c 'import socket'", "uses the network"),
    ("python3 -c 'import urllib.request as u; u.urlretrieve(\"http://x/y\", \"y\")'",
     "uses the network"),
    ("python3 -c 'import ctypes; ctypes.CDLL(\"./x.so\")'", "loads native code"),
    ("python3 -c '__import__(chr(111)+chr(115))'", "by a name built at run time"),
    ("perl -e 'system(\"id\")'", "starts other programs"), ("perl -e 'exec \"sh\"'", "starts"),
    ("perl -e 'use IO::Socket'", "uses the network"), ("ruby -e '`id`'", "starts other programs"),
    ("ruby -e 'exec \"sh\"'", "starts"), ("node -e 'require(\"child_process\")'", "starts"),
    ("node -e 'require(\"net\")'", "uses the network"), ("php -r 'system(\"id\");'", "starts"),
    ("lua -e 'os.execute(\"id\")'", "starts"), ("Rscript -e 'system(\"id\")'", "starts"),
    ("expect -c 'spawn sh'", "starts"), ("deno eval 'Deno.run({cmd:[\"id\"]})'", "starts"),
    ("sqlite3 db '.shell id'", "starts"), ("psql -c '\\! id'", "starts"),
    ("mysql -e 'system id'", "starts"), ("sqlite3 db \"SELECT load_extension('x')\"", "native"),
    ("sqlite3 db \".output /tmp/x\"", "writes files"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "what"), ESCAPING_CODE)
def test_code_that_escapes_the_interpreter_is_a_finding(command: str, what: str) -> None:
    assert any(what in f for f in findings(command)), findings(command)


@pytest.mark.parametrize(
    ("command", "option"),
    [("osascript -e x", "-e"), ("pwsh -Command ls", "-Command"), ("pwsh -c ls", "-c"),
     ("pwsh -enc aQBkAA==", "-enc"), ("pwsh --comm ls", "--comm"),
     ("pwsh -COMMAND ls", "-COMMAND"), ("powershell.exe -ec x", "-ec"),
     ("node --import=data:text/javascript,x", "--import")],
)  # fmt: skip
def test_code_in_a_language_not_read_is_a_finding(command: str, option: str) -> None:
    name = command.split()[0]
    expected = f"'{name} {option}' runs inline code"
    assert expected in findings(command), findings(command)


@pytest.mark.parametrize(
    "command",
    ["powershell 'rm x'", "perl -M'POSIX;system 1' x.pl"],
)
def test_other_inline_code_is_a_finding(command: str) -> None:
    assert any("inline code" in f or "'use' line" in f for f in findings(command))


@pytest.mark.parametrize(
    "command",
    ["python3", "python3 -", "python3 /dev/stdin", "python3 -u", "perl", "ruby -w", "node",
     "php", "lua", "tclsh", "irb", "jshell", "pwsh -NoProfile", "node -i", "php -a"],
)  # fmt: skip
def test_interpreters_reading_stdin_are_findings(command: str) -> None:
    assert any("reads code from stdin" in f for f in findings(command)), findings(command)


@pytest.mark.parametrize(
    "command",
    ["python3 script.py -c x", "python3 -m mymodule -c x", "python3 -m http.server",
     "python3 -W error script.py", "perl -Mstrict x.pl", "perl -I lib x.pl", "node app.js -e",
     "php -f x.php -r", "ruby -I lib x.rb", "lua x.lua", "python3 --version", "node -v",
     "pwsh /tmp/x.ps1", "pwsh -File x.ps1", "bun run build", "gawk -V"],
)  # fmt: skip
def test_scripts_and_modules_are_not_inline_code(command: str) -> None:
    assert findings(command) == [], findings(command)


def test_in_place_perl_and_ruby_write_their_files() -> None:
    assert f"{HOME}/.bashrc" in writes(f"perl -pi -e s/a/b/ {HOME}/.bashrc")
    assert f"{WORKDIR}/f" in writes("ruby -i.bak -pe 'x' f")


def test_python_module_is_read_by_the_module_entry() -> None:
    # pytest and mypy are the build family's; their findings reach python -m.
    assert any("--install-types" in f for f in findings("python3 -m mypy --install-types"))


def test_python_module_pytest_plugin_is_read_by_build() -> None:
    assert findings("python3 -m pytest -p plugin")


@pytest.mark.parametrize(
    "command",
    ["bash -c 'rm x'", "sh -xc 'rm x'", "bash --norc -c 'rm x'", "fish --command='rm x'",
     "bash -c '\"$@\"' _ rm x", "sed '1e rm x' f", "mapfile -C 'rm x #' -c 1 <<< y",
     "complete -C 'rm x' cmd", "compgen -C 'rm x' w", "bind -x '\"\\C-x\": rm x'",
     "fc -e rm 1", "eval 'rm x'", "trap 'rm x' EXIT", "alias y='rm x'", "bash <<< 'rm x'"],
)  # fmt: skip
def test_payloads_with_a_denied_program_are_denied(command: str) -> None:
    assert decision(command, "denylist") == "deny"
    assert decision(command, "allowlist") != "allow"


@pytest.mark.parametrize(
    ("command", "form"),
    [("python3 -Bc pass", "python -B -cpass"), ("perl -lne print f", "perl -eprint -l -n f"),
     ("sed -ne 1p f", "sed -e1p -n f"), ("sed --quiet --expr=1p f", "sed -e1p -n f"),
     ("sed -r -n 1p f", "sed -E -n 1p f"), ("gawk --pretty-print=x 1", "gawk -ox 1"),
     ("python3 -m pytest -q", "python -mpytest -- -q"), ("bash -lc ls", "bash -c -l ls"),
     ("printf -v x %s y", "printf -vx %s y"), ("node --eval x", "node -ex")],
)  # fmt: skip
def test_canonical_forms(command: str, form: str) -> None:
    assert form in canonical(command), canonical(command)


# -- builtins ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "text"),
    [("enable -f ./x.so x", "shared library"), ("enable -n kill", "disables a builtin"),
     ("fc", "history"), ("fc -s", "history"), ("bind -f keys", "key bindings"),
     ("complete -F f cmd", "shell function"), ("compgen -W '$(id)' x", "word list"),
     ("compgen -V PATH w", "changes what commands do"), ("hash -p /tmp/x ls", "command name"),
     ("let x=1", "arithmetic"), ("source f", "on PATH first"), (". f", "on PATH first"),
     ("readarray -C cb x", "callback"), ("read -a PATH", "changes what commands do"),
     ("printf -v IFS x", "changes what commands do"), ("typeset -i x='a[$(id)]'", "subscript"),
     ("local -i x='a[$(id)]'", "subscript"), ("[ 'a[$(id)]' -gt 1 ]", "subscript")],
)  # fmt: skip
def test_builtins_that_run_or_set_are_findings(command: str, text: str) -> None:
    assert any(text in f for f in findings(command)), findings(command)


@pytest.mark.parametrize(
    "command",
    ["fc -l", "hash", "hash -r", "read -r line", "printf '%s\\n' x", "[ -f x ]", "test 1 -eq 1",
     "mapfile -t lines < f", "compgen -c", "enable"],
)  # fmt: skip
def test_plain_builtins_stay_clean(command: str) -> None:
    assert findings(command) == [], findings(command)
