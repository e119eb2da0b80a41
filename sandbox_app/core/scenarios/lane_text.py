"""A lane written on one line with a server's URL, as ``eval --lane`` takes it and as the
titles ``eval`` gives its lanes read: ``URL:MODEL`` (an OpenAI-compatible server) or
``BACKEND:URL:MODEL`` (any kind with a URL). One reading for both: cli/lane_spec.py makes the
lane from it, core/comparing/arms.py names the lane by it ("MODEL (HOST)")."""

from __future__ import annotations

import re

# "http://localhost:11434/v1:qwen3:8b": the URL ends where its path meets the first colon.
_URL_LANE = re.compile(r"^(https?://[^/\s]+(?:/[^:\s]*)?):(.+)$")
# "anthropic:http://127.0.0.1:8123:claude-x": a backend id, then a URL whose port (digits)
# is told from the model that follows it, so the model may hold colons too.
_KIND_URL_LANE = re.compile(r"^([\w.-]+):(https?://[^/:\s]+(?::\d+)?(?:/[^:\s]*)?):(.+)$")


def url_lane(head: str) -> tuple[str, str, str] | None:
    """(the backend id, "" for none written; the URL; the model) of a lane written with a
    URL, else None."""
    kind_url = _KIND_URL_LANE.match(head)
    if kind_url is not None:
        backend, url, model = kind_url.groups()
        return backend, url, model
    url = _URL_LANE.match(head)
    if url is not None:
        return "", url[1], url[2]
    return None
