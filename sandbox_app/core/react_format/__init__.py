"""The ReAct text format: dialects, parsing, the fabricated-observation cut, thinking apart, native
tool calls."""
