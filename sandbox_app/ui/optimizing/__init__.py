"""Improve my prompt in the window: Improve prompt… (the optimizer driven, its progress, the
winner's diff and verdict, Accept) and Generate cases… (a model's proposed cases, ticked
into the test set editor); the models they offer (their buttons: ui/common)."""
