"""What every console page shares: the :class:`Console` (config, logins, sessions,
stores) and its templates.

The page modules (:mod:`.approvals`, :mod:`.audit_view`, :mod:`.login`,
:mod:`.metrics`, :mod:`.playground`, :mod:`.policies`) take a :class:`Console`
and give their routes; :mod:`.app` gathers those routes into the ASGI app.
This module imports neither, so the pages sit between the two.

Invariant: templates autoescape everything, and every value they print passes
:func:`inert` first: control characters (an ANSI escape, a carriage return) and
bidirectional overrides are shown as visible ``\\x1b``/``\\u202e`` escapes,
never obeyed by the browser or a terminal a person copies them to.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from shellgate.config import Config
from shellgate.console.auth import Sessions, Throttle, context, login_required
from shellgate.console.tokens import LoginTokens
from shellgate.store.db import Database

HERE = Path(__file__).parent

# C0 and C1 controls but tab and newline; bidirectional embeddings, overrides,
# isolates and marks; zero-width characters that hide text.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)


def inert(value: object) -> object:
    """A string with every control and bidi character spelled out as an escape."""
    if not isinstance(value, str) or isinstance(value, markupsafe.Markup):
        return value
    return _HIDDEN.sub(_spell, value)


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@dataclass
class Console:
    """Everything the pages share: the config, who may log in, sessions, stores."""

    config: Config
    tokens: LoginTokens
    secure: bool  # cookies Secure: served beyond loopback (behind TLS)
    loopback: bool
    sessions: Sessions = field(init=False)
    throttle: Throttle = field(default_factory=Throttle)
    templates: Jinja2Templates = field(init=False)
    _stores: dict[str, Database] = field(default_factory=dict)
    _stores_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.sessions = Sessions(self.config.console.session_ttl_ms / 1000)
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            finalize=inert,
            undefined=jinja2.StrictUndefined,
        )
        self.templates = Jinja2Templates(env=env)

    def database(self, url: str) -> Database:
        """One shared :class:`Database` per store URL (it connects on first use)."""
        with self._stores_lock:
            db = self._stores.get(url)
            if db is None:
                db = self._stores[url] = Database(url)
            return db

    def close(self) -> None:
        with self._stores_lock:
            for db in self._stores.values():
                db.close()
            self._stores.clear()

    def render(
        self, request: Request, name: str, status_code: int = 200, **values: Any
    ) -> Response:
        return self.templates.TemplateResponse(
            request, name, {**context(request), **values}, status_code=status_code
        )

    def page(self, handler: Callable[[Request], Awaitable[Response]]) -> Any:
        """``handler`` behind the login (and, for a POST, the CSRF and origin checks)."""
        return login_required(self.sessions, handler)
