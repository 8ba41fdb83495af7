"""Catalog family: version control (git).

git reads its own global options (exact spellings, stopping at the subcommand),
then the subcommand parses its own. Most builtins use parse-options (options
permute, unique prefixes of long options are taken: ``git push --forc``); the
revision walkers (log, show, diff, format-patch…) refuse prefixes, so git
rejects ``git log --outp=x`` (read as a write anyway: over-approximation).

What runs: transport commands (``--upload-pack``, ``--receive-pack``, archive
``--exec``) and filters are shell strings git hands to ``sh -c``; ``bisect run``
runs a program. What loads code or changes what later git commands run
(``-c``, ``--config-env``, ``--exec-path=``, templates, ``git config`` of a key
that names a program) is a finding, and so is pushing through plumbing
(``send-pack``, ``subtree push``) that a ``git push`` rule never sees, and
``maintenance register``/``start``/``unregister``/``stop`` (the user's global
configuration, cron or systemd timers). Files written through options
(``--output``, ``--work-tree``, ``checkout-index --prefix``,
``credential-store --file``…) are write targets; so are operands a subcommand
writes (``merge-file``'s first). What ``log``/``show``/``diff``/``format-patch``
``--output``, ``archive -o`` and ``bundle create`` write is text the command
chooses (``--format``, ``--prefix``, ref names): a write like a shell's ``>
FILE``, a question wherever it lands (it can plant a ``Makefile`` or a
``conftest.py``). The directories ``clone``, ``init`` and ``worktree add``
create are outputs: fine inside the workdir, a question outside it, denied on a
protected path. Relative targets under ``git -C DIR`` are joined with DIR.
Forced pushes and deletions have one canonical spelling (``gitremote.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from shellgate.shell.argv.canonical import operand_words, option_words
from shellgate.shell.argv.engine import CLAP, GNU_PREFIX, OPTIONAL, POSIX, Dialect, Opt, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, aliases, flag, optional, val, values
from shellgate.shell.catalog.gitconfig import (
    CONFIG_FLAGS,
    FORCES_PUSHES,
    GLOBAL_CONFIG,
    command_line_config,
    config_hook,
)
from shellgate.shell.catalog.gitremote import push_words, remote_mirror
from shellgate.shell.catalog.gitwrites import (
    bundle,
    clone,
    index_pack_writes,
    init,
    merge_file_writes,
    worktree,
)
from shellgate.shell.catalog.read import add_program

_CONFIG = "sets configuration that can make git run programs"
_PUSHES = "pushes to a remote (plumbing for 'git push')"
#: Perl's Getopt::Long as git send-email configures it: one dash or two, any
#: case, unique prefixes, no bundles (``-SENDMAIL-CMD=x`` is ``--sendmail-cmd``).
_GETOPT_LONG = Dialect("getopt-long", bundles=False, single_dash_long=True, long_any_case=True)


class _Subcommands(Mapping[str, Entry]):
    """git's subcommands: the declared ones, and any other word (an alias, a
    subcommand not declared) read verbatim, its options kept as written: only
    git's inert global options leave its canonical form."""

    def __init__(self, known: Mapping[str, Entry]) -> None:
        self._known = dict(known)

    def __getitem__(self, word: str) -> Entry:
        return self._known.get(word, _VERBATIM)

    def __iter__(self) -> Iterator[str]:
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)


_VERBATIM = Entry(("git-subcommand",), canonical_drops_options=True, no_canonical=True)


