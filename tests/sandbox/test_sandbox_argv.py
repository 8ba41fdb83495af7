"""The pure parts: the argv builder, the guard planner, the probe's diagnosis."""

from __future__ import annotations

import pytest

from shellgate.executors._bwrap_argv import (
    Guard,
    Mask,
    PathKind,
    Profile,
    Target,
    build_argv,
    linked_git_targets,
    plan_guards,
    protected_targets,
    workdir_allowed,
)
from shellgate.executors._bwrap_probe import diagnose

WS = "/w/ws"


def profile(**kw: object) -> Profile:
    base: dict[str, object] = {"bwrap": "/usr/bin/bwrap", "mode": "workspace-write", "network": False, "workspace": WS}
    base.update(kw)
    return Profile(**base)  # type: ignore[arg-type]


def argv(p: Profile, fd: int | None = 7) -> list[str]:
    return build_argv(p, shell="/usr/bin/bash", command="echo hi", cwd=WS, seccomp_fd=fd)  # noqa: S604


def pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def oracle(existing: dict[str, PathKind]) -> object:
    return lambda path: existing.get(path, "missing")


def test_always_on_namespaces_and_hardening() -> None:
    args = argv(profile())
    for flag in (
        "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--unshare-net", "--new-session", "--die-with-parent",
        "--disable-userns", "--assert-userns-disabled",
    ):  # fmt: skip
        assert flag in args, flag
    assert args[args.index("--cap-drop") + 1] == "ALL"
    assert args[0] == "/usr/bin/bwrap"
    assert args[-4:] == ["--", "/usr/bin/bash", "-c", "echo hi"]
    assert pairs(args, "--chdir") == [WS]
    assert pairs(args, "--seccomp") == ["7"]


def test_network_flag_removes_only_the_net_namespace() -> None:
    args = argv(profile(network=True))
    assert "--unshare-net" not in args
    assert "--unshare-pid" in args


def test_no_seccomp_fd_means_no_seccomp_flag() -> None:
    assert "--seccomp" not in argv(profile(), fd=None)


@pytest.mark.parametrize(
    ("mode", "root_flag", "tmpfs_tmp", "ws_bound"),
    [
        pytest.param("read-only", "--ro-bind", True, False, id="read-only"),
        pytest.param("workspace-write", "--ro-bind", True, True, id="workspace-write"),
        pytest.param("full-access", "--bind", False, False, id="full-access"),
    ],
)
def test_mode_layout(mode: str, root_flag: str, tmpfs_tmp: bool, ws_bound: bool) -> None:
    args = argv(profile(mode=mode, writable_roots=("/w/extra",)))
    start = args.index(root_flag)
    assert args[start + 1 : start + 3] == ["/", "/"]
    assert ("/tmp" in pairs(args, "--tmpfs")) is tmpfs_tmp
    assert (WS in pairs(args, "--bind")) is ws_bound
    assert ("/w/extra" in pairs(args, "--bind")) is ws_bound
    assert pairs(args, "--proc") == ["/proc"]
    assert pairs(args, "--dev") == ["/dev"]
    assert (WS in pairs(args, "--ro-bind")) is (mode == "read-only")  # visible even under /tmp


def test_mount_order_roots_then_guards_then_masks() -> None:
    guards = (Guard(f"{WS}/.git", "pin"), Guard(f"{WS}/.git/hooks", "ro"), Guard(f"{WS}/.bashrc", "null", True))
    masks = (Mask("/h/.ssh", True), Mask("/h/.netrc", False))
    args = argv(profile(guards=guards, masks=masks))
    order = [args.index(x) for x in (WS, f"{WS}/.git", f"{WS}/.git/hooks", f"{WS}/.bashrc", "/h/.ssh", "/h/.netrc")]
    assert order == sorted(order)
    i = args.index(f"{WS}/.bashrc")
    assert args[i - 2 : i] == ["--ro-bind", "/dev/null"]
    assert pairs(args, "--remount-ro") == ["/h/.ssh"]
    assert args[args.index("/h/.netrc") - 2 : args.index("/h/.netrc")] == ["--ro-bind", "/dev/null"]


def test_masks_apply_in_full_access_too() -> None:
    args = argv(profile(mode="full-access", masks=(Mask("/h/.ssh", True),)))
    assert "/h/.ssh" in pairs(args, "--tmpfs")


