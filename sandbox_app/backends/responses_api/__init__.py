"""OpenAI's Responses API kind (reasoning items kept across turns)."""
