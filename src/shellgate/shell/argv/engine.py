"""One option scanner for every command, read in the command's own dialect.

A command's options are declared once (``Opt``: its spellings and how many words
it takes); a ``Dialect`` says how the command's parser reads them. ``scan``
returns, in one pass, the options met (each with the ``Opt`` it is, or ``None``
for one the declaration does not know), the operands, the words consumed as
option arguments, and where the options stopped.

Dialects differ in ways that decide what runs:

* GNU getopt_long permutes (an option after an operand is still an option) and
  takes unique prefixes of long options (``--recur`` is ``--recursive``); a
  wrapper's getopt (``env``, ``sudo``, ``timeout``) stops at the first operand,
  which is the command it runs;
* clap permutes but takes no prefixes; Go's flag package and ``find`` spell long
  options with one dash; npm's nopt strips any number of dashes; ``tree`` hands
  each value letter of a bundle the next word in turn.

Over-approximation, as everywhere in the analysis: a long prefix of several
known options is read as each of them (the tool would refuse it), and callers
that must see every write scan twice, with and without prefixes
(``abbreviations=False``), because a declaration may list a long option a real
flag is a prefix of (curl's ``--head`` of ``--header``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

#: ``Opt.takes`` for a value that may only be glued (``--interactive[=WHEN]``).
OPTIONAL = -1


@dataclass(frozen=True)
class Dialect:
    """How a command's parser reads its words."""

    name: str
    permute: bool = True  # options after operands are options (until ``--``)
    abbreviations: bool = True  # unique prefixes of long options
    bundles: bool = True  # ``-rf`` is ``-r -f``
    glued: bool = True  # ``-oFILE``
    in_turn: bool = False  # each value letter of a bundle takes the next word (tree)
    single_dash_long: bool = False  # ``-name`` is a long option (Go flag, find, gdb)
    any_dashes: bool = False  # ``---name`` and ``-name`` are ``--name`` (nopt)
    assignments: bool = False  # ``NAME=value`` words may come before the operands
    double_dash: bool = True  # ``--`` ends the options
    long_any_case: bool = False  # ``--LOG=f`` is ``--log-file`` (less)


GNU = Dialect("gnu")
#: getopt that stops at the first operand: a wrapper's inner command starts there.
GNU_PREFIX = Dialect("gnu-prefix", permute=False)
#: A wrapper that also takes ``NAME=value`` words before its command (env, sudo).
GNU_PREFIX_ASSIGNMENTS = Dialect("gnu-prefix-assignments", permute=False, assignments=True)
POSIX = Dialect("posix", permute=False, abbreviations=False)
CLAP = Dialect("clap", abbreviations=False)
GO = Dialect("go", permute=False, abbreviations=False, bundles=False, single_dash_long=True)
#: getopt_long_only: one dash or two, unique prefixes, no bundles (gdb).
LONG_ONLY = Dialect("long-only", bundles=False, single_dash_long=True)
NOPT = Dialect("nopt", any_dashes=True)
TREE = Dialect("tree", glued=False, in_turn=True, abbreviations=False)
#: less: GNU-like, but long option names in any case (``--LOG-FILE``, ``--Lesskey-src``).
LESS = Dialect("less", long_any_case=True)


@dataclass(frozen=True)
class Opt:
    """One option: every spelling of it, and how many words of argument it takes.

    ``names[0]`` is the canonical spelling. The role fields say what the option
    does; the catalog (``shell/catalog``) reads them, this module only scans.
    """

    names: tuple[str, ...]
    takes: int = 0  # 0 flag, 1 a value (glued or next word), n>1 words, OPTIONAL glued only
    runs: str = ""  # the value is run: "shell" string, "words" (split), "program" (one word)
    finding: str = ""  # using it loads code or changes state: the finding's text
    writes: bool = False  # the value names a file it writes
    deletes: bool = False  # the value names a path it empties or deletes
    inert: bool = False  # changes nothing a rule cares about: dropped from the canonical form
    #: The roles above hold only when the value passes (``make -f -``: from stdin).
    when: Callable[[str], bool] | None = None
    #: The options end with this one: the words after it are operands, even
    #: dashed ones (``python -m MOD -c x``: ``-c`` is the module's, not python's).
    last: bool = False
    #: The value is a directory its relative operands are read in (``git -C``, ``tar -C``).
    chdir: bool = False

    @property
    def canonical(self) -> str:
        return self.names[0]


