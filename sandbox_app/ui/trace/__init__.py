"""The trace view: blocks, highlighting, thinking regions."""
