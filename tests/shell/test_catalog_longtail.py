"""Issue 23's loosenings, each beside the dangerous neighbour one step away, and the
spellings deny rules must meet (docker, terraform), decided by the real decider
over real casbin files.

* runners: an allow naming a runner and its program covers that program and
  nothing more (``npx tsc *`` allows ``npx tsc --noEmit``, not ``npx tsc-x``,
  and ``npx *`` allows no program at all);
* ``fd -X CMD`` is ``find -exec CMD {} +``: CMD is its own segment, no finding;
* ``command -v NAME`` runs nothing: no deny rule on NAME meets it;
* awk comparisons are no redirections (``awkscript.py``, and its differential test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.shell import analyse
from tests.redteam.conftest import WORKSPACE_WRITABLE, Decide, decide_with_rules

RULES = WORKSPACE_WRITABLE + """\
p, agent, *, npx tsc *, allow
p, agent, *, npm exec eslint *, allow
p, agent, *, uv run pytest *, allow
p, agent, *, uvx ruff *, allow
p, agent, *, pnpm exec eslint *, allow
p, agent, *, pnpm dlx create-vite *, allow
p, agent, *, yarn exec jest *, allow
p, agent, *, bunx prettier *, allow
p, agent, *, poetry run pytest *, allow
p, agent, *, fd *, allow
p, agent, *, wc *, allow
p, agent, *, command *, allow
p, agent, *, awk *, allow
p, agent, *, sqlite3 *, allow
p, agent, *, docker *, allow
p, agent, *, terraform *, allow
p, agent, *, rm *, deny
p, agent, *, docker run --privileged *, deny
p, agent, *, docker push *, ask
p, agent, *, terraform apply *, deny
p, agent, *, terraform destroy *, deny
p, agent, *, podman *, allow
p, agent, *, podman run --privileged *, deny
p, agent, *, tofu *, allow
p, agent, *, tofu destroy *, deny
"""


@pytest.fixture(scope="module")
def decide(tmp_path_factory: pytest.TempPathFactory) -> Decide:
    return decide_with_rules(tmp_path_factory.mktemp("longtail"), RULES)


#: (loosened: now allowed, neighbour: still not allowed)
LOOSENINGS = [
    ("npx tsc --noEmit", "npx tsc-x --noEmit"),
    ("npx tsc --noEmit", "npx --package evil tsc --noEmit"),
    ("npx tsc", "npx tsc; rm -r x"),
    ("npm exec eslint .", "npm exec eslint-x ."),
    ("npm exec eslint .", "npm exec -c 'eslint .'"),
    ("uv run pytest -q", "uv run pytest-x -q"),
    ("uv run pytest -q", "uv run --with evil pytest -q"),
    ("uv run pytest", "uv run python -c 'import os'"),
    ("uvx ruff check .", "uvx --from evil ruff check ."),
    ("pnpm exec eslint .", "pnpm exec eslintx ."),
    ("pnpm dlx create-vite app", "pnpm dlx create-vitex app"),
    ("yarn exec jest", "yarn exec jest2"),
    ("bunx prettier --check .", "bunx prettier2 --check ."),
    ("poetry run pytest", "poetry run pytestx"),
    ("fd -e py -X wc -l", "fd -e py -X rm -l"),
    ("fd -e py -x wc -l", "fd -e py -x rm"),
    ("command -v rm", "command rm x"),
    ("command -V rm", "command -p rm x"),
    ("awk 'NR>1' data.csv", "awk 'NR>1 {print > \"out\"}' data.csv"),
    ("awk '$3 > 100 {print $1}' data.csv", "awk '{print $1 > 100}' data.csv"),
    ("awk '/err|warn/' log", "awk '{print | \"sh\"}' log"),
    ("awk 'NR==1 || NR==3' f", "awk 'NR==1 | getline' f"),
    ("awk '{print (a > b)}' f", "awk '{print a > b}' f"),
    ("awk '{print \"e\" > \"/dev/stderr\"}' f", "awk '{print \"e\" > \"/dev/stderrx\"}' f"),
    ("docker run --privileged=false alpine", "docker run --privileged=true alpine"),
    # sqlite3 takes its options with two dashes too; -safe refuses .shell, .output…
    ("sqlite3 --readonly app.db 'select 1'", "sqlite3 --cmd '.shell id' app.db"),
    ("sqlite3 -safe -readonly app.db < q.sql", "sqlite3 -readonly app.db < q.sql"),
    ("sqlite3 --safe app.db < q.sql", "sqlite3 --saf app.db < q.sql"),
]  # fmt: skip


@pytest.mark.parametrize(("loosened", "neighbour"), LOOSENINGS, ids=[n for _, n in LOOSENINGS])
def test_a_loosening_allows_and_its_neighbour_does_not(
    decide: Decide, loosened: str, neighbour: str
) -> None:
    assert decide(loosened) == "allow"
    assert decide(neighbour) != "allow"


def test_a_runner_alone_allows_no_program(tmp_path: Path) -> None:
    decide = decide_with_rules(tmp_path, WORKSPACE_WRITABLE + "p, agent, *, npx *, allow\n"
                               "p, agent, *, uv *, allow\n")  # fmt: skip
    assert decide("npx tsc --noEmit") == "ask"
    assert decide("uv run pytest") == "ask"
    assert decide("uv sync") == "allow"


#: Spellings of a denied command: every one meets the rule on the short spelling.
DENIED_SPELLINGS = [
    "docker run --privileged alpine",
    "docker container run --privileged alpine",
    "docker --log-level=error run --privileged alpine",
    "docker -l error -H unix:///var/run/docker.sock run --privileged alpine",
    "docker run --privileged=true alpine",
    "docker run --rm -it --privileged alpine sh",
    "podman container run --privileged alpine",
    "terraform apply",
    "terraform -chdir=infra apply -auto-approve",
    "terraform -chdir infra apply -auto-approve=true",
    "tofu -chdir=infra destroy -auto-approve",
    "rm -rf x",
    "fd -X rm",
]


@pytest.mark.parametrize("command", DENIED_SPELLINGS)
def test_deny_rules_meet_every_spelling(decide: Decide, command: str) -> None:
    assert decide(command) == "deny"


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("docker container run --privileged alpine", "docker run --privileged alpine"),
        ("docker image build -t x .", "docker build -tx ."),
        ("docker buildx build .", "docker build ."),
        ("docker image ls", "docker images"),
        ("docker container ls -a", "docker ps -a"),
        ("docker image rm x", "docker rmi x"),
        ("docker --log-level=error push x", "docker push x"),
        ("terraform -chdir=infra apply -auto-approve", "terraform apply -auto-approve"),
        ("terraform plan -refresh=false", "terraform plan"),
    ],
)
def test_one_canonical_spelling(command: str, canonical: str) -> None:
    assert canonical in analyse(command, workdir="/w").segments[0].canonical


def test_docker_push_through_build_asks(decide: Decide) -> None:
    assert decide("docker image push registry.example/x") == "ask"
    assert decide("docker build --push -t registry.example/x .") == "ask"
    assert decide("docker build -t registry.example/x .") == "allow"


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("docker run -v /:/mnt alpine", "/"),
        ("docker run --mount type=bind,src=/etc,dst=/e alpine", "/etc"),
        ("docker build --output type=local,dest=out .", "/w/out"),
        ("docker build -o out .", "/w/out"),
        ("terraform plan -out=tf.plan", "/w/tf.plan"),
    ],
)
def test_container_and_plan_outputs_are_writes(command: str, target: str) -> None:
    assert target in {w.path for w in analyse(command, workdir="/w").segments[0].writes}


def test_a_read_only_mount_is_no_write() -> None:
    assert analyse("docker run -v /etc:/e:ro alpine", workdir="/w").segments[0].writes == ()
