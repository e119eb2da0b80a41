"""A run: the backend protocol, the engine, its events, records and recordings, stepping, forks,
metrics."""
