"""The environment rules of tools.md: scrub, overrides, managed facts."""

from __future__ import annotations

import pytest

from shellgate.command_env import OVERRIDES, build_env, is_credential


def test_credentials_are_removed() -> None:
    parent = {
        "OPENAI_API_KEY": "x",
        "GITHUB_TOKEN": "x",
        "aws_secret_access_key": "x",
        "DB_PASSWORD": "x",
        "GPG_PASSPHRASE": "x",
        "GOOGLE_APPLICATION_CREDENTIALS": "x",
        "HOME": "/root",
        "PATH": "/usr/bin",
    }
    env = build_env(parent, {}, {})
    assert env["HOME"] == "/root"
    assert env["PATH"] == "/usr/bin"
    for name in parent:
        if name not in ("HOME", "PATH"):
            assert name not in env


def test_admin_scrub_list_uses_patterns() -> None:
    env = build_env({"CORP_VAULT": "x", "CORP_NAME": "y"}, {}, {}, extra_scrub=["CORP_VAULT*"])
    assert "CORP_VAULT" not in env
    assert env["CORP_NAME"] == "y"
    assert is_credential("SOME_VAULT_ADDR", ["*VAULT*"])


def test_overrides_beat_the_parent() -> None:
    env = build_env({"TERM": "xterm-256color", "PAGER": "less"}, {}, {})
    for name, value in OVERRIDES.items():
        assert env[name] == value


def test_startup_hooks_never_reach_bash() -> None:
    parent = {
        "BASH_ENV": "/tmp/evil",
        "ENV": "/tmp/evil",
        "BASH_FUNC_ls%%": "() { rm; }",
        "SHELLOPTS": "xtrace",
        "PS4": "$(id)",
    }
    caller = {"BASH_ENV": "/tmp/evil2", "BASH_FUNC_cat%%": "() { rm; }"}
    env = build_env(parent, caller, {})
    assert not any(k in env for k in (*parent, *caller))


def test_managed_facts_cannot_be_forged() -> None:
    env = build_env(
        {"SHELLGATE_SESSION_ID": "forged", "SHELLGATE_OTHER": "x"},
        {"SHELLGATE_TASK_ID": "forged", "FOO": "caller"},
        {"SHELLGATE_SESSION_ID": "real", "SHELLGATE_TASK_ID": "bash-1"},
    )
    assert env["SHELLGATE_SESSION_ID"] == "real"
    assert env["SHELLGATE_TASK_ID"] == "bash-1"
    assert "SHELLGATE_OTHER" not in env
    assert env["FOO"] == "caller"


def test_scrubbed_parent_follows_changes_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from shellgate.command_env import build_env

    monkeypatch.setenv("SG_CACHE_PROBE", "one")
    assert build_env(os.environ, {}, {})["SG_CACHE_PROBE"] == "one"
    monkeypatch.setenv("SG_CACHE_PROBE", "two")
    assert build_env(os.environ, {}, {})["SG_CACHE_PROBE"] == "two"
    monkeypatch.setenv("SG_CACHE_TOKEN", "secret")
    assert "SG_CACHE_TOKEN" not in build_env(os.environ, {}, {})
    monkeypatch.delenv("SG_CACHE_PROBE")
    assert "SG_CACHE_PROBE" not in build_env(os.environ, {}, {})


@pytest.mark.parametrize(
    "name",
    [
        "DATABASE_URL", "REDIS_URL", "MONGODB_URI", "MONGO_URL", "AMQP_URL", "SENTRY_DSN",
        "database_url", "GITHUB_PAT", "GH_PAT", "APP_DSN", "NPM_AUTH", "_AUTH", "DOCKER_CREDS",
        "SESSION_COOKIE", "gitlab_pat",
    ],
)  # fmt: skip
def test_credential_names_without_a_marker_are_scrubbed(name: str) -> None:
    assert is_credential(name)
    assert name not in build_env({name: "postgres://u:pw@db/x", "HOME": "/h"}, {}, {})


@pytest.mark.parametrize(
    "name",
    [
        "PATH", "MANPATH", "LD_LIBRARY_PATH", "PYTHONPATH", "PATCH_LEVEL", "AUTHOR_NAME",
        "XAUTHORITY", "DATABASE_HOST", "COOKIE_JAR_DIR", "DSN_HOST", "PAT",
    ],
)  # fmt: skip
def test_look_alike_names_pass(name: str) -> None:
    assert not is_credential(name)
    assert build_env({name: "v"}, {}, {})[name] == "v"
