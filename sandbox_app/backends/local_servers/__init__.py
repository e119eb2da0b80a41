"""A local server's health check: what it serves and how to fix what is missing."""
