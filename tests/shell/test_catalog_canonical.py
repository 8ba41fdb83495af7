"""Catalog-driven properties of the canonical form, over every entry's own options.

For each entry (and each subcommand entry) the strategies draw options from its
declaration, spell each one in any of the ways its dialect accepts (every name,
short letters bundled, values glued or separate, unique long-option prefixes)
and in any order, and check:

* every spelling of the same options and operands has one canonical form;
* the canonical form is a command the catalog reads back to itself;
* a deny pattern written in one spelling (``rm -rf *``) meets a command written
  in another spelling with more options (``rm --force -v --recursive x``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shellgate.policy.patterns import compile_pattern
from shellgate.shell.argv.canonical import joined
from shellgate.shell.argv.engine import OPTIONAL, Opt
from shellgate.shell.catalog import entries, read
from shellgate.shell.catalog.entry import Entry

VALUE = "val1"


@dataclass(frozen=True)
class Target:
    """An entry to draw spellings for, behind the words that select it."""

    prefix: tuple[str, ...]  # ("git", "push") for a subcommand entry
    entry: Entry

    @property
    def id(self) -> str:
        return " ".join(self.prefix)


def _targets() -> list[Target]:
    found: list[Target] = []
    for entry in entries():
        if entry.runs is not None or entry.no_canonical or entry.hooks:
            continue  # a wrapper's operands are a command; hooks may reshape the argv
        if entry.options and not entry.subcommands:
            found.append(Target((entry.name,), entry))
        for name, sub in entry.subcommands.items():
            if sub.options and sub.runs is None and not sub.hooks and not sub.no_canonical:
                found.append(Target((entry.name, name), sub))
    return sorted(found, key=lambda t: t.id)


TARGETS = _targets()


def _usable(entry: Entry, opt: Opt) -> bool:
    # Options with several words or role-bearing values are covered by the
    # family tests; here: flags and plain one-value options.
    return opt.takes in (0, 1, OPTIONAL) and not (opt.runs or opt.when) and not opt.inert


def _is_short(name: str, entry: Entry) -> bool:
    d = entry.dialect
    if d.any_dashes or (d.single_dash_long and not d.bundles):
        return False
    return len(name) == 2 and name[0] == "-" and name[1] != "-"


def _prefixes(name: str, entry: Entry) -> list[str]:
    """Unique prefixes of a long option its dialect accepts as that option."""
    if not entry.dialect.abbreviations:
        return []
    longs = [n for o in entry.options for n in o.names if not _is_short(n, entry)]
    out = []
    for end in range(max(4, len(name) - 3), len(name)):
        prefix = name[:end]
        if [n for n in longs if n.startswith(prefix)] == [name] and prefix not in longs:
            out.append(prefix)
    return out


def _spellings(opt: Opt, entry: Entry) -> list[list[str]]:
    """Each way to write ``opt`` (with ``VALUE`` where it takes one) as words."""
    out: list[list[str]] = []
    for name in opt.names:
        short = _is_short(name, entry)
        names = [name, *([] if short else _prefixes(name, entry))]
        for spelled in names:
            if opt.takes == 0:
                out.append([spelled])
            elif opt.takes == OPTIONAL:
                out.append([spelled + VALUE] if short else [f"{spelled}={VALUE}"])
            elif short:
                out.append([spelled, VALUE])
                if entry.dialect.glued:
                    out.append([spelled + VALUE])
            else:
                out.append([spelled, VALUE])
                out.append([f"{spelled}={VALUE}"])
    return out


@st.composite
def spelled(draw: st.DrawFn, target: Target, chosen: list[Opt]) -> tuple[str, ...]:
    """``chosen`` options spelled at random, in random order, short flags
    sometimes bundled, then one operand."""
    entry = target.entry
    words: list[list[str]] = [draw(st.sampled_from(_spellings(o, entry))) for o in chosen]
    words = draw(st.permutations(words))
    flat: list[str] = []
    for group in words:
        bundle = entry.dialect.bundles and len(group) == 1 and _is_short(group[0], entry)
        last = flat[-1] if flat else ""
        joinable = last.startswith("-") and not last.startswith("--") and len(last) >= 2
        if bundle and joinable and _bundle_ok(last, entry) and draw(st.booleans()):
            flat[-1] = last + group[0][1]
        else:
            flat.extend(group)
    return (*target.prefix, *flat, "x")


def _bundle_ok(word: str, entry: Entry) -> bool:
    """A word of flag letters only (a value letter would swallow what follows)."""
    for letter in word[1:]:
        opt = entry.spec.short(letter)
        if opt is None or opt.takes != 0:
            return False
    return True


@st.composite
def option_sets(draw: st.DrawFn, target: Target) -> list[Opt]:
    usable = [o for o in target.entry.options if _usable(target.entry, o)]
    if not usable:
        return []
    return draw(st.lists(st.sampled_from(usable), max_size=4, unique_by=id))


def canonical(argv: tuple[str, ...]) -> tuple[str, ...]:
    reading = read(argv)
    assert reading is not None, argv
    assert reading.canonical is not None, argv
    return reading.canonical


@pytest.mark.parametrize("target", [pytest.param(t, id=t.id) for t in TARGETS])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_spelling_has_one_canonical_form(target: Target, data: st.DataObject) -> None:
    chosen = data.draw(option_sets(target))
    first = data.draw(spelled(target, chosen))
    second = data.draw(spelled(target, chosen))
    assert canonical(first) == canonical(second), (first, second)


@pytest.mark.parametrize("target", [pytest.param(t, id=t.id) for t in TARGETS])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_canonical_form_is_idempotent(target: Target, data: st.DataObject) -> None:
    argv = data.draw(spelled(target, data.draw(option_sets(target))))
    once = canonical(argv)
    assert canonical(once) == once, (argv, once)


@pytest.mark.parametrize("target", [pytest.param(t, id=t.id) for t in TARGETS])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_pattern_meets_every_spelling_with_more_options(
    target: Target, data: st.DataObject
) -> None:
    required = data.draw(option_sets(target))
    usable = [o for o in target.entry.options if _usable(target.entry, o)]
    more = data.draw(st.lists(st.sampled_from(usable), max_size=2, unique_by=id)) if usable else []
    pattern_argv = data.draw(spelled(target, required))[:-1]  # the operand becomes ` *`
    command = data.draw(spelled(target, [*required, *(o for o in more if o not in required)]))
    pattern = compile_pattern(" ".join(pattern_argv) + " *")
    text = " ".join(canonical(command))
    assert pattern.matches_canonical(text), (pattern.text, command, text)


@example(pattern="rm -rf *", command="rm --force -v --recursive x")
@example(pattern="rm -rf *", command="rm -Rf x")
@example(pattern="rm -rf *", command="rm -f -r x")
@example(pattern="rm -rf *", command="rm --rec --for x")
@example(pattern="rm -rf /", command="rm -rfv /")
@given(
    pattern=st.sampled_from(["rm -rf *", "rm -rf /", "rm -r *"]),
    command=st.sampled_from(["rm -fr /", "rm -R -f /", "rm --recursive --force /", "rm -rfI /"]),
)
def test_rm_deny_patterns_meet_every_spelling(pattern: str, command: str) -> None:
    assert compile_pattern(pattern).matches_canonical(" ".join(canonical(tuple(command.split()))))


def test_the_catalog_has_entries_to_draw_from() -> None:
    assert any(t.id == "rm" for t in TARGETS)


@pytest.mark.parametrize(
    ("pattern", "argv"),
    [("chown -R *", ("chown", "--from= 0", "-R", "1234", "x")),
     ("make install *", ("make", "-C", "/tmp/a b", "install")),
     ("git push -f *", ("git", "push", "--all", "--repo=/tmp/r b.git", "-f")),
     ("sed -i *", ("sed", "-e", "s/a/b c/", "-i", "f"))],
)  # fmt: skip
def test_an_option_value_with_a_blank_is_still_one_word_to_skip(
    pattern: str, argv: tuple[str, ...]
) -> None:
    reading = read(argv)
    assert reading is not None
    assert reading.canonical is not None
    assert compile_pattern(pattern).matches_canonical(joined(reading.canonical))
