"""MCP servers' tools, through the official SDK."""
