"""Catalog family: socket tools (nc and its kin, socat, socket) and openssl.

An admin who allows ``nc *`` or ``socat *`` allows connections; these tools
also hand a connection to a program: netcat's ``-e PROG`` and ncat's
``--exec``, ``-c CMD`` and ``--sh-exec CMD`` (run by ``sh -c``), socat's
``EXEC:CMD`` and ``SYSTEM:CMD`` addresses, socket's ``-p CMD``. Each is a
program or a shell string, a segment of its own (``nc -e /bin/sh`` is a shell
that needs its own allow). socat's file addresses (``OPEN:``, ``CREATE:``,
``GOPEN:``, a path) are files it may write; netcat's ``-o FILE`` (a hex dump)
is written.

openssl loads an engine or provider of its choosing (``-engine ./x.so``,
``-provider-path``): a finding, code loaded into it. ``-out``, ``-keyout`` and
the other output options are written; ``s_server -WWW``/``-HTTP``/``-www``
serves the working directory (an upload).
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import GNU, Dialect, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val, values
from shellgate.shell.catalog.read import add_program, split_words

_NC = Entry(
    ("nc", "netcat", "ncat", "nc.traditional", "nc.openbsd", "pwncat"),
    GNU,
    (
        val("-e --exec", runs="words"),
        val("-c --sh-exec", runs="shell"),
        val("--lua-exec", finding="runs Lua code from a file for each connection"),
        val("-o --output --append-output --hex-dump", writes=True),
        *values("-p -s -w -q -i -x -X -I -O -T -V -g -G -P -b -W -m -M --proxy "
                "--proxy-type --proxy-auth --source-port --source --wait --idle-timeout "
                "--allow --allowfile --deny --denyfile --max-conns"),
        flag("-l --listen"), flag("-k --keep-open"), flag("-u --udp"), flag("-v --verbose"),
        flag("-n --nodns"), flag("-z"), flag("-N"), flag("-d"), flag("-t"), flag("-C --crlf"),
    ),
    hooks=(),
    no_canonical=True,
)

#: socat address types whose parameter is a command (EXEC runs it as words,
#: SYSTEM through ``sh -c``), and those that name a file.
_SOCAT_FILES = frozenset({"open", "create", "creat", "gopen", "file", "pipe", "unix-listen",
                          "unix-connect", "unix-sendto", "unix-recv", "unix-client",
                          "abstract-listen", "pty-link", "link"})  # fmt: skip
_SOCAT_KEY = re.compile(r"([A-Za-z][\w-]*):(.*)", re.DOTALL)


def _socat_command(value: str) -> str:
    """An EXEC/SYSTEM parameter ends at the first unquoted ``,`` (address options)."""
    out: list[str] = []
    quote = ""
    for char in value:
        if quote:
            if char == quote:
                quote = ""
            else:
                out.append(char)
        elif char in "'\"":
            quote = char
        elif char == ",":
            break
        else:
            out.append(char)
    return "".join(out)


def _socat(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """The two addresses (``!!`` joins a read and a write address)."""
    name = argv[0]
    for address in parsed.words:
        for half in address.split("!!"):
            match = _SOCAT_KEY.fullmatch(half)
            if match is None:
                if "/" in half.split(",", 1)[0]:  # a bare path is GOPEN
                    out.writes.append(half.split(",", 1)[0])
                continue
            kind, value = match.group(1).lower(), match.group(2)
            if kind == "exec":
                add_program(out, f"{name} exec payload", split_words(_socat_command(value)))
            elif kind == "system":
                out.payloads.append((f"{name} system command", _socat_command(value)))
            elif kind in _SOCAT_FILES:
                path = value.split(",", 1)[0]
                if path:
                    out.writes.append(path)
    for setting in parsed.values("-lf"):
        out.writes.append(setting)


#: socat's options are one-dash words (``-lf FILE``, ``-d -d``), never bundled.
_SOCAT_OPTIONS = Dialect("socat", bundles=False, abbreviations=False, single_dash_long=True)
_SOCAT = Entry(
    ("socat", "socat1", "socat2"),
    _SOCAT_OPTIONS,
    (val("-lf", writes=True), val("-lp"), val("-b"), val("-t"), val("-T"), val("-d"),
     *(flag(f"-{c}") for c in "uUvxhgs46")),
    hooks=(_socat,),
    no_canonical=True,
)


def _socket(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for command in parsed.values("-p"):
        out.payloads.append((f"{argv[0]} -p command", command))


_SOCKET = Entry(("socket",), GNU, (val("-p"), val("-B"), *(flag(f"-{c}") for c in "bcfqrsvwl")),
                hooks=(_socket,), no_canonical=True)

# -- openssl ---------------------------------------------------------------------------

_LOADS = "loads an engine or provider (code) of its choosing"
#: Providers openssl ships: loading them by name loads no code of the caller's choosing.
_BUILTIN_PROVIDERS = frozenset({"default", "legacy", "fips", "base", "null"})
_OPENSSL_WRITES = frozenset({"-out", "-keyout", "-certout", "-sess_out", "-msgfile",
                             "-keylogfile", "-writerand", "-outdir", "-CAserial", "-rspout",
                             "-reqout", "-respout", "-signer_out", "-extracted"})  # fmt: skip
_OPENSSL_SERVES = frozenset({"-WWW", "-HTTP", "-www", "-rev"})


def _openssl(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """openssl's options are single-dash words; most take the next word."""
    del parsed
    name = argv[0]
    for i, word in enumerate(argv[1:], start=1):
        value = argv[i + 1] if i + 1 < len(argv) else ""
        option, eq, glued = word.partition("=")
        value = glued if eq else value
        if option in ("-engine", "-ssl_client_engine", "-keyform", "-inform", "-CAkeyform"):
            if option != "-engine" and value != "engine":
                continue
            out.finding(f"'{name} {option}' {_LOADS}")
        elif option in ("-provider", "-propquery") and value not in _BUILTIN_PROVIDERS:
            if option == "-provider":
                out.finding(f"'{name} -provider {value[:30]}' {_LOADS}")
        elif option == "-provider-path":
            out.finding(f"'{name} -provider-path' {_LOADS}")
        elif option in _OPENSSL_WRITES and value:
            out.writes.append(value)
        elif option in _OPENSSL_SERVES:
            out.finding(f"'{name} {option}' serves files of the working directory (an upload)")
        elif option == "-config" or option == "-conf":
            out.finding(f"'{name} {option}' reads a configuration (it can load engines)")


ENTRIES: tuple[Entry, ...] = (
    _NC,
    _SOCAT,
    _SOCKET,
    Entry(("openssl",), GNU, hooks=(_openssl,), no_canonical=True),
)
