"""Approval in the daemon: each effect, MCP call and MCP definition asked as a blocking
`counterfoil/confirm` request, with the preview the editor shows."""
