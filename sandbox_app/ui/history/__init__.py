"""The history of runs in the window: the database it writes to, past evaluations, regressions."""
