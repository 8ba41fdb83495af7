"""Listening and serving for ``shellgate serve``: the address check, uvicorn, signals.

* ``[console] listen`` / ``--listen``: ``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT``
  (a bare port is 127.0.0.1; port 0 picks a free one). A non-loopback address is
  refused unless ``[console] allow_remote = true``; beyond loopback the session
  cookie is ``Secure``, so the console must be reached through a TLS proxy.
* SIGTERM and SIGINT stop it cleanly (open requests get a grace period, the
  stores' connections are closed); SIGHUP re-reads the tokens file (a bad one
  keeps the last good tokens and says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn

from shellgate.config import Config
from shellgate.console.app import build_app
from shellgate.console.core import Console
from shellgate.console.tokens import load_login_tokens
from shellgate.errors import ConfigError, ShellgateError
from shellgate.listen import Address, parse_address, url_of

logger = logging.getLogger("shellgate.console")

SHUTDOWN_GRACE_S = 5  # seconds open connections get after SIGTERM


def parse_listen(text: str) -> tuple[str, int]:
    """``[console] listen`` / ``--listen``: see :func:`shellgate.listen.parse_address`."""
    return parse_address(text, option="--listen", example_port=8470)


class ConsoleServer:
    """Reads the tokens file and checks the address at construction (ConfigError)."""

    def __init__(self, config: Config, *, tokens_file: Path, listen: str) -> None:
        self.config = config
        self.tokens_file = tokens_file.resolve()
        tokens = load_login_tokens(self.tokens_file)
        self.address = Address.resolve(*parse_listen(listen), option="--listen")
        loopback = self.address.loopback
        if not loopback and not config.console.allow_remote:
            raise ConfigError(
                f"--listen: {self.address.sockaddr[0]} is not a loopback address, and serving the "
                "console beyond this machine needs [console] allow_remote = true",
                hint="put a TLS proxy in front (the session cookie is Secure there), or reach "
                "127.0.0.1 through an SSH tunnel (docs/console.md)",
            )
        self.console = Console(config, tokens, secure=not loopback, loopback=loopback)
        self.app = build_app(self.console)

    def listen(self) -> socket.socket:
        return self.address.listen()

    def reload(self) -> None:
        """SIGHUP: re-read the tokens file; a bad one keeps the last good tokens."""
        try:
            self.console.tokens = load_login_tokens(self.tokens_file)
        except ShellgateError as exc:
            logger.error("SIGHUP: tokens not reloaded, the last good ones stay: %s", exc)
        else:
            logger.info("SIGHUP: %d console tokens loaded", len(self.console.tokens))

    async def serve(self, sock: socket.socket, announce: Callable[[str], None]) -> None:
        """Serve until SIGTERM or SIGINT; the stores are closed either way."""
        loop = asyncio.get_running_loop()
        server = _Uvicorn(
            uvicorn.Config(
                self.app,
                lifespan="off",
                log_config=None,  # shellgate's logging on stderr
                access_log=False,  # kept out: request lines are not the console's audit
                timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
                server_header=False,
            )
        )

        def stop(sig: signal.Signals) -> None:
            logger.info("%s: shutting down", sig.name)
            server.should_exit = True

        stops = (signal.SIGTERM, signal.SIGINT)
        try:
            for sig in stops:
                loop.add_signal_handler(sig, stop, sig)
            loop.add_signal_handler(signal.SIGHUP, self.reload)
            serving = asyncio.ensure_future(server.serve(sockets=[sock]))
            announce(url_of(sock.getsockname()))
            await serving
        finally:
            for sig in (*stops, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            self.console.close()
            sock.close()


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the console's handlers stop it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
