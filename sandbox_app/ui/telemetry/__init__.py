"""OpenTelemetry in the window: File → Export as OpenTelemetry and live mode (where spans go, the
collector's settings).
"""
