"""Build tools in the catalog: programs they run, code they load, files they write.

Real ``analyse`` calls and real decisions under the two test policies
(``shell_policy_helpers``): a program named by an option is its own segment, so
``rm x`` hidden in ``go test -exec`` is denied like ``rm x`` itself.
"""

from __future__ import annotations

import pytest

from shellgate.models import Segment
from shellgate.shell import analyse
from tests.shell.shell_policy_helpers import WORKDIR, decision

W = WORKDIR


def first(command: str) -> Segment:
    return analyse(command, workdir=W).segments[0]


PAYLOADS = [
    "go test -exec 'rm x' ./...",
    "go test --exec=rm ./...",
    "go test ./... -exec rm",
    "go build -toolexec='rm x' ./...",
    "go vet -vettool=rm ./...",
    "go build -ldflags='-extld=rm' .",
    "go build -ldflags '-s -extld rm' .",
    "go build -ldflags=all=-extld=rm .",
    "npm test --script-shell=rm",
    "npm test -script-shell rm",
    "npm exec --call='rm x'",
    "mypy --python-executable=rm src",
    "dmypy run -- --python-executable rm",
]


@pytest.mark.parametrize("command", PAYLOADS)
def test_program_options_are_denied_with_a_denied_program(command: str) -> None:
    assert decision(command, "denylist") == "deny"


@pytest.mark.parametrize("command", PAYLOADS)
def test_program_options_are_never_allowed(command: str) -> None:
    assert decision(command, "allowlist") != "allow"


FINDINGS = [
    "make --eval='x:;id'", "make --ev=x", "make -E x", "make -iE 'all:;@id'", "make -f -",
    "make --file=/dev/stdin", "make --makef=/proc/self/fd/0", "make -f//dev/stdin",
    "make SHELL=/tmp/evil", "make 'X!=reboot'", "make CC='gcc; id' all",
    "make -o -- --eval=x", "make -W -- SHELL=/tmp/x", "make MAKEFILES=/dev/stdin",
    "cargo build --config build.rustc-wrapper=/tmp/w", "cargo -Zunstable-options build",
    "cargo build --manifest-path=/dev/stdin",
    "kubectl get pods --kubeconfig=/tmp/k", "kubectl get pods -s https://x",
    "kubectl get pods --server=https://x", "kubectl get --token=t pods",
    "kubectl get pods --as=admin", "kubectl get pods --insecure-skip-tls-verify",
    "kubectl get pods -L -- --kubeconfig=/tmp/k",
    "tox -x testenv.commands=id", "tox -rx testenv.commands=id", "tox --overr a=b",
    "tox -c /tmp/tox.ini",
    "mypy --install-types", "mypy --install-t src", "mypy @/dev/stdin",
    "mypy --config-file=/tmp/m.ini src",
    "pytest -p evil_plugin", "pytest -pevil", "pytest -c /tmp/pytest.ini",
    "pytest --config-file=/tmp/p.ini",
    "npm test --node-opt=--require=x", "npm test ---userconfig=/tmp/rc",
    "npm test --globalconfig /tmp/rc",
]  # fmt: skip


@pytest.mark.parametrize("command", FINDINGS)
def test_code_loading_options_are_findings(command: str) -> None:
    assert first(command).findings
    assert decision(command, "denylist") == "ask"


@pytest.mark.parametrize(
    "command",
    ["make", "make -j4 test", "make -j 4 test", "make -k -i all", "make CFLAGS=-O2 test",
     "make -f Makefile test", "make -C sub all", "cargo build --release", "cargo test -p x",
     "go test ./...", "go test -run TestX -count=1 ./...", "go build -o bin/app .",
     "kubectl get pods -n web", "tox -e py311", "mypy src", "mypy --strict -p pkg",
     "pytest -q", "pytest -p no:cacheprovider -x", "pytest -k 'a and b' tests",
     "ruff check src", "npm test", "npm test -s", "npm run build"],
)  # fmt: skip
def test_the_ordinary_build_has_no_findings(command: str) -> None:
    assert first(command).findings == ()


WRITES = [
    ("go build -o .git/hooks/x .", ".git/hooks/x"),
    ("go test -coverprofile=.git/hooks/x ./...", ".git/hooks/x"),
    ("go test --cpuprofile .git/hooks/x ./...", ".git/hooks/x"),
    ("go test ./... -trace=.git/hooks/x", ".git/hooks/x"),
    ("pytest --junitxml=.git/hooks/x", ".git/hooks/x"),
    ("pytest --junit-x=.git/hooks/x", ".git/hooks/x"),
    ("pytest --log-file .git/hooks/x", ".git/hooks/x"),
    ("pytest --debug=.git/hooks/x", ".git/hooks/x"),
    ("pytest --debug", "pytestdebug.log"),
    ("pytest --cov-report=xml:.git/hooks/x", ".git/hooks/x"),
    ("pytest -o log_file=.git/hooks/x", ".git/hooks/x"),
    ("pytest -xo cache_dir=.git/hooks", ".git/hooks"),
    ("pytest --override-ini=cache_dir=.git/hooks", ".git/hooks"),
    ("pytest --basetemp=.git/hooks", ".git/hooks"),
    ("py.test --html=.git/hooks/x", ".git/hooks/x"),
    ("mypy --html-report .git/hooks src", ".git/hooks"),
    ("mypy --junit-xml=.git/hooks/x src", ".git/hooks/x"),
    ("dmypy start --log-file=.git/hooks/x", ".git/hooks/x"),
    ("ruff check -o .git/hooks/x", ".git/hooks/x"),
    ("ruff check -eo .git/hooks/x .", ".git/hooks/x"),
    ("ruff check --cache-dir=.git/hooks", ".git/hooks"),
    ("cargo build --target-dir=.git/hooks", ".git/hooks"),
    ("tox -e py --result-json=.git/hooks/x", ".git/hooks/x"),
    ("tox --workdir .git/hooks", ".git/hooks"),
    ("npm test --cache=.git/hooks", ".git/hooks"),
    ("npm test -prefix=.git/hooks", ".git/hooks"),
    ("python3 -m pytest --basetemp=.git/hooks", ".git/hooks"),
]


@pytest.mark.parametrize(("command", "target"), WRITES)
def test_write_options_land_in_writes(command: str, target: str) -> None:
    assert f"{W}/{target}" in first(command).write_paths


def test_basetemp_is_a_deletion() -> None:
    assert any("empties or deletes" in f for f in first("pytest --basetemp=tmp").findings)


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("go test -run X -exec=/tmp/x ./...", "go test -exec=/tmp/x -run=X ./..."),
        ("go test --count 1 ./...", "go test -count=1 ./..."),
        ("make -j4 --eval=x all", "make -Ex -j4 all"),
        ("make --silent all", "make all"),
        ("pytest -q --junit-xml=r.xml", "pytest --junitxml=r.xml"),
        ("tox -rx a=b", "tox -r -xa=b"),
        ("npm ---script-sh=x test", "npm --script-shell=x test"),
        ("kubectl get pods --namespace=web", "kubectl -nweb get pods"),
        ("kubectl get -n web pods", "kubectl -nweb get pods"),
    ],
)
def test_canonical_forms(command: str, canonical: str) -> None:
    assert first(command).canonical == (canonical,)
