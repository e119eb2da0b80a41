"""The one test server: every backend kind's API, real HTTP on 127.0.0.1 (server.py).

One script model for all kinds (script.py); each kind's module is its wire encoding (chat.py
and chat_stream.py, ollama.py, …) and the local servers' health routes are local.py; replay.py
serves a recorded stream from tests/data/streams/ byte for byte.
"""

from tests.model_server.chat import OPENAI_REASONING_REJECTS, UnsupportedParam
from tests.model_server.local import LocalModel
from tests.model_server.script import ModelScript, split_every, tokenize
from tests.model_server.server import ModelServer, fake_server

__all__ = [
    "OPENAI_REASONING_REJECTS",
    "LocalModel",
    "ModelScript",
    "ModelServer",
    "UnsupportedParam",
    "fake_server",
    "split_every",
    "tokenize",
]
