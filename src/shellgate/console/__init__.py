"""The web console behind ``shellgate serve`` (docs/console.md).

Server-rendered pages (starlette + jinja2 under uvicorn) over the fleet's
stores: pending approvals, the audit trail, the policy sets and a playground
that explains a decision without running anything. :mod:`.core` holds what
every page shares (the :class:`~.core.Console`, its templates), :mod:`.app`
builds the ASGI app from the pages' routes, :mod:`.auth` owns logins, sessions
and CSRF, :mod:`.tokens` reads the admins' tokens file, :mod:`.server` listens
and serves; one module per page group (:mod:`.approvals`, :mod:`.audit_view`, :mod:`.policies`,
:mod:`.playground`, :mod:`.metrics`).

Nothing here is imported by other commands: starlette and jinja2 load only
when ``shellgate serve`` starts.
"""
