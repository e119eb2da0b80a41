"""What a model costs: the price per million tokens the user entered, as the window stores it
(and as ``eval --prices`` reads it from a file).

Its own module, apart from the comparison (compare.py), because the window reads the stored
table when it opens and the comparison's rows are not on its first frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sandbox_app.core.untrusted.file_reader import ReadError, check, parse_json_text, read_json


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


def stored_prices(value: object) -> dict[str, Price]:
    """The price table as the window stores it (JSON: model → [input, output]); anything
    malformed is dropped, never guessed."""
    try:
        data = parse_json_text(value, "the saved prices")
        table = check(data, dict[str, tuple[float, ...]], "prices")
    except ReadError:
        return {}
    return {
        model: Price(*pair) for model, pair in table.items() if len(pair) == 2 and min(pair) >= 0
    }


PRICES_LIMIT = 1 << 20  # a price table is a few lines; a megabyte is a wrong file


def read_prices(path: str | Path) -> dict[str, Price]:
    """A price table file (``eval --prices``), in the shape the window stores it: JSON, model →
    [input, output] dollars per million tokens. Unlike a saved setting, a file the user names
    is not silently trimmed: an entry that is not two numbers of at least 0 is an error."""
    name = Path(path).name
    table = check(read_json(path, PRICES_LIMIT, "a price table"), dict[str, list[float]], name)
    for model, pair in table.items():
        if len(pair) != 2 or not all(math.isfinite(x) and x >= 0 for x in pair):
            raise ReadError(
                f"{name}: the price of {model!r} must be [input, output] dollars per "
                "million tokens, each at least 0"
            )
    return {model: Price(*pair) for model, pair in table.items()}