@dataclass(frozen=True)
class Hit:
    """An option met in an argv."""

    opt: Opt | None  # None: not declared (read as a flag)
    spelled: str  # as written: "-f", "--forc" (a bundle letter as "-f")
    value: str | None  # its (first) argument
    at: int  # index of the word it was in

    @property
    def name(self) -> str:
        """The canonical spelling (the written one for an undeclared option)."""
        return self.opt.canonical if self.opt is not None else self.spelled.partition("=")[0]


@dataclass
class Parsed:
    hits: list[Hit] = field(default_factory=list)
    operands: list[tuple[int, str]] = field(default_factory=list)  # (index, word)
    consumed: list[int] = field(default_factory=list)  # indices read as option arguments
    end: int = 0  # index of the first word not read as an option (a prefix scan's operand)
    assignments: list[tuple[str, str]] = field(default_factory=list)  # NAME=value words

    def has(self, *names: str) -> bool:
        return any(hit.name in names for hit in self.hits)

    def values(self, *names: str) -> list[str]:
        return [h.value for h in self.hits if h.name in names and h.value is not None]

    @property
    def words(self) -> list[str]:
        return [word for _, word in self.operands]


@dataclass(frozen=True)
class Spec:
    """The options of one command under its dialect, indexed for scanning."""

    dialect: Dialect
    options: tuple[Opt, ...]

    @cached_property
    def _short(self) -> Mapping[str, Opt]:
        return {n[1]: o for o in self.options for n in o.names if _is_short(n, self.dialect)}

    @cached_property
    def _long(self) -> Mapping[str, Opt]:
        return {
            self._key(n): o for o in self.options for n in o.names if not _is_short(n, self.dialect)
        }

    def _key(self, name: str) -> str:
        """A long option's lookup key: ``--name`` (one dash too where the dialect allows)."""
        loose = self.dialect.single_dash_long or self.dialect.any_dashes
        key = "--" + name.lstrip("-") if loose else name
        return key.lower() if self.dialect.long_any_case else key

    def long_matches(self, name: str, *, abbreviations: bool) -> list[Opt]:
        """The declared options ``name`` (``--na``, no ``=value``) spells."""
        key = self._key(name)
        exact = self._long.get(key)
        if exact is not None:
            return [exact]
        if not (abbreviations and self.dialect.abbreviations) or len(key) < 3:
            return []
        found = {id(o): o for k, o in sorted(self._long.items()) if k.startswith(key)}
        return list(found.values())

    def short(self, letter: str) -> Opt | None:
        return self._short.get(letter)


def _is_short(name: str, dialect: Dialect) -> bool:
    if dialect.any_dashes or (dialect.single_dash_long and not dialect.bundles):
        return False  # every name is long: Go's -o is the flag "o", nopt's -x is --x
    return len(name) == 2 and name[0] == "-" and name[1] != "-"


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq and name) and (name[0].isalpha() or name[0] == "_") and (
        name.replace("_", "a").isalnum()
    )


def _looks_long(word: str, dialect: Dialect) -> bool:
    if word.startswith("--"):
        return True
    if dialect.any_dashes:
        return len(word) > 2  # nopt: `-s` is a one-letter shorthand, `-script-shell` long
    if dialect.single_dash_long and not dialect.bundles:
        return True
    return len(word) > 2 and word[0] == "-" and dialect.single_dash_long


