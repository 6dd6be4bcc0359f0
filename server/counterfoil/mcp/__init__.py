"""Tools from MCP servers the person configured, passed through the gate like any effect: the
servers (`servers.py`), their tool definitions and the pins that approve them (`definitions.py`,
`pins.py`), how a stdio server is started confined (`launch.py`), the one connection that speaks
the protocol with the `mcp` SDK (`connection.py`, the only module that imports it, lazily), and
the run's set of servers and offered tools (`toolbox.py`)."""
