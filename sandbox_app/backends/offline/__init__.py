"""The built-in offline model: the scenario's written replies."""
