"""The tools: toggles and policies, your own tools, MCP servers, approval dialogs."""
