"""The trace view: blocks, highlighting, thinking regions; the trace diff of two runs."""
