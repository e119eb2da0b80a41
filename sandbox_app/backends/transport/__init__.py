"""How requests travel and replies come back, for every kind: the HTTP library, the network loop,
the SDK backend base, server text made safe, errors in one line, SSE decoding, reasoning
passback, the response cache.
"""
