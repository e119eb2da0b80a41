"""Real local HTTP servers that are not an OpenAI-compatible API, for the "wrong base URL" tests.

Both run the standard library's ``ThreadingHTTPServer`` on 127.0.0.1, on a free port, in a
daemon thread, and are shut down when the ``with`` block ends:

- :func:`page_handler`: a web UI's address. Every GET and POST gets the same page, 200
  ``text/html`` unless told otherwise (another status or content type).
- :func:`static_files_handler`: ``python -m http.server``, the real
  ``SimpleHTTPRequestHandler`` serving a directory: POST answers 501, GET /v1/models 404,
  both with an HTML error page.

    with serving(page_handler()) as base_url:  # "http://127.0.0.1:PORT/v1"
        ...
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["PAGE", "page_handler", "serving", "static_files_handler"]

PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chat UI</title></head>
<body><div id="app">Loading the chat...</div><script src="/assets/app.js"></script></body>
</html>
"""

Handler = Callable[..., BaseHTTPRequestHandler]


def page_handler(
    status: int = 200, content_type: str = "text/html; charset=utf-8", body: bytes = PAGE
) -> type[BaseHTTPRequestHandler]:
    """A handler answering every GET and POST with ``status``, ``content_type`` and ``body``."""

    class PageHandler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            # Read the request body first: closing with unread bytes would reset the connection.
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output (and the CLI tests' captured stderr) clean

    return PageHandler


class _QuietStaticFiles(SimpleHTTPRequestHandler):
    """``python -m http.server`` as it is, without its access log on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def static_files_handler(directory: Path) -> Handler:
    return functools.partial(_QuietStaticFiles, directory=str(directory))


@contextmanager
def serving(handler: Handler) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 in a thread; yield the base URL an SDK would be given."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        # shutdown() returns once serve_forever has seen the request (≤ poll_interval), but
        # waits without a deadline: ask from a helper thread and give it one.
        stopper = threading.Thread(target=server.shutdown, daemon=True)
        stopper.start()
        stopper.join(timeout=5)
        server.server_close()
        thread.join(timeout=5)
        assert not stopper.is_alive(), "the test HTTP server ignored shutdown() for 5 s"
        assert not thread.is_alive(), "the test HTTP server's thread still runs 5 s after close"
