"""Catalog family: network clients (curl, wget, ssh, scp, sftp).

curl and wget write what they download: ``-o``/``-O``, cookie jars, traces,
and with ``-O`` (curl) or by default (wget) a file named after the URL. Those
are operand-like writes, a finding wherever they land, as before the catalog.
Options that load more options (``curl -K``, ``wget --config``/``-e``) are
findings. ssh reads options before the host and again after it (up to the
remote command); ``-o ProxyCommand=…``/``LocalCommand`` are shell strings it
runs locally, ``-F`` a config file (whose ProxyCommand it would run too), and
``-I``/``PKCS11Provider`` a library it loads. ``-J``/``ProxyJump`` is a
finding: ssh before 9.6 turns the jump host into a ProxyCommand run by
``$SHELL -c`` (a host spelled with shell syntax is read as that command too).
scp ``-S`` and sftp ``-S`` are the program run in place of ssh. ssh-keygen
``-D``/``-w``/``-O provider=`` load a library (code) of its choosing; ``-f FILE``
is written (and FILE.pub) unless it only reads keys (``-l -B -y -e -i -F -Q``),
so protected paths see ``-f ~/.bashrc``; ``-O write-attestation=FILE`` writes FILE.
"""

from __future__ import annotations

import os
import re

from shellgate.shell.argv.engine import OPTIONAL, POSIX, Opt, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, letters, val, values
from shellgate.shell.catalog.read import apply
from shellgate.shell.catalog.uploads import is_loopback, read_urls

_REMOTE = re.compile(r"^[^/]*:")  # host:path is not a local write


def _url_name(url: str) -> str:
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path.rsplit("/", 1)[-1] if "/" in path else ""


def _curl_writes(parsed: Parsed) -> list[str]:
    targets = parsed.values("-o", "-D", "-c", "--trace", "--trace-ascii")
    if parsed.has("-O", "--remote-name-all"):
        base = (parsed.values("--output-dir") or ["."])[0]
        targets += [os.path.join(base, name) for name in map(_url_name, parsed.words) if name]
    return targets


#: curl options that send data: a body, a form, a file, a JSON document.
_CURL_DATA = ("-d", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
              "-F", "--form-string", "-T")


