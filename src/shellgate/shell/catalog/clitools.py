"""Catalog family: command-line tools policies allow by name — jq, GNU parallel, gh.

* ``jq``: ``-L DIR`` (``--library-path``) adds a module search directory its
  program's ``import``/``include`` read files from (``-L ~`` and ``import
  ".docker/config"`` reads a secret no word names): a finding.
* ``parallel``: GNU parallel builds command lines at run time (from its
  arguments after ``:::``, files after ``::::``, or its stdin) and runs them
  through a shell: a finding. The command before ``:::`` (or, with none, each
  argument) is also parsed as a shell string so deny rules see it.
* ``gh``: ``alias set``/``import`` (an alias may run a shell: ``!CMD``,
  ``--shell``), ``config set`` (pager, editor, browser name programs),
  ``extension install|upgrade|exec`` (runs downloaded code) and ``auth token``
  (prints a secret) are findings; ``gh pr list`` and the like stay as they are.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, aliases, val, values
from shellgate.shell.catalog.read import in_repository

#: GNU parallel's argument separators: what follows is input, not the command.
_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})
_PARALLEL = "runs command lines it builds at run time (from its arguments or input)"


def _parallel(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """The command template (joined, as parallel's shell reads it), and with the
    first group of arguments; with no template, each argument is a command."""
    rest = list(argv[parsed.end :])
    cut = next((i for i, word in enumerate(rest) if word in _SEPARATORS), len(rest))
    command, args = rest[:cut], rest[cut + 1 :]
    args = args[: next((i for i, w in enumerate(args) if w in _SEPARATORS), len(args))]
    label = f"{argv[0]} command"
    if command:
        out.payloads.append((label, " ".join(command)))
        if args:
            out.payloads.append((label, " ".join([*command, *args])))
    else:
        out.payloads.extend((label, arg) for arg in args)


_GH_PRINTS = "prints a secret (its auth token)"
#: ``(group, verb)`` pairs that are findings, with why.
_GH_FINDINGS = {
    ("alias", "set"): "defines an alias (one may run a shell: '!CMD', --shell)",
    ("alias", "import"): "defines aliases (one may run a shell: '!CMD', --shell)",
    ("config", "set"): "changes gh's configuration (pager, editor, browser name programs)",
    ("auth", "token"): _GH_PRINTS,
    **{(group, verb): "installs or runs an extension (downloaded code)"
       for group in ("extension", "extensions", "ext")
       for verb in ("install", "upgrade", "exec", "create")},
}  # fmt: skip


def _gh(argv: Argv, parsed: Parsed, out: Reading) -> None:
    words = parsed.words
    pair = (words[0], words[1]) if len(words) > 1 else None
    if pair is not None and pair in _GH_FINDINGS:
        out.finding(f"'{argv[0]} {pair[0]} {pair[1]}' {_GH_FINDINGS[pair]}")
    if words[:2] == ["auth", "status"] and parsed.has("-t", "--show-token"):
        out.finding(f"'{argv[0]} auth status --show-token' {_GH_PRINTS}")


ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("jq", "gojq", "jaq"),
        GNU,
        options=(
            val("-L --library-path", finding="adds a module directory its program may import from"),
            val("-f --from-file"), val("--indent"),
            *values("--arg --argjson --slurpfile --rawfile", takes=2),
        ),
    ),
    Entry(
        ("parallel",),
        GNU_PREFIX,
        options=aliases(
            "-j --jobs -P --max-procs, -S --sshlogin, --sshloginfile --slf, -a --arg-file, "
            "-d --delimiter, -E, -I, --joblog, --results --res, --tmpdir, -n --max-args, -N, "
            "-L --max-lines, --colsep -C, --load, --memfree, --timeout, --retries, --delay, "
            "--halt, --tagstring, --basefile --bf, --workdir --wd, --return, --transferfile "
            "--tf, --env, --block, --recstart, --recend, --header, --ssh, --shebang, -s "
            "--max-chars, --termseq, --rpl, --sshdelay, --limit, --tag-string"
        ),
        finding=_PARALLEL,
        hooks=(_parallel,),
    ),
    # gh runs git in its directory to find the repository it acts on.
    Entry(("gh",), GNU, aliases("-R --repo, --hostname, -H --header"),
          hooks=(_gh, in_repository)),
)
