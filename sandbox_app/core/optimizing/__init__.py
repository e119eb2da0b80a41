"""Improve my prompt: the optimizer's pure part — the train/held-out split, what a candidate
must keep, what the reflection model is shown and how its reply is read, the Pareto front of
candidates, the budget and the outcome. Reads core/comparing's verdict; the driving (runs,
the reflection model, the history) is application/optimizer.py's."""
