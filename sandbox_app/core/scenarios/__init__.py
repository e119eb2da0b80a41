"""The scenario: its types, lane settings, file format, test set, the workspace and document being
edited."""