def test_relative_shell_is_refused() -> None:
    with pytest.raises(ValueError, match="absolute"):
        build_argv(profile(), shell="bash", command="true", cwd=WS, seccomp_fd=None)  # noqa: S604


def test_workdir_outside_workspace_only_in_full_access() -> None:
    assert workdir_allowed(profile(), f"{WS}/sub")
    assert not workdir_allowed(profile(), "/w/wsx")  # a sibling with a common prefix
    assert not workdir_allowed(profile(mode="read-only"), "/etc")
    assert workdir_allowed(profile(mode="full-access"), "/etc")


def test_missing_git_gets_one_empty_placeholder_on_dot_git() -> None:
    targets = protected_targets([WS], "/h")
    guards = plan_guards([WS], targets, oracle({}))  # type: ignore[arg-type]
    by_path = {g.path: g for g in guards}
    assert by_path[f"{WS}/.git"] == Guard(f"{WS}/.git", "empty", placeholder=True)
    assert f"{WS}/.git/hooks" not in by_path  # blocked by the placeholder above it
    assert by_path[f"{WS}/.bashrc"] == Guard(f"{WS}/.bashrc", "null", placeholder=True)
    assert all(g.path.startswith(WS) for g in guards)  # /h is outside every root


def test_existing_git_is_pinned_and_missing_hooks_get_a_placeholder() -> None:
    state: dict[str, PathKind] = {f"{WS}/.git": "dir", f"{WS}/.git/config": "file", f"{WS}/.bashrc": "file"}
    guards = plan_guards([WS], protected_targets([WS], "/h"), oracle(state))  # type: ignore[arg-type]
    by_path = {g.path: g for g in guards}
    assert by_path[f"{WS}/.git"].how == "pin"
    assert by_path[f"{WS}/.git/hooks"] == Guard(f"{WS}/.git/hooks", "empty", placeholder=True)
    assert by_path[f"{WS}/.git/config"] == Guard(f"{WS}/.git/config", "ro")
    assert by_path[f"{WS}/.bashrc"] == Guard(f"{WS}/.bashrc", "ro")
    paths = [g.path for g in guards]
    assert paths.index(f"{WS}/.git") < paths.index(f"{WS}/.git/hooks")


def test_a_file_where_a_directory_is_expected_is_fixed_read_only() -> None:
    guards = plan_guards([WS], [Target(f"{WS}/.git/hooks", "dir")], oracle({f"{WS}/.git": "file"}))  # type: ignore[arg-type]
    assert guards == (Guard(f"{WS}/.git", "ro"),)


def test_intermediate_directories_are_pinned_against_rename() -> None:
    state: dict[str, PathKind] = {f"{WS}/a": "dir", f"{WS}/a/b": "dir", f"{WS}/a/b/c": "file"}
    guards = plan_guards([WS], [Target(f"{WS}/a/b/c", "file")], oracle(state))  # type: ignore[arg-type]
    assert guards == (Guard(f"{WS}/a", "pin"), Guard(f"{WS}/a/b", "pin"), Guard(f"{WS}/a/b/c", "ro"))


def test_targets_outside_roots_and_the_root_itself_are_skipped() -> None:
    targets = [Target("/etc/passwd", "file"), Target(WS, "dir"), Target("/w/wsx/.bashrc", "file")]
    assert plan_guards([WS], targets, oracle({})) == ()  # type: ignore[arg-type]


def test_home_inside_a_root_gets_the_full_rc_list() -> None:
    targets = protected_targets([WS], WS)
    paths = {t.path for t in targets}
    assert f"{WS}/.config/fish/config.fish" in paths
    assert f"{WS}/.bash_logout" in paths


def test_stronger_guard_wins_over_a_pin_on_the_same_path() -> None:
    state: dict[str, PathKind] = {f"{WS}/p": "dir"}
    targets = [Target(f"{WS}/p/x", "file"), Target(f"{WS}/p", "dir")]
    guards = plan_guards([WS], targets, oracle(state))  # type: ignore[arg-type]
    assert Guard(f"{WS}/p", "ro") in guards
    assert Guard(f"{WS}/p", "pin") not in guards


