"""OpenTelemetry without the SDK: a run record as GenAI-convention / OpenInference spans planned
(attributes, messages, content), and OTLP files read back into runs. The SDK itself is
application/otel_export.py's.
"""
