"""Red-team findings on go test, python -m pytest and rsync (catalog build.py,
archivers.py), decided by the real decider over ``fixtures/allowlist``, which
allows ``go test *``, ``python -m pytest *`` and ``rsync *``.

Writes into ``.git/hooks`` (or ``~/.bashrc``) are denied by protected paths;
code-loading options and deletions are findings (ask); the everyday spellings
stay allowed.
"""

from __future__ import annotations

import pytest

from shellgate.models import Effect
from tests.shell.allowlist_helpers import NOT_ALLOW, A, D, K, p, verdict

CASES = [
    # 1. go test takes every test flag with a `test.` prefix too.
    p("go-test-dot-cpuprofile", "go test -test.cpuprofile=.git/hooks/x", D),
    p("go-test-dot-coverprofile", "go test -test.coverprofile=.git/hooks/x ./...", D),
    p("go-test-dot-trace", "go test -test.trace .git/hooks/x ./...", D),
    p("go-test-dot-outputdir", "go test -test.outputdir=.git/hooks ./...", D),
    p("go-test-outputdir-join", "go test -outputdir=.git -cpuprofile=hooks/x ./...", D),
    p("go-test-chdir-join", "go test -C .git -cpuprofile=hooks/x ./...", D),
    # 2. the go command's own debug outputs.
    p("go-debug-actiongraph", "go test -debug-actiongraph=.git/hooks/x ./...", D),
    p("go-debug-trace", "go test -debug-trace=.git/hooks/x ./...", D),
    p("go-debug-runtime-trace", "go test -debug-runtime-trace=.git/hooks/x ./...", D),
    # 3. files the compiler and linker write, named inside their flags.
    p("go-gcflags-cpuprofile", "go test -gcflags=-cpuprofile=.git/hooks/x ./...", D),
    p("go-gcflags-pattern", "go test -gcflags=all=-cpuprofile=.git/hooks/x ./...", D),
    p("go-gcflags-separate", "go test -gcflags '-memprofile .git/hooks/x' ./...", D),
    p("go-gcflags-trace", "go test '-gcflags=-N -trace=.git/hooks/x' ./...", D),
    p("go-ldflags-cpuprofile", "go test -ldflags=-cpuprofile=.git/hooks/x ./...", D),
    p("go-asmflags-o", "go test -asmflags=all=-o=.git/hooks/x ./...", D),
    # 4. flags handed to gcc (-B DIR, -fplugin=) load code.
    p(
        "go-ldflags-extldflags",
        "go test -ldflags='-linkmode=external -extldflags=-B/tmp/evil/' ./...",
        K,
    ),
    p("go-ldflags-extldflags-separate", "go test -ldflags '-extldflags -B/tmp/e/' ./...", K),
    p("go-ldflags-extar", "go test -ldflags=-extar=/tmp/evil ./...", K),
    p("go-gccgoflags", "go test -gccgoflags=-fplugin=x.so ./...", K),
    p("go-compiler-gccgo", "go test -compiler=gccgo ./...", K),
    # 5. ini overrides that load code.
    p("pytest-o-addopts", "python -m pytest -o addopts=-pevil", K),
    p("pytest-o-glued", "python -m pytest -oaddopts=-pevil", K),
    p("pytest-override-ini", "python -m pytest --override-ini=addopts=-pevil", K),
    p("pytest-override-abbrev", "python -m pytest --overr=addopts=-pevil", K),
    p("pytest-o-required-plugins", "python -m pytest -o required_plugins=evil", K),
    p("pytest-o-pytest-plugins", "python -m pytest -o pytest_plugins=evil", K),
    p("pytest-o-python-files", "python -m pytest -o 'python_files=*.py'", K),
    p("pytest-o-pythonpath", "python -m pytest -o pythonpath=/tmp/evil", K),
    p("pytest-o-filterwarnings", "python -m pytest -o filterwarnings=error::evilmod.W", K),
    # 6. a warning category with a module path imports that module.
    p("pytest-W-module", "python -m pytest -W error::evilmod.W", K),
    p("pytest-W-glued", "python -m pytest -Werror::evilmod.W", K),
    p("pytest-pythonwarnings", "python -m pytest --pythonwarnings=error::evilmod.W", K),
    # 7. debugger class, conftest.py reach, imports by name.
    p("pytest-pdbcls", "python -m pytest --pdbcls=mod:Cls", K),
    p("pytest-pdbcls-abbrev", "python -m pytest --pdbc=mod:Cls", K),
    p("pytest-confcutdir", "python -m pytest --confcutdir=/tmp", K),
    p("pytest-rootdir", "python -m pytest --rootdir=/tmp", K),
    p("pytest-pyargs", "python -m pytest --pyargs pkg", K),
    # 8. a source without a trailing slash lands as DEST/NAME.
    p("rsync-git-dir", "rsync -a src/.git .", D),
    p("rsync-bashrc", "rsync src/.bashrc ~/", D),
    p("rsync-remote-source-git", "rsync -a host:src/.git .", D),
    p("rsync-relative", "rsync -aR a/./.git/hooks/x .", D),
    # 9. --delete and its kin delete from DEST.
    p("rsync-delete-root", "rsync -a --delete empty/ /", NOT_ALLOW),
    p("rsync-delete", "rsync -a --delete empty/ dst/", K),
    p("rsync-del", "rsync -a --del empty/ dst/", K),
    p("rsync-delete-before", "rsync -a --delete-before empty/ dst/", K),
    p("rsync-delete-during", "rsync -a --delete-during empty/ dst/", K),
    p("rsync-delete-delay", "rsync -a --delete-delay empty/ dst/", K),
    p("rsync-delete-after", "rsync -a --delete-after empty/ dst/", K),
    p("rsync-delete-excluded", "rsync -a --delete-excluded empty/ dst/", K),
    p("rsync-delete-missing-args", "rsync -a --delete-missing-args empty/ dst/", K),
    p("rsync-delete-remote", "rsync -a --delete empty/ host:/srv", K),
    p("rsync-delete-hooks", "rsync -a --delete empty/ .git/hooks/", D),
    # controls: the everyday spellings stay allowed.
    p("go-test-all", "go test ./...", A),
    p("go-test-run-v", "go test -run X -v ./pkg", A),
    p("go-test-coverprofile", "go test -coverprofile=c.out ./...", A),
    p("go-test-dot-v", "go test -test.v -test.run=X ./...", A),
    p("go-test-count-after", "go test ./... -count=1 -run TestX", A),
    p("go-test-gcflags-plain", "go test -gcflags 'all=-N -l' ./...", A),
    p("go-test-ldflags-plain", "go test -ldflags '-s -w -X main.v=1' ./...", A),
    p("pytest-q", "python -m pytest -q tests", A),
    p("pytest-k-x", "python -m pytest -k x -x", A),
    p("pytest-o-log-cli", "python -m pytest -o log_cli=true", A),
    p("pytest-W-builtin", "python -m pytest -W error::DeprecationWarning", A),
    p("pytest-W-module-field", "python -m pytest -W 'ignore:m:UserWarning:some.mod'", A),
    p("rsync-contents", "rsync -a src/ dst/", A),
    p("rsync-file-into-dir", "rsync -av a.txt b/", A),
    p("rsync-dir-into-dir", "rsync -a src dst/", A),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_redteam(command: str, expected: str) -> None:
    got: Effect = verdict(command).effect
    if expected == NOT_ALLOW:
        assert got in (K, D), command
    else:
        assert got == expected, command
