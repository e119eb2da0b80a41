"""What a backend kind is and which there are: the presets, the one key rule, BackendKind, each
kind's request fields.
"""
