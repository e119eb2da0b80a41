"""Ollama's native API kind (num_ctx, think, keep_alive, pulls)."""
