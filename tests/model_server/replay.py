"""Replay mode: a recorded stream file served byte for byte, whatever the request asked.

A stream file in tests/data/streams/ names its source: a ``.sse`` file in ``#`` lines above
the marker line ``# ---- the stream, byte for byte, from the next line ----``, a file with no
room for a header (``.jsonl``) in the ``.md`` beside it. :meth:`Recording.load` refuses a
file whose source is not named, so every stream a test replays says where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

STREAMS = Path(__file__).resolve().parent.parent / "data" / "streams"
MARKER = b"# ---- the stream, byte for byte, from the next line ----\n"
CONTENT_TYPES = {".sse": "text/event-stream", ".jsonl": "application/x-ndjson"}


def stream_bytes(path: Path) -> bytes:
    """The recorded stream of ``path``: below its marker line, or all of a file whose
    ``.md`` names the source. ValueError for a file that names no source."""
    data = path.read_bytes()
    if MARKER in data:
        return data.split(MARKER, 1)[1]
    if path.with_name(path.name + ".md").is_file():
        return data
    raise ValueError(f"{path.name} names no source (no marker line and no {path.name}.md)")


@dataclass(frozen=True)
class Recording:
    """What replay answers: the bytes in ``pieces`` written one write each (cut where a
    network read may cut them), with this status and content type."""

    pieces: tuple[bytes, ...]
    status: int = 200
    content_type: str = "text/event-stream"

    @classmethod
    def load(cls, path: Path, cut: int | None = None, status: int = 200) -> Recording:
        """``path``'s stream; ``cut``: written ``cut`` bytes a write (None: in one)."""
        data = stream_bytes(path)
        size = cut or max(len(data), 1)
        pieces = tuple(data[at : at + size] for at in range(0, len(data), size))
        return cls(pieces, status, CONTENT_TYPES.get(path.suffix, "text/event-stream"))

    @classmethod
    def of(
        cls, *pieces: bytes, status: int = 200, content_type: str = "text/event-stream"
    ) -> Recording:
        """Bytes a test writes itself (a broken or hostile answer)."""
        return cls(pieces, status, content_type)

    async def serve(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            status=self.status, headers={"Content-Type": self.content_type}
        )
        await response.prepare(request)
        for piece in self.pieces:
            await response.write(piece)
        await response.write_eof()
        return response