def bare_guards(state: dict[str, PathKind]) -> dict[str, Guard]:
    guards = plan_guards([WS], [Target(f"{WS}/HEAD", "bare")], oracle(state))  # type: ignore[arg-type]
    return {g.path.removeprefix(f"{WS}/"): g for g in guards}


def test_a_root_without_git_gets_only_a_head_placeholder() -> None:
    assert bare_guards({}) == {"HEAD": Guard(f"{WS}/HEAD", "null", placeholder=True)}
    # Project dirs named like git's are left alone: an invalid HEAD is enough.
    assert bare_guards({f"{WS}/config": "dir", f"{WS}/hooks": "dir", f"{WS}/refs": "dir"}) == {
        "HEAD": Guard(f"{WS}/HEAD", "null", placeholder=True)
    }


def test_a_root_with_a_real_dot_git_gets_no_bare_guards() -> None:
    assert bare_guards({f"{WS}/.git": "dir"}) == {}
    assert bare_guards({f"{WS}/.git": "file"}) == {}


def test_an_existing_head_is_fixed_and_the_missing_layout_blocked() -> None:
    guards = bare_guards({f"{WS}/HEAD": "file", f"{WS}/refs": "file"})
    assert guards == {
        "HEAD": Guard(f"{WS}/HEAD", "ro"),
        "objects": Guard(f"{WS}/objects", "null", placeholder=True),  # not a directory
        "refs": Guard(f"{WS}/refs", "ro"),
    }
    assert bare_guards({f"{WS}/HEAD": "dir"}) == {"HEAD": Guard(f"{WS}/HEAD", "ro")}


def test_a_bare_repository_root_guards_its_config_and_hooks() -> None:
    state: dict[str, PathKind] = {f"{WS}/HEAD": "file", f"{WS}/objects": "dir", f"{WS}/refs": "dir",
                                  f"{WS}/config": "file"}  # fmt: skip
    assert bare_guards(state) == {
        "HEAD": Guard(f"{WS}/HEAD", "ro"),
        "config": Guard(f"{WS}/config", "ro"),
        "hooks": Guard(f"{WS}/hooks", "empty", placeholder=True),
    }


def test_protected_targets_include_the_bare_marker_and_home_git_config() -> None:
    kinds = {t.path: t.kind for t in protected_targets([WS], WS)}
    assert kinds[f"{WS}/HEAD"] == "bare"
    assert kinds[f"{WS}/.gitconfig"] == "file"
    assert kinds[f"{WS}/.config/git/config"] == "file"
    assert kinds[f"{WS}/.ssh"] == "dir"


def test_a_dot_git_file_points_at_the_git_dirs_to_guard() -> None:
    files = {f"{WS}/.git": "gitdir: .repo/worktrees/w\n", f"{WS}/.repo/worktrees/w/commondir": "../..\n"}
    paths = [(t.path, t.kind) for t in linked_git_targets(WS, files.get)]
    assert paths == [
        (f"{WS}/.repo/worktrees/w", "gitdir"), (f"{WS}/.repo/worktrees/w/hooks", "dir"),
        (f"{WS}/.repo/worktrees/w/config", "file"),
        (f"{WS}/.repo", "gitdir"), (f"{WS}/.repo/hooks", "dir"), (f"{WS}/.repo/config", "file"),
    ]  # fmt: skip
    nothing: dict[str, str] = {}
    assert linked_git_targets(WS, nothing.get) == []
    assert linked_git_targets(WS, {f"{WS}/.git": "not a pointer"}.get) == []


@pytest.mark.parametrize(
    ("sysctls", "stderr", "expected"),
    [
        pytest.param({"user.max_user_namespaces": "0"}, "", "user.max_user_namespaces = 0", id="userns-off"),
        pytest.param(
            {"kernel.apparmor_restrict_unprivileged_userns": "1"},
            "bwrap: setting up uid map: Permission denied",
            "AppArmor restricts unprivileged user namespaces",
            id="apparmor",
        ),
        pytest.param({}, "bwrap: Unknown option --disable-userns", "too old", id="old-bwrap"),
        pytest.param({}, "bwrap: Can't mount proc", "bwrap: Can't mount proc", id="bwrap-words"),
    ],
)
def test_diagnose_names_the_reason(sysctls: dict[str, str], stderr: str, expected: str) -> None:
    assert expected in diagnose(1, stderr, sysctls.get)
