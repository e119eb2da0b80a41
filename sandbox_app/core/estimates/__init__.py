"""Estimates with their uncertainty: the intervals every pass rate the app shows is given."""