def _curl(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``--engine`` loads a crypto engine (a library); URLs: see :mod:`.uploads`."""
    if parsed.values("--engine"):
        out.finding(f"'{argv[0]} --engine' loads a library (code) of its choosing")
    urls = [w for w in parsed.words if not w.startswith("-")] + parsed.values("--url")
    read_urls(argv[0], urls, out, sends_data=bool(parsed.values(*_CURL_DATA)))


def _wget(argv: Argv, parsed: Parsed, out: Reading) -> None:
    sends = bool(parsed.values("--post-data", "--post-file", "--body-data", "--body-file"))
    sends |= any(m.upper() in ("POST", "PUT", "PATCH") for m in parsed.values("--method"))
    read_urls(argv[0], list(parsed.words), out, sends_data=sends)


def _wget_writes(parsed: Parsed) -> list[str]:
    targets = parsed.values("-O", "-o", "-a")
    if not parsed.values("-O"):
        base = (parsed.values("-P") or ["."])[0]
        targets += [os.path.join(base, name) for name in map(_url_name, parsed.words) if name]
    return targets


# -- ssh, scp, sftp -------------------------------------------------------------------

#: ``-o`` keys (lower case) whose value ssh runs through the shell, loads as code,
#: reads as more configuration, or writes to.
_SSH_SHELL_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
_SSH_LOADS = frozenset({"pkcs11provider", "securitykeyprovider", "include"})
_SSH_WRITES = frozenset({"userknownhostsfile"})
#: Characters that make a jump host a shell command once ssh < 9.6 pastes it
#: into the ProxyCommand it runs through ``$SHELL -c``.
_SHELL_SYNTAX = re.compile(r"[\s|&;<>()$`\\'\"*?\[\]{}~#!]")


def _ssh_options(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-o Key=value`` and ``-o 'Key value'`` (ssh_config syntax, keys in any case)."""
    for setting in parsed.values("-o"):
        key, value = _ssh_setting(setting)
        if key in _SSH_SHELL_KEYS and value:
            out.payloads.append((f"{argv[0]} -o {key} command", value))
        elif key in _SSH_LOADS:
            out.finding(f"'{argv[0]} -o {key}' loads code or configuration of its choosing")
        elif key in _SSH_WRITES and value:
            out.outputs.extend(value.split())
        elif key == "proxyjump":
            _jump(argv[0], f"-o {key}", value, out)
    for host in parsed.values("-J"):
        _jump(argv[0], "-J", host, out)


def _jump(name: str, spelled: str, host: str, out: Reading) -> None:
    """ssh < 9.6 runs a jump host as a ProxyCommand through the shell."""
    out.finding(
        f"'{name} {spelled}' names a jump host that ssh before 9.6 runs through the shell"
        " (as a ProxyCommand)"
    )
    if host and _SHELL_SYNTAX.search(host):
        out.payloads.append((f"{name} {spelled} command", host))


def _ssh_setting(setting: str) -> tuple[str, str]:
    match = re.match(r"\s*([A-Za-z0-9]+)\s*(?:=\s*|\s+)(.*)", setting, re.DOTALL)
    if match is None:
        return setting.strip().lower(), ""
    return match.group(1).lower(), match.group(2).strip()


def _ssh_after_host(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """ssh parses options once more after the host, up to the remote command. On
    this machine (``localhost``, ``127.0.0.1``) the remote command runs here: it
    is a shell string parsed as commands."""
    if parsed.operands:
        host_at = parsed.operands[0][0]
        again = apply((argv[0], *argv[host_at + 1 :]), _SSH_AGAIN, out, [])
        command = argv[host_at + 1 :][again.end - 1 :] if again.end else ()
        if command and is_loopback(argv[host_at].rsplit("@", 1)[-1]):
            out.payloads.append((f"{argv[0]} localhost command", " ".join(command)))


def _scp_writes(parsed: Parsed) -> list[str]:
    operands = parsed.words
    return [a for a in operands[-1:] if len(operands) >= 2 and not _REMOTE.match(a)]


#: ssh-keygen modes that only read ``-f FILE`` (fingerprint, bubblebabble, print
#: the public key, export, import, find a host, query a KRL).
_KEYGEN_READS = ("-l", "-B", "-y", "-e", "-i", "-F", "-Q")


def _ssh_keygen(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for option in parsed.values("-O"):
        key, _, value = option.partition("=")
        if key.lower() == "provider":
            out.finding(f"'{argv[0]} -O {option[:40]}' loads a library (code) of its choosing")
        elif key.lower() == "write-attestation" and value:
            out.writes.append(value)
    if not parsed.has(*_KEYGEN_READS):
        for key_file in parsed.values("-f"):
            out.writes.extend((key_file, key_file + ".pub"))


_SSH_COMMON = (
    val("-o"),
    val("-F", finding="reads an ssh configuration file of its choosing (ProxyCommand…)"),
    val("-J"), val("-i"), val("-c"), val("-l"), val("-P"),
)
_SSH_OPTIONS = (
    *_SSH_COMMON,
    val("-E", writes=True),
    val("-I", finding="loads a PKCS#11 library (code) of its choosing"),
    *letters("BbDeLmOpQRSWw"),
)
_SSH_AGAIN = Entry(("ssh",), POSIX, _SSH_OPTIONS, hooks=(_ssh_options,))

ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("curl",),
        options=(
            flag("-O --remote-name"), flag("--remote-name-all"), flag("-I --head"),
            val("-o --output"), val("-D --dump-header"), val("-c --cookie-jar"),
            val("--trace"), val("--trace-ascii"), val("--output-dir"),
            val("-K --config", finding="loads more options from a file"),
            val("--engine"),
            *(val(name, writes=True)
              for name in ("--libcurl", "--stderr", "--etag-save", "--hsts", "--alt-svc")),
            val("-d --data"), val("-H --header"), val("-u --user"), val("-A --user-agent"),
            val("-e --referer"), val("-X --request"), val("-x --proxy"), val("-r --range"),
            val("-T --upload-file"), val("-F --form"), val("-E --cert"), val("-m --max-time"),
            val("-w --write-out"), val("-z --time-cond"), val("-Y --speed-limit"),
            val("-y --speed-time"), val("-C --continue-at"), val("-Q --quote"),
            val("-b --cookie"), val("-U --proxy-user"), val("-P --ftp-port"),
            val("-t --telnet-option"),
            *values("--data-raw --data-binary --data-urlencode --data-ascii --json --url "
                    "--connect-timeout --retry --retry-delay --retry-max-time --cacert "
                    "--capath --key --key-type --cert-type --pass --resolve --connect-to "
                    "--netrc-file --ciphers --interface --local-port --max-filesize "
                    "--limit-rate --proto --proto-redir --aws-sigv4 --oauth2-bearer "
                    "--mail-from --mail-rcpt --request-target --pinnedpubkey --dns-servers "
                    "--unix-socket --abstract-unix-socket --preproxy --noproxy "
                    "--proxy-header --form-string --variable --max-redirs --trace-config "
                    "--expect100-timeout --happy-eyeballs-timeout-ms --socks5 "
                    "--socks5-hostname --socks4 --socks4a --proxy-cacert --proxy-cert "
                    "--proxy-key --tls-max --url-query --create-file-mode --etag-compare"),
            flag("-s --silent", inert=True), flag("-S --show-error", inert=True),
            flag("-v --verbose", inert=True), flag("-#"),
        ),
        writes=_curl_writes,
        hooks=(_curl,),
    ),
    Entry(
        ("wget",),
        options=(
            val("-O --output-document"), val("-o --output-file"), val("-a --append-output"),
            val("-P --directory-prefix"),
            val("-e --execute", finding="runs a wgetrc command (it can name files to write)",
                when=lambda v: not v.replace("_", "").lower().startswith("robots=")),
            val("--config", finding="loads a wgetrc of its choosing"),
            Opt(("--use-askpass",), OPTIONAL, runs="program"),
            *(val(name, writes=True) for name in ("--save-cookies", "--rejected-log",
                                                  "--warc-file", "--hsts-file")),
            val("-U --user-agent"), val("-t --tries"), val("-i --input-file"), val("-B --base"),
            val("-T --timeout"), val("-w --wait"), val("-Q --quota"), val("-l --level"),
            val("-A --accept"), val("-R --reject"), val("-D --domains"),
            val("-I --include-directories"), val("-X --exclude-directories"), val("-n"),
            *values("--limit-rate --header --user --password --post-data --post-file "
                    "--body-data --body-file --method --load-cookies --ca-certificate "
                    "--certificate --private-key --bind-address --exclude-domains --cut-dirs "
                    "--default-page --referer --restrict-file-names --dns-timeout "
                    "--connect-timeout --read-timeout --waitretry --http-user "
                    "--http-password --proxy-user --proxy-password --ftp-user --ftp-password "
                    "--accept-regex --reject-regex --regex-type --local-encoding "
                    "--remote-encoding --ca-directory --certificate-type --private-key-type "
                    "--secure-protocol --ciphers --prefer-family --retry-on-http-error"),
            flag("-q --quiet", inert=True), flag("-v --verbose", inert=True),
            flag("--no-verbose", inert=True),
        ),
        writes=_wget_writes,
        hooks=(_wget,),
    ),
    Entry(("ssh",), POSIX, _SSH_OPTIONS, hooks=(_ssh_options, _ssh_after_host)),
    Entry(
        ("scp",),
        POSIX,
        (*_SSH_COMMON, val("-S", runs="program"), val("-D", runs="words"), val("-X")),
        writes=_scp_writes,
        obvious_writer=True,
        hooks=(_ssh_options,),
    ),
    Entry(
        ("sftp",),
        POSIX,
        (
            *_SSH_COMMON, val("-S", runs="program"), val("-D", runs="words"),
            val("-b", finding="runs sftp commands from a file (! runs a local shell)"),
            *letters("BRsX"),
        ),
        hooks=(_ssh_options,),
    ),
    Entry(
        ("ssh-keygen",),
        POSIX,
        (
            val("-D", finding="loads a PKCS#11 library (code) of its choosing"),
            val("-w", finding="loads a security key provider library (code) of its choosing"),
            *letters("abCEfFIJjMmNnOPrRstVYZz"),
        ),
        obvious_writer=True,
        hooks=(_ssh_keygen,),
    ),
)  # fmt: skip
