"""Did my edit make it better: arms paired by identity, cases counted k/N, the difference
with its paired interval and a verdict word. Reads core/results' typed results, never the
history database itself (core/history/history_db.py counts for it)."""
