"""Secrets: the one list of paths no command may read unasked, and the layer that asks.

The same list serves two guards (one list, one place):

* the bwrap executor masks every secret that exists (a read finds an empty file
  or directory), see ``docs/sandbox.md``;
* the **protected-reads** layer makes a segment ``ask`` when any word it hands a
  tool names a secret — whatever the rules say, whatever the executor — so under
  the local executor ``cat ~/.ssh/id_rsa`` needs a person (and a headless
  default denies it).

The list: :data:`HOME_SECRETS` under ``$HOME`` and the password database's home,
:data:`WORKSPACE_SECRETS` in the workspace, then ``[policy] secret_paths`` and
``[sandbox] deny_read`` (``~`` expanded; relative entries are relative to the
workspace).

Which words a command reads: the layer names no command. Every word of every
reading of the segment (``argv``, the forms with wrappers peeled) counts, with
the value of a ``--opt=VALUE`` or ``KEY=VALUE`` word, the option values the
command catalog finds (glued ``-fFILE`` included), input redirections and a
here-string's words, each also in pieces (:func:`_pieces`: ``@FILE``,
``SRC:DST``, ``file://HOST/PATH``…); a word that names no secret costs nothing. A relative word is
read in the segment's directory (``Segment.cwd``: a ``cd`` earlier in the same
command moves it), in the directories its ``chdir`` options name (``git -C``),
and as if the command ran in the home or the workspace; after a ``cd`` the
analysis lost, it asks when it could end a secret's path. Both sides are
compared lexically and physically (symlinks resolved), as protected paths are.

Not caught (the sandbox's masks are the guard there): a directory that merely
*contains* a secret (``grep -r TOKEN ~``, ``tar cf h.tar ~``) — asking for every
read of the home or the workspace would ask for ``ls`` — and a program that
opens a secret by a name built at run time (that segment has findings and asks
for its own reasons).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from shellgate.config import Config
from shellgate.hookspecs import hookimpl
from shellgate.models import CallInfo, Decision, Segment
from shellgate.policy.gate_files import secret_config, store_files, token_files
from shellgate.policy.physical import realpath
from shellgate.shell.argv.engine import scan
from shellgate.shell.catalog import lookup
from shellgate.shell.catalog.read import basename

LAYER = "protected-reads"

#: Secrets under a home directory (relative to it). Masked by the sandbox when they
#: exist; asked for on read by the protected-reads layer.
HOME_SECRETS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker/config.json", ".netrc",
    ".git-credentials", ".config/gh", ".config/hub", ".pypirc", ".npmrc",
    ".cargo/credentials", ".cargo/credentials.toml", ".azure", ".config/op", ".vault-token",
    ".terraform.d/credentials.tfrc.json", ".local/share/keyrings", ".password-store",
    ".pgpass", ".pg_service.conf",
)  # fmt: skip

#: Secrets in the workspace (relative to it).
WORKSPACE_SECRETS: tuple[str, ...] = (".env",)

#: Redirections whose target is a file the command reads.
_READ_REDIRECTS = frozenset({"<", "<>"})
#: Names of the running command's own directory (the layer resolves them itself:
#: ``os.path.realpath`` would read this process's).
_CWD_PREFIXES = ("/proc/self/cwd", "/proc/thread-self/cwd", "~+")
#: Another process's environment: the gate's own (a store URL with its password in
#: ``SHELLGATE_*__STORE``, ``PGPASSWORD``, API keys) is readable by its user although
#: the command's own copy is scrubbed (``[^/]+``: a pid, ``self``, or a glob).
_PROC_ENVIRON = re.compile(r"/proc/[^/]+/(task/[^/]+/)?environ")
#: Words longer than this are no path anyone reads (PATH_MAX is 4096).
_MAX_PATH = 4096


def homes() -> list[str]:
    """``$HOME`` and the password database's home (they may differ; both count)."""
    found = [os.path.realpath(os.path.expanduser("~"))]
    with contextlib.suppress(KeyError):
        found.append(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    return list(dict.fromkeys(found))


def configured(config: Config) -> tuple[str, ...]:
    """The configured entries: ``[policy] secret_paths`` then ``[sandbox] deny_read``."""
    return (*config.policy.secret_paths, *config.sandbox.deny_read)


def gate_secrets(config: Config) -> list[str]:
    """The gate's own readable secrets: SQLite stores (queued commands, the audit
    trail), tokens files, a config naming a PostgreSQL store (its password)."""
    return [*store_files(config), *token_files(config), *secret_config(config)]


def secret_paths(config: Config, *, home_dirs: Sequence[str], workspace: str) -> list[str]:
    """Every secret as an absolute path (lexical; not checked for existence)."""
    out = [os.path.join(h, s) for h in home_dirs for s in HOME_SECRETS]
    out.extend(os.path.join(workspace, s) for s in WORKSPACE_SECRETS)
    out.extend(os.path.join(workspace, os.path.expanduser(p)) for p in configured(config))
    out.extend(gate_secrets(config))
    return [os.path.normpath(p) for p in dict.fromkeys(out)]


@dataclass(frozen=True, slots=True)
class Secret:
    path: str  # absolute, one spelling (lexical or physical)
    shown: str  # as the list names it: "~/.ssh", ".env", "vault/token"


def _spellings(path: str) -> set[str]:
    return {os.path.normpath(path), realpath(path)}


def _physical(workdir: str, word: str, lexical: str) -> str:
    """``os.path.realpath(lexical)``, cheaper for the usual word: the workdir is
    canonical, so below it only a component that is a symlink can change the path
    (one ``lstat`` per component, and none past the first that does not exist)."""
    relative = os.path.normpath(word)
    if word.startswith("/") or relative == ".." or relative.startswith("../"):
        return realpath(lexical)
    path = workdir.rstrip("/")
    for part in relative.split("/"):
        path = f"{path}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return realpath(lexical)
        except OSError:
            return lexical  # nothing below a missing name can be a link
    return lexical


def _ancestor_in(path: str, paths: dict[str, str], prefixes: tuple[str, ...]) -> str | None:
    """``path`` or its nearest ancestor that is a key of ``paths`` (both normalised;
    ``prefixes`` are the keys, a quick filter: most words are inside no secret)."""
    if not path.startswith(prefixes):
        return None
    while path and path not in ("/", "."):
        if path in paths:
            return path
        path = os.path.dirname(path)
    return None


@lru_cache(maxsize=4096)
def _catalog_values(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Option values and operands as the command's catalog entry reads them (cached:
    agents repeat the same few argvs)."""
    entry = lookup(basename(argv[0]))
    if entry is None:
        return ()
    spelled = entry.respell(argv) if entry.respell is not None else argv
    parsed = scan(spelled, entry.spec, through_double_dash=entry.through_double_dash)
    values = [hit.value for hit in parsed.hits if hit.value]
    # `git -C DIR`, `tar -C DIR`: its relative words are read in DIR too.
    moved = [h.value for h in parsed.hits if h.value and h.opt is not None and h.opt.chdir]
    joined = [os.path.join(d, w) for d in moved for w in (*values, *parsed.words) if w != d]
    return (*values, *parsed.words, *joined)


def read_words(segment: Segment) -> list[str]:
    """Every word of ``segment`` that may name a file it reads (see the module docstring)."""
    words: list[str] = []
    for form in segment.all_forms():
        if not form:
            continue
        for word in form[1:]:
            words.append(word)
            _, eq, value = word.partition("=")
            if eq and value:
                words.append(value)
        words.extend(_catalog_values(form))
    words.extend(segment.reads)
    for r in segment.redirects:
        if r.op in _READ_REDIRECTS:
            words.append(r.target)
        elif r.op == "<<<":  # its words may become arguments (`xargs cat <<< .env`)
            words.extend(r.target.split())
    out: dict[str, None] = {}
    for word in words:
        if word and len(word) <= _MAX_PATH:
            out[word] = None
            for piece in _pieces(word):
                out[piece] = None
    return list(out)


def _pieces(word: str) -> list[str]:
    """The paths a word may carry inside it: after ``@`` (``curl -d @FILE``, ``F=@FILE``,
    response files), after a leading ``<`` (``curl -F 'f=<FILE'``), the parts between
    ``:``, ``,`` and ``=`` (``docker -v SRC:DST``, ``--mount src=DIR,dst=…``,
    ``git show HEAD:FILE``), the path of a URL (``file://localhost/PATH``, decoded)
    and the rest of a short option (``-iFILE``)."""
    out: list[str] = []
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        out.append(word[2:])
    for sep in "@<":
        _, found, rest = word.partition(sep)
        if found and rest:
            out.append(rest)
    if any(sep in word for sep in ":,="):
        out.extend(word.replace(",", ":").replace("=", ":").split(":"))
    _, url, rest = word.partition("://")
    if url:  # file://HOST/PATH, percent-encoded as tools decode it
        _, slash, path = rest.partition("/")
        if slash:
            out.append(unquote("/" + path))
    return [p for p in out if p]


class ProtectedReadsLayer:
    """``ask`` for a segment that reads a secret, whatever the rules say; never allows."""

    name = LAYER

    def __init__(self, config: Config, *, home_dirs: Sequence[str] | None = None) -> None:
        self.homes = list(home_dirs) if home_dirs is not None else homes()
        self.config = config
        fixed: list[tuple[str, str]] = []
        for home in self.homes:
            fixed.extend((os.path.join(home, s), f"~/{s}") for s in HOME_SECRETS)
        for entry in configured(config):
            expanded = os.path.expanduser(entry)
            if os.path.isabs(expanded):
                fixed.append((expanded, entry))
        fixed.extend((path, path) for path in gate_secrets(config))
        self._fixed = self._expand(fixed)
        #: Home- and workspace-relative entries a relative word is also read against.
        self._relative: dict[str, str] = {
            **{s: s for s in self._workspace_entries()},
            **{s: f"~/{s}" for s in HOME_SECRETS},
        }
        self._relative_prefixes = tuple(self._relative)
        self._by_workspace: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {}

    def _workspace_entries(self) -> list[str]:
        out = list(WORKSPACE_SECRETS)
        for entry in configured(self.config):
            expanded = os.path.expanduser(entry)
            if not os.path.isabs(expanded):
                out.append(os.path.normpath(expanded))
        return out

    @staticmethod
    def _expand(entries: Iterable[tuple[str, str]]) -> dict[str, str]:
        out: dict[str, str] = {}
        for path, shown in entries:
            for spelled in sorted(_spellings(path)):
                out.setdefault(spelled, shown)
        return out

    def _secrets(self, workspace: str) -> tuple[dict[str, str], tuple[str, ...]]:
        found = self._by_workspace.get(workspace)
        if found is None:
            local = [(os.path.join(workspace, s), s) for s in self._workspace_entries()]
            paths = {**self._expand(local), **self._fixed}
            found = (paths, tuple(paths))
            if len(self._by_workspace) < 64:  # one gate, one workspace: a bound, not a cache
                self._by_workspace[workspace] = found
        return found

    def names(self, word: str, call: CallInfo, cwd: str | None = None) -> Secret | None:
        """The secret ``word`` names when read from ``cwd`` (default ``call.workdir``;
        ``""``: a directory a ``cd`` made unknown). ``None``: it names none."""
        workdir = call.workdir if cwd is None else cwd
        for prefix in _CWD_PREFIXES:  # the command's own directory, not this process's
            if word == prefix or word.startswith(prefix + "/"):
                word = "." + word[len(prefix) :]
                break
        if word.startswith("~-"):  # $OLDPWD: a directory this analysis does not know
            word, workdir = "." + word[2:], ""
        elif word.startswith("~"):
            word = os.path.expanduser(word)
        else:
            for prefix in ("${HOME}", "$HOME"):  # the analysis asks for these anyway
                if word == prefix or word.startswith(prefix + "/"):
                    word = os.environ.get("HOME", "~") + word[len(prefix) :]
                    break
        secrets, prefixes = self._secrets(call.workspace)
        if workdir or word.startswith("/"):
            base = workdir or "/"
            lexical = os.path.normpath(os.path.join(base, word))
            physical = (
                _physical(base, word, lexical)
                if base == call.workdir  # canonical: only links below it count
                else realpath(lexical)  # a cd may have gone through a link
            )
            paths = [lexical, physical]
            if ".." in word:  # the kernel takes `..` after a link physically
                paths.append(realpath(os.path.join(base, word)))
            for path in paths:
                if _PROC_ENVIRON.fullmatch(path):
                    return Secret(path, "/proc/PID/environ")
                hit = _ancestor_in(path, secrets, prefixes)
                if hit is not None:
                    return Secret(hit, secrets[hit])
        if not word.startswith("/"):
            relative = os.path.normpath(word)
            while relative.startswith("../"):
                relative = relative[3:]
            hit = _ancestor_in(relative, self._relative, self._relative_prefixes)
            if hit is not None:
                return Secret(hit, self._relative[hit])
            if not workdir and relative not in ("", ".", ".."):
                # Unknown directory: the word names a secret if it could be the end
                # of one's path (over-asks, only after a cd the analysis lost).
                return self._ending_in(relative, secrets)
        return None

    @staticmethod
    def _ending_in(relative: str, secrets: dict[str, str]) -> Secret | None:
        parts = relative.split("/")
        for count in range(len(parts), 0, -1):
            tail = "/" + "/".join(parts[:count])
            for path, shown in secrets.items():
                if path.endswith(tail):
                    return Secret(path, shown)
        return None

    @hookimpl
    def shellgate_check(self, call: CallInfo, segment: Segment) -> Decision | None:
        for write in segment.writes:
            secret = self.names(write.path, call, "/")
            if secret is not None:
                return Decision(
                    effect="ask",
                    reason=f"writes '{write.target}' in the secret path '{secret.shown}' "
                    f"({write.how}); writing a secret needs a person's approval, whatever "
                    "the rules say",
                    layer=LAYER,
                    rule=f"{LAYER}:{secret.shown}",
                )
        for word in segment.mentions:
            secret = self.names(os.path.expanduser(word), call, segment.cwd)
            if secret is not None:
                return Decision(
                    effect="ask",
                    reason=f"code it runs names '{word}' in the secret path '{secret.shown}'; "
                    "reading a secret needs a person's approval, whatever the rules say",
                    layer=LAYER,
                    rule=f"{LAYER}:{secret.shown}",
                )
        for word in read_words(segment):
            secret = self.names(word, call, segment.cwd)
            if secret is not None:
                where = (
                    f"the secret path '{word}'"
                    if word == secret.shown
                    else f"'{word}' in the secret path '{secret.shown}'"
                )
                return Decision(
                    effect="ask",
                    reason=f"reads {where}; reading a secret needs a person's approval, "
                    "whatever the rules say",
                    layer=LAYER,
                    rule=f"{LAYER}:{secret.shown}",
                )
        return None