def scan(
    argv: Sequence[str],
    spec: Spec,
    *,
    start: int = 1,
    abbreviations: bool = True,
    through_double_dash: bool = False,
) -> Parsed:
    """Read ``argv[start:]`` as the command's parser would (``argv[0]`` is its name).

    ``through_double_dash``: keep reading options after ``--`` (it may be the
    argument of the option before it: ``sort --random-source -- --compress-program=sh``;
    reading on only costs a question when it really ended the options).
    """
    d = spec.dialect
    out = Parsed()
    i, n = start, len(argv)
    options_done = False
    while i < n:
        word = argv[i]
        if not options_done and word == "--" and d.double_dash:
            if through_double_dash:
                # The words after `--` are operands *and* read as options too.
                rest = scan(argv, spec, start=i + 1, abbreviations=abbreviations)
                out.hits.extend(rest.hits)
                out.operands.extend((j, argv[j]) for j in range(i + 1, n))
                out.end = i + 1
                return out
            options_done = True
            out.end = i + 1
            i += 1
            continue
        if not options_done and len(word) > 1 and word[0] == "-":
            met = len(out.hits)
            i = _option(argv, i, spec, out, abbreviations)
            if any(hit.opt is not None and hit.opt.last for hit in out.hits[met:]):
                options_done = True
                out.end = i
            continue
        if not options_done and d.assignments and not out.operands and _is_assignment(word):
            name, _, value = word.partition("=")
            out.assignments.append((name, value))
            i += 1
            continue
        if not d.permute and not options_done:
            out.end = i
            out.operands.extend((j, argv[j]) for j in range(i, n))
            return out
        out.operands.append((i, word))
        i += 1
    if out.end == 0:
        out.end = n
    return out


def _option(argv: Sequence[str], i: int, spec: Spec, out: Parsed, abbreviations: bool) -> int:
    """Read the option word at ``argv[i]``; return the index after it and its arguments."""
    d = spec.dialect
    word = argv[i]
    if _looks_long(word, d):
        name, eq, value = word.partition("=")
        opts = spec.long_matches(name, abbreviations=abbreviations)
        if not opts:
            out.hits.append(Hit(None, name, value if eq else None, i))
            return i + 1
        takes = max(o.takes for o in opts)
        if eq or takes <= 0:
            for opt in opts:
                out.hits.append(Hit(opt, name, value if eq else None, i))
            return i + 1
        argument = argv[i + 1] if i + 1 < len(argv) else None
        for opt in opts:
            out.hits.append(Hit(opt, name, argument, i))
        out.consumed.extend(range(i + 1, min(i + 1 + takes, len(argv))))
        return i + 1 + takes
    if not d.bundles:
        single = spec.short(word[1]) if len(word) == 2 else None
        if single is None or single.takes <= 0:
            out.hits.append(Hit(single, word, None, i))
            return i + 1
        argument = argv[i + 1] if i + 1 < len(argv) else None
        out.hits.append(Hit(single, word, argument, i))
        out.consumed.extend(range(i + 1, min(i + 1 + single.takes, len(argv))))
        return i + 1 + single.takes
    nxt = i + 1
    for j in range(1, len(word)):
        letter = word[j]
        found = spec.short(letter)
        if found is None or found.takes == 0 or (found.takes == OPTIONAL and j + 1 >= len(word)):
            out.hits.append(Hit(found, "-" + letter, None, i))
            continue
        opt = found
        if opt.takes == OPTIONAL:
            out.hits.append(Hit(opt, "-" + letter, word[j + 1 :], i))
            return nxt
        if d.in_turn:
            out.hits.append(Hit(opt, "-" + letter, argv[nxt] if nxt < len(argv) else None, i))
            if nxt < len(argv):
                out.consumed.append(nxt)
            nxt += 1
            continue
        if j + 1 < len(word) and d.glued:
            out.hits.append(Hit(opt, "-" + letter, word[j + 1 :], i))
            return nxt
        argument = argv[nxt] if nxt < len(argv) else None
        out.hits.append(Hit(opt, "-" + letter, argument, i))
        out.consumed.extend(range(nxt, min(nxt + opt.takes, len(argv))))
        return nxt + opt.takes
    return nxt
