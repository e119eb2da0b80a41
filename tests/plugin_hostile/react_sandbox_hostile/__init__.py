"""Badly behaved ReAct Sandbox plugins (test fixtures)."""
