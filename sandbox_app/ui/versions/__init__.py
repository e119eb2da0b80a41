"""Prompt versions in the window: the Versions tab beside the template (a row per version ×
model), the diff of two versions, and giving a version back to the editor."""
