"""The context window a local server serves a run, asked as the window asks it.

The window checks a local server unasked (ui/lane/health_line.py) and its runs' context meter
measures each prompt against the window that check found (``RunSpec.served_context``);
``react-sandbox run`` asks the same check (health.py: Ollama's ``/api/ps``, LM Studio's
``/api/v0/models``, llama.cpp's ``/props``, vLLM's ``max_model_len``) before its run, so its
step headers show the same fill. Only a server one runs oneself is asked: a provider's API
has no such endpoint, and a request to it would only cost time.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from sandbox_app.backends.catalogue.kinds import BackendConfig


def is_local(url: str) -> bool:
    """On this machine or a private network: a server one runs oneself (Ollama, LM Studio…)."""
    host = urlsplit(url.strip()).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


async def served_context(config: BackendConfig) -> int | None:
    """The context window ``config``'s local server serves its model now; None when it is no
    local server, says nothing, or cannot be asked (the run then says what went wrong)."""
    if not (config.kind.server and config.url and is_local(config.url)):
        return None
    from sandbox_app.backends.local_servers.health import check_run  # the HTTP library now

    return (await check_run(config, None)).served_context
