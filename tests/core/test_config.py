"""Config loading: unknown keys are errors, env overrides the file, paths rebase."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.config import load_config
from shellgate.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "shellgate.toml"
    path.write_text(text)
    return path


def test_defaults_match_the_documented_file(tmp_path: Path) -> None:
    cfg = load_config(None)
    ex = cfg.executor
    assert (ex.kind, ex.timeout_ms, ex.max_timeout_ms, ex.max_output_bytes) == (
        "local",
        120000,
        600000,
        64000,
    )
    assert (ex.max_spill_bytes, ex.grace_ms, ex.max_tasks) == (67108864, 3000, 10)
    assert (cfg.sandbox.mode, cfg.sandbox.network, cfg.sandbox.escalation) == (
        "workspace-write",
        False,
        True,
    )
    assert (cfg.policy.subject, cfg.policy.tenant, cfg.policy.default, cfg.policy.baseline) == (
        "agent",
        "default",
        None,  # unset: the packaged default set closes with sandbox, named sets with ask
        True,
    )
    assert cfg.policy.closing_default == "sandbox"
    named = load_config(None, policy={"paths": [str(tmp_path)]})
    assert named.policy.closing_default == "ask"
    assert load_config(None, policy={"paths": [str(tmp_path)], "default": "deny"}
                       ).policy.closing_default == "deny"
    assert cfg.approval.mode == "deny"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "[executor]\ntimout_ms = 5\n",
            "unknown key 'executor.timout_ms'",
            id="unknown-nested-key",
        ),
        pytest.param("[nonsense]\nx = 1\n", "unknown key 'nonsense'", id="unknown-section"),
        pytest.param(
            "[executor]\nkind = 'docker'\n", "invalid value for 'executor.kind'", id="bad-kind"
        ),
        pytest.param(
            "[executor]\ntimeout_ms = 0\n",
            "invalid value for 'executor.timeout_ms'",
            id="zero-timeout",
        ),
        pytest.param("[policy]\ndefault = 'allow'\n", "never 'allow'", id="default-allow-refused"),
        pytest.param(
            "[sandbox]\nmode = 'yolo'\n", "invalid value for 'sandbox.mode'", id="bad-mode"
        ),
        pytest.param("[executor\n", "not valid TOML", id="broken-toml"),
        pytest.param(
            "[approval]\nmode = 'always'\n", "invalid value for 'approval.mode'", id="bad-approval"
        ),
    ],
)
def test_bad_files_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.toml")


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_relative_paths_resolve_against_the_file(tmp_path: Path) -> None:
    sub = tmp_path / "conf"
    sub.mkdir()
    path = sub / "shellgate.toml"
    path.write_text(
        '[executor]\nworkspace = "ws"\n[policy]\npaths = ["pol"]\n[audit]\npath = "a.jsonl"\n'
    )
    cfg = load_config(path)
    assert cfg.executor.workspace == sub / "ws"
    assert cfg.policy.paths == (sub / "pol",)
    assert cfg.audit.path == sub / "a.jsonl"


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "[executor]\ntimeout_ms = 5000\n")
    monkeypatch.setenv("SHELLGATE_EXECUTOR__TIMEOUT_MS", "7000")
    assert load_config(path).executor.timeout_ms == 7000


def test_environment_unknown_key_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_EXECUTOR__TIMEOUT", "7000")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(None)


def test_config_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "[executor]\nmax_tasks = 3\n")
    monkeypatch.setenv("SHELLGATE_CONFIG", str(path))
    assert load_config().executor.max_tasks == 3


def test_the_file_is_recorded_but_not_settable(tmp_path: Path) -> None:
    path = write(tmp_path, "[executor]\nmax_tasks = 3\n")
    assert load_config(path).config_file == path.resolve()
    bad = write(tmp_path, 'config_file = "/etc/passwd"\n')
    with pytest.raises(ConfigError, match="unknown key 'config_file'"):
        load_config(bad)


async def test_commands_cannot_rewrite_the_config_file(tmp_path: Path) -> None:
    from shellgate.approval import AllowApprover
    from shellgate.gate import Gate

    ws = tmp_path / "ws"
    ws.mkdir()
    path = write(tmp_path, f'[executor]\nworkspace = "{ws}"\n[policy]\npaths = []\n[audit]\npath = "{tmp_path}/a.jsonl"\n')
    async with Gate(load_config(path), approver=AllowApprover()) as gate:
        result = await gate.call("bash", {"command": f"echo '[policy]' >> {path}", "description": "d"})
    assert result.outcome == "denied"
    assert "protected" in result.text
    assert "[policy]\npaths" in path.read_text()
    assert path.read_text().count("[policy]") == 1


def test_environment_values_parse_like_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_POLICY__PLUGINS", '["office_hours", "tenants"]')
    monkeypatch.setenv("SHELLGATE_SANDBOX__NETWORK", "true")
    monkeypatch.setenv("SHELLGATE_EXECUTOR__LIMITS__OPEN_FILES", "99")
    cfg = load_config(None)
    assert cfg.policy.plugins == ("office_hours", "tenants")
    assert cfg.sandbox.network is True
    assert cfg.executor.limits.open_files == 99


def test_environment_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_EXECUTOR__MAX_TASKS", "many")
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert str(info.value).startswith("environment variable SHELLGATE_EXECUTOR__MAX_TASKS: invalid value")


def test_bad_json_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_POLICY__PATHS", "[not json")
    with pytest.raises(ConfigError, match="SHELLGATE_POLICY__PATHS: not valid JSON"):
        load_config(None)


def test_managed_facts_in_the_environment_are_not_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    # A gate started by a command that another gate runs sees these; they are not keys.
    monkeypatch.setenv("SHELLGATE_SESSION_ID", "s")
    monkeypatch.setenv("SHELLGATE_CALL_ID", "c")
    assert load_config(None).executor.kind == "local"


# -- every path key read against the file's directory, in one place ---------------


def test_every_relative_path_key_is_read_against_the_file_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    path = conf / "shellgate.toml"
    path.write_text(
        '[executor]\nworkspace = "ws"\nshell = "bin/mysh"\n'
        '[sandbox]\nwritable_roots = ["extra", "/abs/root"]\nbwrap_path = "./bin/bwrap"\n'
        '[policy]\npaths = ["pol"]\n[audit]\npath = "logs/a.jsonl"\n'
    )
    cfg = load_config(path)
    assert cfg.executor.workspace == conf / "ws"
    assert cfg.executor.shell == str(conf / "bin/mysh")
    assert cfg.sandbox.writable_roots == (conf / "extra", Path("/abs/root"))
    assert cfg.sandbox.bwrap_path == str(conf / "bin/bwrap")
    assert cfg.policy.paths == (conf / "pol",)
    assert cfg.audit.path == conf / "logs/a.jsonl"


def test_program_names_stay_names_looked_up_on_path(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[executor]\nshell = "zsh"\n[sandbox]\nbwrap_path = "bwrap"\n'))
    assert (cfg.executor.shell, cfg.sandbox.bwrap_path) == ("zsh", "bwrap")


def test_home_relative_paths_expand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cfg = load_config(write(tmp_path, '[sandbox]\nwritable_roots = ["~/cache"]\n'))
    assert cfg.sandbox.writable_roots == (tmp_path / "home" / "cache",)


def test_workspace_relative_keys_are_left_to_the_workspace(tmp_path: Path) -> None:
    # deny_read and protected_paths name paths inside the workspace (docs/sandbox.md).
    cfg = load_config(write(tmp_path, '[sandbox]\ndeny_read = [".env"]\n'
                                      '[policy]\nprotected_paths = ["secrets"]\n'))
    assert (cfg.sandbox.deny_read, cfg.policy.protected_paths) == ((".env",), ("secrets",))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('[sandbox]\nwritable_roots = [""]\n', id="writable-root"),
        pytest.param('[executor]\nworkspace = ""\n', id="workspace"),
        pytest.param('[policy]\npaths = [""]\n', id="policy-path"),
    ],
)
def test_an_empty_path_is_an_error_not_the_whole_directory(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="empty path"):
        load_config(write(tmp_path, text))


def test_paths_from_the_environment_stay_relative_to_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLGATE_SANDBOX__WRITABLE_ROOTS", '["extra"]')
    cfg = load_config(write(tmp_path, "[sandbox]\nnetwork = false\n"))
    assert cfg.sandbox.writable_roots == (Path("extra"),)


# -- the packaged default policy set ----------------------------------------------


def test_no_policy_paths_means_the_packaged_set_whatever_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shellgate.config import packaged_policy_set

    planted = tmp_path / "policies" / "default"
    planted.mkdir(parents=True)
    (planted / "policy.csv").write_text("p, agent, *, *, allow\n")
    monkeypatch.chdir(tmp_path)
    packaged = packaged_policy_set()
    assert packaged is not None
    assert (packaged / "policy.csv").is_file()
    for cfg in (load_config(None), load_config(write(tmp_path, "[policy]\ndefault = 'deny'\n"))):
        assert cfg.policy.paths == (packaged,)
        assert cfg.default_policy == packaged


def test_a_configured_policy_set_is_not_the_default(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[policy]\npaths = ["pol"]\n'))
    assert cfg.default_policy is None
    replaced = load_config(None)
    replaced = replaced.model_copy(
        update={"policy": replaced.policy.model_copy(update={"paths": (tmp_path,)})}
    )
    assert replaced.default_policy is None


# -- did you mean ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        pytest.param("[executor]\ntimout_ms = 5\n", "unknown key 'executor.timout_ms'",
                     "did you mean 'executor.timeout_ms'?", id="key"),
        pytest.param("[exector]\nkind = 'local'\n", "unknown key 'exector'",
                     "did you mean 'executor'?", id="section"),
        pytest.param("[executor.limits]\nopen_file = 5\n", "unknown key 'executor.limits.open_file'",
                     "did you mean 'executor.limits.open_files'?", id="nested"),
        pytest.param("[policy]\nzzz = 1\n", "unknown key 'policy.zzz'",
                     "[policy] takes: paths, subject, tenant, default, baseline, plugins",
                     id="no-near-miss"),
        pytest.param("[zzz]\nx = 1\n", "unknown key 'zzz'",
                     "the sections are: executor, sandbox, policy, approval, audit", id="no-section"),
    ],
)
def test_unknown_keys_come_with_a_hint(tmp_path: Path, text: str, message: str, hint: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert str(info.value).endswith(message)
    assert info.value.hint is not None
    assert info.value.hint.startswith(hint)


def test_an_environment_typo_suggests_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLGATE_POLICY__DEFUALT", "deny")
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert info.value.hint == "did you mean SHELLGATE_POLICY__DEFAULT?"


def test_an_environment_typo_in_the_section_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHELLGATE_EXECUTR__TIMEOUT_MS", "5000")
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert str(info.value).startswith(
        "environment variable SHELLGATE_EXECUTR__TIMEOUT_MS: unknown key 'executr'"
    )
    assert info.value.hint == "did you mean SHELLGATE_EXECUTOR__TIMEOUT_MS?"


def test_a_validator_message_is_not_prefixed_by_pydantic(tmp_path: Path) -> None:
    path = tmp_path / "shellgate.toml"
    path.write_text('[policy]\ndefault = "allow"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "invalid value for 'policy.default': the closing default" in str(info.value)
    assert "Value error" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "value", "where"),
    [
        ("SHELLGATE_SANDBOX__WRITABLE_ROOTS", '[""]', "sandbox.writable_roots"),
        ("SHELLGATE_EXECUTOR__WORKSPACE", "", "executor.workspace"),
        ("SHELLGATE_POLICY__PATHS", '["pol", ""]', "policy.paths"),
    ],
)
def test_an_empty_path_from_the_environment_is_an_error_as_in_the_file(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, where: str
) -> None:
    # Path("") is the current directory: an empty writable root made it writable.
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert str(info.value) == f"environment variable {name}: invalid value for '{where}': empty path"


def test_an_empty_audit_path_from_the_environment_disables_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHELLGATE_AUDIT__PATH", "")
    assert load_config(None).audit.path is None


def test_a_list_in_a_variable_not_written_as_json_gets_a_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHELLGATE_SANDBOX__WRITABLE_ROOTS", "build")
    with pytest.raises(ConfigError) as info:
        load_config(None)
    assert "expected a list (got 'build')" in str(info.value)
    assert "tuple" not in str(info.value)
    assert info.value.hint == """a list in a variable is JSON: SHELLGATE_SANDBOX__WRITABLE_ROOTS='["build"]'"""
