"""The person's MCP servers for a daemon run: started when the run first needs them."""