def _submodule(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``submodule foreach CMD…``: git runs the words as one shell string."""
    words = parsed.words
    if "foreach" not in words:
        return
    rest = argv[parsed.operands[words.index("foreach")][0] + 1 :]
    while rest and rest[0] in ("--recursive", "-q", "--quiet", "--"):
        rest = rest[1:]
    if rest:
        out.payloads.append(("git submodule foreach payload", " ".join(rest)))


def _bisect(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``bisect run CMD ARGS…`` runs CMD (its own segment) at every step."""
    words = parsed.words
    if words[:1] == ["run"]:
        add_program(out, "git bisect run payload", words[1:])
    del argv


def _subtree(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``subtree push`` runs ``git push`` itself: a push no ``git push`` rule sees."""
    if parsed.words[:1] == ["push"]:
        out.finding(f"'git {argv[0]} push' {_PUSHES}")


#: ``git maintenance VERB`` (git reads the verb at ``argv[1]`` only): what each changes.
_MAINTENANCE = {
    "register": GLOBAL_CONFIG,
    "unregister": GLOBAL_CONFIG,
    "start": f"{GLOBAL_CONFIG}, and installs cron or systemd timers that run git "
             "in the background, outside the gate",
    "stop": "removes the user's cron or systemd timers",
}  # fmt: skip


def _maintenance(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``register``/``start`` add the repository to ``maintenance.repo`` in the
    user's global configuration (``--config-file F``: in F), as
    ``git config --global`` would; ``start`` also installs the scheduler's jobs."""
    del parsed
    why = _MAINTENANCE.get(argv[1] if len(argv) > 1 else "")
    if why:
        out.finding(f"'git {argv[0]} {argv[1]}' {why}")


def _for_each_repo(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``for-each-repo --config=KEY ARGS…`` runs ``git -C REPO ARGS…`` for every
    repository KEY lists: a git command of its own (a rule on ``git push --force``
    meets it), run in directories not known here."""
    rest = list(argv[parsed.end :])
    if rest[:1] == ["--"]:
        rest = rest[1:]
    out.finding(f"'git {argv[0]}' runs git in each repository a configuration key lists")
    if rest:
        add_program(out, "git for-each-repo payload", ("git", *rest))


# -- subcommands ------------------------------------------------------------------

_UPLOAD_PACK = val("--upload-pack", runs="shell")
_PAGER = Opt(("-O", "--open-files-in-pager"), OPTIONAL, runs="program")
#: A file whose text the command's options choose (``--format``): written like
#: a shell's ``> FILE`` (the walkers are no ``reports`` entry).
_OUTPUT = val("--output", writes=True)
#: Value options every diff and log walker takes (declared so values stay values).
_REVISIONS = (
    _OUTPUT,
    *values("--output-indicator-new --output-indicator-old --output-indicator-context "
            "--author --committer --grep --format --encoding --skip --min-parents "
            "--max-parents --diff-filter --src-prefix --dst-prefix --line-prefix "
            "--word-diff-regex --ignore-matching-lines --anchored --rotate-to --skip-to "
            "--find-object --stat-width --stat-count"),
    *aliases("--since --after, --until --before"),
    # Revision patterns are glued only (``--branches=feat/*``).
    *(optional(name) for name in ("--exclude", "--glob", "--branches", "--tags", "--remotes")),
    val("-n --max-count"), val("-S"), val("-G"), val("-L"), val("-O"), val("-I"),
)  # fmt: skip

_SUBCOMMANDS = {
    "log": Entry(("log",), CLAP, _REVISIONS),
    "show": Entry(("show",), CLAP, _REVISIONS),
    "diff": Entry(("diff",), CLAP, _REVISIONS),
    "whatchanged": Entry(("whatchanged",), CLAP, _REVISIONS),
    "format-patch": Entry(("format-patch",), CLAP, (
        val("-o --output-directory", writes=True),
        *values("--subject-prefix --suffix --in-reply-to --to --cc --from --signature "
                "--signature-file --base --interdiff --range-diff --reroll-count "
                "--cover-from-description"),
        *_REVISIONS[1:],
    )),
    # Commands that throw work away, which admins write deny rules for: their
    # options are declared so every spelling reaches one canonical form.
    "reset": Entry(("reset",), options=(
        flag("--hard"), flag("--soft"), flag("--mixed"), flag("--merge"), flag("--keep"),
        flag("-q --quiet", inert=True), flag("-p --patch"), flag("-N --intent-to-add"),
        optional("--recurse-submodules"), flag("--no-refresh"), flag("--refresh"),
        val("--pathspec-from-file"), flag("--pathspec-file-nul"),
    )),
    "clean": Entry(("clean",), options=(
        flag("-f --force"), flag("-d"), flag("-x"), flag("-X"), flag("-n --dry-run"),
        flag("-q --quiet", inert=True), flag("-i --interactive"), val("-e --exclude"),
    )),
    "branch": Entry(("branch",), options=(
        flag("-d --delete"), flag("-D"), flag("-f --force"), flag("-m --move"), flag("-M"),
        flag("-c --copy"), flag("-C"), flag("-r --remotes"), flag("-a --all"),
        flag("-l --list"), flag("-v --verbose", inert=True), flag("-q --quiet", inert=True),
        val("-u --set-upstream-to"), flag("--unset-upstream"), val("-t --track", takes=-1),
        *values("--contains --no-contains --merged --no-merged --points-at --sort "
                "--format --color --column"),
    ), canonical_words=lambda argv, parsed: _branch_words(parsed)),
    "push": Entry(("push",), options=(
        flag("-f --force"),
        optional("--force-with-lease"),
        flag("--force-if-includes"),
        flag("-d --delete"), flag("--mirror"), flag("--prune"), flag("--all"), flag("--tags"),
        flag("-u --set-upstream"), flag("-n --dry-run"), flag("--atomic"),
        flag("--follow-tags"), flag("--no-verify"),
        val("--receive-pack --exec", runs="shell"),
        val("-o --push-option"),
        val("--repo"),
        optional("--recurse-submodules"),
        optional("--signed"),
        flag("-q --quiet", inert=True),
        flag("-v --verbose", inert=True),
        flag("--progress", inert=True),
    ), canonical_words=push_words),
    "remote": Entry(("remote",), options=(
        optional("--mirror"), *aliases("-t --track, -m --master"),
    ), hooks=(remote_mirror,), canonical_drops_options=True, no_canonical=True),
    "send-pack": Entry(("send-pack",), options=(val("--receive-pack --exec", runs="shell"),),
                       finding=_PUSHES),
    "http-push": Entry(("http-push",), finding=_PUSHES),
    "subtree": Entry(("subtree",), options=(
        *aliases("-P --prefix, -m --message, --onto, -b --branch"),
    ), hooks=(_subtree,), canonical_drops_options=True, no_canonical=True),
    "fetch": Entry(("fetch",), options=(
        _UPLOAD_PACK,
        *aliases("--depth, --deepen, --shallow-since, --shallow-exclude, --refmap, -j --jobs, "
                 "-o --server-option, --negotiation-tip, --filter"),
        flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
    )),
    "fetch-pack": Entry(("fetch-pack",), options=(val("--upload-pack --exec", runs="shell"),)),
    "pull": Entry(("pull",), options=(
        _UPLOAD_PACK,
        *aliases("--depth, --deepen, --shallow-since, --shallow-exclude, -s --strategy, "
                 "-X --strategy-option, -j --jobs, -o --server-option"),
        flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
    )),
    "ls-remote": Entry(("ls-remote",), options=(
        val("-u --upload-pack --exec", runs="shell"), val("--sort"), val("-o --server-option"),
    )),
    "clone": Entry(("clone",), options=(
        val("-u --upload-pack", runs="shell"),
        val("--template", finding="copies hooks from a template directory"),
        val("-c --config", finding=_CONFIG),
        val("--separate-git-dir", writes=True),
        *aliases("-o --origin, -b --branch, --reference, --reference-if-able, --depth, "
                 "--shallow-since, --shallow-exclude, -j --jobs, --filter, --bundle-uri, "
                 "--server-option, --ref-format"),
        flag("--bare"), flag("--mirror", finding=FORCES_PUSHES),
        optional("--recurse-submodules"),
        flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
    ), hooks=(clone,)),
    "init": Entry(("init",), options=(
        val("--template", finding="copies hooks from a template directory"),
        val("--separate-git-dir", writes=True),
        *aliases("-b --initial-branch, --object-format, --ref-format"), optional("--shared"),
        flag("-q --quiet", inert=True),
    ), hooks=(init,)),
    "worktree": Entry(("worktree",), options=(
        *aliases("-b, -B, --reason, --expire"), flag("-q --quiet", inert=True),
    ), hooks=(worktree,)),
    "merge-file": Entry(("merge-file",), options=(
        flag("-p --stdout"), flag("--object-id"),
        *aliases("-L, --diff-algorithm"), optional("--marker-size"),
    ), writes=merge_file_writes),
    "credential-store": Entry(("credential-store",), options=(val("--file", writes=True),)),
    "credential-cache": Entry(("credential-cache",), options=(
        val("--socket", writes=True), val("--timeout"),
    )),
    "apply": Entry(("apply",), options=(
        flag("--unsafe-paths", finding="applies a patch that may write anywhere"),
        val("--build-fake-ancestor", writes=True),
        val("--directory", writes=True),  # every path of the patch lands below it
        *aliases("-p, -C, --exclude, --include, --whitespace"),
    )),
    "fast-export": Entry(("fast-export",), options=(
        val("--export-marks", writes=True), val("--import-marks"), val("--import-marks-if-exists"),
        *values("--signed-tags --signed-commits --tag-of-filtered-object --refspec "
                "--anonymize-map --reencode --progress"),
    )),
    "fast-import": Entry(("fast-import",), options=(
        val("--export-marks", writes=True), val("--import-marks"), val("--import-marks-if-exists"),
        flag("--allow-unsafe-features",
             finding="lets its input stream name files it reads and writes"),
    )),
    "index-pack": Entry(("index-pack",), options=(
        val("-o", writes=True), flag("--stdin"),
        *values("--index-version --threads --max-input-size --object-format"),
    ), writes=index_pack_writes),
    "archive": Entry(("archive",), options=(
        val("-o --output", writes=True),
        val("--exec", runs="shell"),
        *values("--remote --prefix --format --add-file --add-virtual-file --mtime"),
    )),
    "bundle": Entry(("bundle",), hooks=(bundle,)),
    "maintenance": Entry(("maintenance",), options=(
        val("--config-file", writes=True), *values("--scheduler --task --schedule"),
    ), hooks=(_maintenance,)),
    "for-each-repo": Entry(("for-each-repo",), GNU_PREFIX, (val("--config"),),
                           hooks=(_for_each_repo,), canonical_drops_options=True,
                           no_canonical=True),
    # `git mv x .git/hooks/x` plants a hook: the destination is written, like mv's.
    "mv": Entry(("mv",), options=(
        flag("-f --force"), flag("-k"), flag("-n --dry-run"), flag("-v --verbose", inert=True),
    ), writes="last", obvious_writer=True),
    # --prefix puts the index's files under it: what `git checkout` writes into
    # the work tree anyway (an admin allowing git's checkouts allows that).
    "checkout-index": Entry(("checkout-index",), reports=True, options=(
        val("--prefix", writes=True), val("--stage"),
    )),
    "config": Entry(("config",), options=(
        val("-f --file", finding="reads or writes a configuration file of its choosing"),
        flag("--global"), flag("--system"), flag("--local"), flag("--worktree"),
        *(flag(name) for name in CONFIG_FLAGS),
        flag("-l --list"), flag("-e --edit"),
        *values("--blob --type --default --comment --value"),
    ), hooks=(config_hook,)),
    "rebase": Entry(("rebase",), options=(
        val("-x --exec", runs="shell"),
        *aliases("--onto, -s --strategy, -X --strategy-option, -C, --whitespace"),
        optional("-S --gpg-sign"), optional("--empty"), optional("--rebase-merges"),
    )),
    "submodule": Entry(("submodule",), POSIX, hooks=(_submodule,), canonical_drops_options=True,
                       no_canonical=True),
    "bisect": Entry(("bisect",), POSIX, hooks=(_bisect,), canonical_drops_options=True,
                    no_canonical=True),
    "difftool": Entry(("difftool",), options=(
        val("-x --extcmd", runs="shell"), val("-t --tool"), *_REVISIONS[1:],
    )),
    "filter-branch": Entry(("filter-branch",), POSIX, (
        *(val(f"--{kind}-filter", runs="shell")
          for kind in ("env", "tree", "index", "parent", "msg", "commit", "tag-name")),
        val("-d", deletes=True), val("--subdirectory-filter"), val("--original"),
        val("--setup", runs="shell"),
    )),
    "grep": Entry(("grep",), options=(
        _PAGER,
        *aliases("-e, -f, -m --max-count, -A --after-context, -B --before-context, "
                 "-C --context, --max-depth, --threads"),
    )),
    "instaweb": Entry(("instaweb",), options=(
        val("-d --httpd", runs="words"), val("-b --browser", runs="program"),
        val("-m --module-path"), val("-p --port"),
    )),
    "send-email": Entry(("send-email",), _GETOPT_LONG, (
        *(val(f"--{kind}-cmd", runs="shell") for kind in ("to", "cc", "header", "sendmail")),
        # A full path is a sendmail-like program git runs; anything else a host.
        val("--smtp-server", runs="program", when=lambda value: value.startswith("/")),
        *values("--smtp-server-option --smtp-server-port --smtp-user --smtp-pass "
                "--smtp-encryption --smtp-domain --smtp-auth --smtp-ssl-cert-path --identity "
                "--to --cc --bcc --from --reply-to --in-reply-to --subject"),
    )),
    "daemon": Entry(("daemon",), options=(val("--access-hook", runs="program"),)),
}  # fmt: skip


def _branch_words(parsed: Parsed) -> list[str] | None:
    """``-D`` is ``--delete --force``, ``-M`` is ``--move --force``, ``-C`` is
    ``--copy --force`` (git's own definitions): spelled so, a rule on
    ``git branch -D *`` and one on ``git branch -d -f *`` meet every spelling."""
    names = {hit.name for hit in parsed.hits}
    if not names & {"-D", "-M", "-C"}:
        return None
    expand = {"-D": ("-d", "-f"), "-M": ("-m", "-f"), "-C": ("-c", "-f")}
    hits: list[tuple[str, str | None]] = []
    for hit in parsed.hits:
        if hit.opt is not None and hit.opt.inert:
            continue
        for name in expand.get(hit.name, (hit.name,)):
            hits.append((name, hit.value))
    words = option_words(hits, glued_short=True)
    return [*words, *operand_words(parsed.words)]


def _join(base: str, path: str) -> str:
    return path if not base or path.startswith(("/", "~")) else f"{base.rstrip('/')}/{path}"


def _git(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Writes the walkers would refuse as abbreviations (``--outp=F``) still count
    (every subcommand that reads diff options takes ``--output``: ``range-diff``,
    ``shortlog``…); relative write targets land under ``git -C DIR``."""
    if parsed.operands:
        sub_at = parsed.operands[0][0]
        words = argv[sub_at + 1 :]
        for i, word in enumerate(words):
            name, eq, value = word.partition("=")
            if name.startswith("--output-indicator") or len(name) < 5:
                continue
            if any(full.startswith(name) for full in ("--output", "--output-directory")):
                target = value if eq else (words[i + 1] if i + 1 < len(words) else "")
                if target and target not in out.outputs and target not in out.writes:
                    out.writes.append(target)
    base = ""
    for directory in parsed.values("-C"):
        base = _join(base, directory)
    if not (set(argv[1:2]) & {"--version", "version", "help", "--help", "-h"}):
        git_dir = parsed.values("--git-dir")
        out.repository = _join(base, git_dir[-1]) if git_dir else (base or ".")
    if base:
        out.outputs[:] = [_join(base, target) for target in out.outputs]
        out.writes[:] = [_join(base, target) for target in out.writes]
        out.deleted[:] = [_join(base, target) for target in out.deleted]


ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("git",),
        POSIX,
        options=(
            val("-C", inert=True, chdir=True),
            val("-c", finding=_CONFIG),
            val("--config-env", finding=_CONFIG),
            Opt(("--exec-path",), OPTIONAL, finding="runs git commands from another directory",
                when=lambda _value: True),
            val("--git-dir", writes=True),
            val("--work-tree", writes=True),
            *values("--namespace --super-prefix --attr-source --list-cmds"),
            flag("-P --no-pager", inert=True),
            flag("-p --paginate", inert=True),
            *(flag(name, inert=True) for name in (
                "--no-replace-objects", "--bare", "--literal-pathspecs", "--glob-pathspecs",
                "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
                "--no-lazy-fetch", "--no-advice")),
        ),
        subcommands=_Subcommands(_SUBCOMMANDS),
        # --work-tree and --git-dir move where git writes its tree or repository
        # (`--work-tree=.git/hooks checkout …` plants a hook): they ask, and
        # protected paths deny them. So do the files its subcommands write
        # (log --output); checkout-index --prefix is a report (see the entry).
        hooks=(_git, command_line_config),
    ),
)  # fmt: skip
