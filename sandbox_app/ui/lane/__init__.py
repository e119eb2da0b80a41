"""A lane: the model panel, the run pane and its controls, stepping, the lane runner."""
