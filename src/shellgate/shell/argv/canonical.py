"""The canonical spelling of a command, and of a rule pattern read the same way.

Deny and ask rules match each segment's canonical form besides its literal
forms, so one rule covers every spelling of one command:

* short-option bundles are split (``-rf`` is ``-r -f``) and every option is
  spelled by its canonical name (``-R`` and ``--recursive`` are ``-r``);
* an option's value is glued, so each option is one word that reads back the
  same: ``--output=F``, ``-oF`` (``-o=F`` where the dialect glues no short value);
* inert options (``-v``, git's ``--no-pager``) are dropped;
* options are sorted, then come the operands (after ``--`` when one starts with
  a dash); a subcommand follows its command's options: ``git push -f origin``.

A pattern (``rm -rf *``) is read by the same catalog when the policy loads, into
a regular expression over canonical forms whose options are *required*, in any
order, among any others (``rm -f -r *`` meets ``rm -I -f -r -v x``); an option
named without its value meets it with any value (``sort -o *`` meets ``sort
-o=out in``); its operands keep the pattern language (``*`` any run of
characters, a final `` *`` any further words). Only deny and ask rules use it:
allow matching stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SKIP = r"(?: -[^ ]*)*?"
#: Stands for a blank inside one canonical word (``--repo=/tmp/r b.git``) in the
#: joined text rules match, so ``_SKIP`` can step over that word as one: a C0
#: character, which the input guard never lets into a command.
WORD_BLANK = "\x1f"


def joined(words: Sequence[str]) -> str:
    """The canonical text rules match: words joined by blanks, a word's own
    blanks kept inside it (shown as blanks again by :func:`shown`)."""
    return " ".join(word.replace(" ", WORD_BLANK) for word in words)


def shown(text: str) -> str:
    """A canonical text as a person reads it."""
    return text.replace(WORD_BLANK, " ")


def option_word(name: str, value: str | None, *, glued_short: bool) -> str:
    """One option as one word that reads back the same: ``--output=F``, and a
    short option's value glued where the dialect takes that (``-oF``)."""
    if value is None:
        return name
    if glued_short and len(name) == 2 and name[0] == "-" and name[1] != "-":
        return name + value
    return f"{name}={value}"


def option_words(hits: Sequence[tuple[str, str | None]], *, glued_short: bool) -> list[str]:
    """``(name, value)`` pairs as sorted canonical option words, without repeats."""
    return sorted({option_word(n, v, glued_short=glued_short) for n, v in hits})


def operand_words(operands: Sequence[str]) -> list[str]:
    """Operands after the options (behind ``--`` when one could be read as an option)."""
    if any(word.startswith("-") and word != "-" for word in operands):
        return ["--", *operands]
    return list(operands)


def _glob(word: str, *, option: bool) -> str:
    source = ".*".join(re.escape(piece) for piece in word.split("*"))
    if not option:
        return source
    if len(word) == 2 and word[0] == "-" and word[1] not in "-*":
        # A short option named without a value (`sort -o *`) meets it with any
        # value, glued as canonical forms spell it (`sort -oout in`): canonical
        # words never bundle letters, so only a value can follow a flag's letter.
        source += "[^ ]*"
    elif word.startswith("--") and len(word) > 2 and "=" not in word:
        source += "(?:=[^ ]*)?"  # `--output` meets `--output=out`
    return source


def pattern_regex(words: Sequence[str], any_tail: bool) -> str:
    """A regex source for canonical forms matching a pattern's canonical ``words``.

    Before every word but the first, and at the end, any option words may stand
    (``_SKIP`` matches only words that begin with a dash), so the pattern's
    options are required and the command's others are allowed. A blank inside
    an option's value is ``WORD_BLANK`` in the text matched, so that option is
    one word to skip like any other.
    """
    out = [_glob(words[0], option=False)] if words else []
    operands = False  # after `--` every word is an operand, dash or not
    for word in words[1:]:
        out.append(f"{_SKIP} {_glob(word, option=not operands)}")
        operands |= word == "--"
    out.append(_SKIP)
    if any_tail:
        out.append("(?: .*)?")
    return "".join(out)
