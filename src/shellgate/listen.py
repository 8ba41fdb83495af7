"""Where shellgate's HTTP servers listen: ``shellgate mcp --http`` and ``shellgate serve``.

One reading of an address (``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT``; a bare
port is 127.0.0.1, port 0 picks a free one), one resolution, one loopback test
and one way to open the listening socket, with errors that name the option the
address came from (``--http``, ``--listen``).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any

from shellgate.errors import ConfigError, ShellgateError

LOOPBACK = "127.0.0.1"


def parse_address(text: str, *, option: str, example_port: int) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT`` -> (host, port); a bare port is loopback."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = LOOPBACK, text
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ConfigError(
            f"{option} {text}: an IPv6 address needs brackets",
            hint=f"for example {option} '[::1]:{example_port}'",
        )
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"{option} {text}: expected PORT or HOST:PORT (a port from 0 to 65535)",
            hint=f"for example {option} {example_port} or {option} {LOOPBACK}:{example_port} "
            "(0 picks a free port)",
        )
    return host, int(port)


@dataclass(frozen=True)
class Address:
    """A resolved address to listen on."""

    family: socket.AddressFamily
    sockaddr: Any
    option: str  # the option it came from, for errors
    path: str = "/"  # the endpoint's path, for its URL

    @classmethod
    def resolve(cls, host: str, port: int, *, option: str, path: str = "/") -> Address:
        try:
            found = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
        except OSError as exc:
            raise ConfigError(
                f"{option}: cannot resolve {host!r}: {exc.strerror or exc}"
            ) from exc
        family, _type, _proto, _name, sockaddr = found[0]
        return cls(family, sockaddr, option, path)

    @property
    def loopback(self) -> bool:
        return is_loopback(self.sockaddr[0])

    def url(self) -> str:
        return url_of(self.sockaddr, self.path)

    def listen(self) -> socket.socket:
        """The listening socket (ShellgateError naming the address if it cannot be bound)."""
        sock = socket.socket(self.family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(self.sockaddr)
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise ShellgateError(
                f"{self.option}: cannot listen on {self.url()}: {exc.strerror}"
            ) from exc
        sock.set_inheritable(False)
        return sock


def is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback


def url_of(sockaddr: Any, path: str = "/") -> str:
    host, port = sockaddr[0], sockaddr[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
