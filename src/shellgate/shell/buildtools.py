"""Files ``less`` writes through an option, read by the old knowledge path.

Build tools, git and pytest moved to the command catalog (``catalog/build.py``,
``catalog/vcs.py``); until the interpreters are ported there too, ``python -m
TOOL`` is read here as TOOL through the catalog, so its report files and
``--basetemp`` stay write targets and deletions.
"""

from __future__ import annotations

from shellgate.shell import catalog

Argv = tuple[str, ...]


def _value(form: Argv, i: int) -> str:
    """The argument of the option at ``form[i]``: glued after ``=`` or the next word."""
    word = form[i]
    if "=" in word:
        return word.partition("=")[2]
    return form[i + 1] if i + 1 < len(form) else ""


def _less_outputs(form: Argv) -> tuple[list[str], list[str]]:
    """``less -o/-O FILE``, ``--log-file``/``--LOG-FILE``: on a terminal, less
    copies its input there. The gate gives commands no terminal (less then acts
    as cat), so only where it would land matters: protected paths deny it."""
    out = []
    for i, word in enumerate(form[1:], start=1):
        if word.startswith("--"):
            lowered = word.partition("=")[0].lower()
            if len(lowered) >= 5 and "--log-file".startswith(lowered):
                out.append(_value(form, i))
        elif word[:1] == "-":
            letters = word[1:]
            for j, letter in enumerate(letters):
                if letter in "oO":
                    out.append(letters[j + 1 :] or (form[i + 1] if i + 1 < len(form) else ""))
                    break
                if letter in "bhjkpPtTxyzD#":  # options taking an argument end the bundle
                    break
    return [o for o in out if o], []


def output_operands(form: Argv) -> tuple[list[str], list[str]]:
    """(files ``form`` writes through an option, paths it empties or deletes).

    A tool run as ``python -m TOOL`` is read as ``TOOL`` (by the catalog).
    """
    if len(form) > 2 and form[1] == "-m" and form[0].startswith(("python", "pypy")):
        module = catalog.read(form[2:])
        return (list(module.outputs), list(module.deleted)) if module is not None else ([], [])
    if form and form[0] == "less":
        return _less_outputs(form)
    return [], []
