"""Where a network client sends data, and which local files its URLs name.

Shared by the network clients' entries (curl, wget, the long tail): a request
that carries data (a form, a body, a file) to a host that is not this machine
is an upload, a finding; a ``file:`` URL is a read of a local file, which the
protected-reads layer finds in the word (``curl file:///root/.ssh/id_rsa``);
the ``file://~/…`` spelling, whose host it does not read as the home, is a
mention of the home's file. Schemes that carry
whatever the URL says (``gopher://host/_DATA``, ``dict:``, ``telnet:``) send it.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from shellgate.shell.catalog.entry import Reading

#: Hosts that are this machine: data sent there stays on it.
_LOOPBACK = re.compile(r"localhost|127(?:\.\d+){3}|\[?::1\]?|0\.0\.0\.0|\[::\]")
_SCHEME = re.compile(r"([A-Za-z][\w+.-]*)://([^/?#]*)(.*)", re.DOTALL)
#: Schemes that send what the URL (or the data) holds to a host of its choosing.
_SENDING = frozenset({"gopher", "gophers", "dict", "telnet", "smtp", "smtps", "tftp", "ldap",
                      "ldaps", "mqtt", "rtsp", "imap", "imaps", "pop3", "pop3s", "scp",
                      "sftp", "smb", "smbs", "ws", "wss"})  # fmt: skip


def host_of(url: str) -> str:
    """The host a URL (or a bare ``host[:port]/path``) names, lower case."""
    match = _SCHEME.match(url)
    authority = match.group(2) if match is not None else url.split("/", 1)[0]
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.split(":", 1)[0].lower()


def is_loopback(url: str) -> bool:
    return _LOOPBACK.fullmatch(host_of(url)) is not None


def read_urls(name: str, urls: list[str], out: Reading, *, sends_data: bool) -> None:
    """``file:`` URLs are mentions; data sent, or a sending scheme, to a host that
    is not this machine is an upload."""
    for url in urls:
        match = _SCHEME.match(url)
        scheme = match.group(1).lower() if match is not None else ""
        if scheme == "file" and match is not None:
            # file:///PATH and file://localhost/PATH are read by the protected-reads
            # layer from the word itself; file://~/x names the home's x to no one else.
            host = match.group(2)
            if host.startswith("~"):
                out.mentions.append(host + unquote(match.group(3)))
            continue
        if is_loopback(url):
            continue
        if scheme in _SENDING:
            out.finding(f"'{name}' sends data to '{host_of(url)[:40]}' over {scheme}: (an upload)")
        elif sends_data:
            out.finding(f"'{name}' sends data to '{host_of(url)[:40]}' (an upload)")
