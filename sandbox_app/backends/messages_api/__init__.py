"""Anthropic's Messages API kind (extended thinking, signed thinking blocks, cache figures)."""
