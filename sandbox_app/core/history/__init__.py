"""The history database: every evaluation's results and every single run in one SQLite file, its
schema and migrations, and what a comparison reads of it (per-case counts, baselines).
"""
