"""The MCP door: ``shellgate mcp`` over stdio and Streamable HTTP.

* :mod:`shellgate.mcp.server` — the request handlers both transports share, and
  the stdio server (one gate per process);
* :mod:`shellgate.mcp.ask` — how ``ask`` reaches the person: an elicitation on
  the legacy protocol, ``input_required`` with a sealed request state on the
  modern one;
* :mod:`shellgate.mcp.wire` — the stdio wire, read strictly (only UTF-8 JSON-RPC
  lines reach the SDK);
* :mod:`shellgate.mcp.http` — the Streamable HTTP transport, one gate per
  bearer token's principal;
* :mod:`shellgate.mcp.tokens` — the bearer tokens file and its principals.

Importing this package imports nothing else: the SDK (the top-level ``mcp``
package, which this one does not shadow: every import here is absolute) is
loaded by the modules above. The old flat paths (``shellgate.mcp_server``,
``shellgate.mcp_ask``, ``shellgate.mcp_wire``, ``shellgate.mcp_http``,
``shellgate.mcp_tokens``) still import, with a :class:`DeprecationWarning`.
"""
