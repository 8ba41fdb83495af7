"""Every pattern form and its edge cases; anchoring against casbin's own matchers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shellgate.policy.patterns import PatternError, compile_pattern, glob_to_regex


@pytest.mark.parametrize(
    ("pattern", "command", "expected"),
    [
        pytest.param("git status", "git status", True, id="exact"),
        pytest.param("git status", "git status -s", False, id="exact-no-args"),
        pytest.param("git status", "git statusx", False, id="exact-no-suffix"),
        pytest.param("git status", "xgit status", False, id="exact-no-prefix"),
        pytest.param("git status *", "git status", True, id="prefix-empty-args"),
        pytest.param("git status *", "git status -s --short", True, id="prefix-args"),
        pytest.param("git status *", "git statusx", False, id="prefix-word-boundary"),
        pytest.param("ls *", "lsof", False, id="prefix-ls-not-lsof"),
        pytest.param("ls *", "ls", True, id="prefix-bare"),
        pytest.param("ls *", "ls a\nrm -rf /", True, id="prefix-newline-is-an-argument"),
        pytest.param("*", "", True, id="star-empty"),
        pytest.param("*", "anything at all", True, id="star-all"),
        pytest.param("git * --force", "git push origin --force", True, id="glob-middle"),
        pytest.param("git * --force", "git push --force-with-lease", False, id="glob-anchored-end"),
        pytest.param("git*", "gitk", True, id="glued-star-crosses-words"),
        pytest.param("rm -rf *", "rm -rf a\nb", True, id="glob-dotall"),
        pytest.param("re:git (status|log)", "git log", True, id="regex"),
        pytest.param("re:git (status|log)", "git log -p", False, id="regex-full-match"),
        pytest.param("re:git status", "git status && rm -rf /", False, id="regex-no-tail"),
        pytest.param("re:^git status$", "git status\nrm -rf /", False, id="regex-newline-tail"),
        pytest.param("re:git status$", "git status\n", False, id="regex-dollar-before-newline"),
        pytest.param("re:(?m)^git status$.*", "git status\nx", True, id="regex-multiline-explicit"),
        pytest.param("re:rm .*", "rm a\nb", True, id="regex-dotall-deny-not-dodged"),
        pytest.param("re:a{1,3}", "aaa", True, id="regex-with-comma"),
    ],
)
def test_pattern_matches_whole_command(pattern: str, command: str, expected: bool) -> None:
    assert compile_pattern(pattern).matches(command) is expected


@pytest.mark.parametrize(
    ("pattern", "key"),
    [
        pytest.param("git status", "git", id="exact"),
        pytest.param("pwd", "pwd", id="exact-one-word"),
        pytest.param("ls *", "ls", id="prefix"),
        pytest.param("git * --force", "git", id="glob-literal-word"),
        pytest.param("git*", None, id="glued-star-no-key"),
        pytest.param("*", None, id="star"),
        pytest.param("re:git (push|pull)", "git", id="regex-literal-prefix"),
        pytest.param("re:gi?t x", None, id="regex-quantified-literal"),
        pytest.param("re:(?i)git x", None, id="regex-ignorecase"),
        pytest.param("re:git|rm x", None, id="regex-top-level-branch"),
    ],
)
def test_pattern_key_is_a_word_every_match_starts_with(pattern: str, key: str | None) -> None:
    assert compile_pattern(pattern).key == key


@pytest.mark.parametrize(
    "pattern",
    [pytest.param("", id="empty"), pytest.param("re:", id="empty-regex"),
     pytest.param("re:(", id="unbalanced"), pytest.param("re:a{2,1}", id="bad-repeat")],
)
def test_bad_patterns_are_rejected(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)


def test_casbin_matchers_are_unanchored_which_is_why_shellgate_does_not_use_them() -> None:
    """The hazard: casbin's keyMatch/regexMatch accept a chained or newline command."""
    from casbin.util.builtin_operators import key_match, regex_match

    assert key_match("git status && rm -rf /", "git *")
    assert regex_match("git status\nrm -rf /", "^git status")
    assert not compile_pattern("git status").matches("git status && rm -rf /")
    assert not compile_pattern("re:^git status").matches("git status\nrm -rf /")


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(["git", "ls", "*", "a b", "x\ny", ""]), min_size=1,
                      max_size=4),
       command=st.text(alphabet="gitlsab *\nx", max_size=12))
def test_fast_paths_agree_with_the_glob_regex(words: list[str], command: str) -> None:
    text = " ".join(words)
    if not text:
        return
    pattern = compile_pattern(text)
    expected = re.fullmatch(glob_to_regex(text), command, re.DOTALL) is not None
    assert pattern.matches(command) is expected
