"""Each server backend's base URL and model as a model panel last showed them, so switching
to another backend and back forgets neither (for the session; the Run tab's in its settings)."""

from __future__ import annotations

import json

from sandbox_app.backends.registry import SCRIPTED
from sandbox_app.core.untrusted.file_reader import ReadError, check, parse_json_text


class ServerMemory:
    def __init__(self) -> None:
        self.table: dict[str, tuple[str, str]] = {}  # backend id → (base URL, model)
        self._kind: str | None = None  # the backend the panel shows

    def switch(self, kind: str, url: str, model: str) -> tuple[str, str]:
        """The panel goes from the backend it showed (with ``url`` and ``model``) to ``kind``:
        ``kind``'s URL and model as last shown ("" for none)."""
        if self._kind is not None and self._kind != SCRIPTED:
            self.table[self._kind] = (url.strip(), model.strip())
        self._kind = kind
        return self.table.get(kind, ("", ""))

    def to_setting(self) -> str:
        return json.dumps(self.table)

    def load_setting(self, value: object) -> None:
        """The stored table; anything malformed is dropped, never guessed."""
        try:
            stored = check(
                parse_json_text(value, "the remembered servers"), dict[str, list[str]], ""
            )
        except ReadError:
            return
        self.table.update({kind: (v[0], v[1]) for kind, v in stored.items() if len(v) == 2})
