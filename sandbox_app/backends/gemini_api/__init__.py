"""Google Gemini's own API kind (thought summaries, thought signatures)."""
