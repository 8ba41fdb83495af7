"""Database stores for fleets (docs/fleet.md): policy versions, the audit table and the
approval queue, in SQLite or PostgreSQL, all through the one seam in :mod:`.db`.

Importing this package imports no driver: psycopg loads only for a PostgreSQL URL.
"""
