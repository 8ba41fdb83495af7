"""git pushes and remotes: every spelling of a forced update or a deletion (for ``catalog/vcs.py``).

git's own documentation defines these as the same update (git-push(1)): a
``+`` in front of a refspec is ``--force`` for that ref, a refspec ``:dst``
is ``--delete dst``, and ``--mirror`` force-updates and deletes refs
(``--prune`` deletes too). So the canonical form of such a push gains
``-f`` and ``-d`` (the canonical spellings of ``--force`` and ``--delete``)
and drops the ``+``/``:`` from the refspec, while the command as written is
what ``check`` shows and allow rules match: ``git push origin +main`` is
``git push -f origin main`` for deny and ask rules. ``--force-with-lease`` and
``--force-if-includes`` stay themselves: git defines them as a separate,
conditional check (the remote ref must still be what was last fetched), the
way ``git reset --keep`` is no ``--hard``, so an admin can allow them while
denying ``--force``; a rule meant for every forced update names them too
(docs/policies.md).

A repository can also be told to force its plain pushes: ``remote.NAME.push
+…``, ``remote.NAME.mirror`` (``gitconfig.py``), ``git remote add --mirror``
(or ``--mirror=push``) and ``git clone --mirror`` set them, so those are findings.
"""

from __future__ import annotations

from shellgate.shell.argv.canonical import operand_words, option_words
from shellgate.shell.argv.engine import Parsed
from shellgate.shell.catalog.entry import Argv, Reading
from shellgate.shell.catalog.gitconfig import FORCES_PUSHES, forcing_refspec

#: Options of ``git push`` that force-update (``-f``) or delete (``-d``) refs
#: besides the two themselves.
_FORCES = ("--mirror",)
_DELETES = ("--mirror", "--prune")


def push_words(argv: Argv, parsed: Parsed) -> list[str] | None:
    """The canonical words of a push that forces or deletes through a refspec
    or ``--mirror``/``--prune`` (``None``: the engine's own spelling)."""
    del argv
    refspecs: list[str] = []
    forced = parsed.has(*_FORCES)
    deleted = parsed.has(*_DELETES)
    for word in parsed.words:
        if forcing_refspec(word):
            if word.startswith("+"):
                forced, word = True, word[1:]
            if word.startswith(":") and len(word) > 1:
                deleted, word = True, word[1:]
        refspecs.append(word)
    if not (forced or deleted):
        return None
    hits = [(hit.name, hit.value) for hit in parsed.hits if not (hit.opt and hit.opt.inert)]
    hits += [("-f", None)] * forced + [("-d", None)] * deleted
    return [*option_words(hits, glued_short=True), *operand_words(refspecs)]


def remote_mirror(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``git remote add --mirror[=push] NAME URL`` sets ``remote.NAME.mirror``:
    a later plain push there mirrors (``--mirror=fetch`` only fetches so)."""
    del argv
    for hit in parsed.hits:
        if hit.name == "--mirror" and hit.value != "fetch":
            out.finding(f"'git remote {hit.spelled}' {FORCES_PUSHES}")
