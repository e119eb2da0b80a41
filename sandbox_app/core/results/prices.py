"""What a model costs: the price per million tokens the user entered, as the window stores it.

Its own module, apart from the comparison (compare.py), because the window reads the stored
table when it opens and the comparison's rows are not on its first frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_app.core.untrusted.file_reader import ReadError, check, parse_setting


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
        data = parse_setting(value, "the saved prices")
        table = check(data, dict[str, tuple[float, ...]], "prices")
    except ReadError:
        return {}
    return {
        model: Price(*pair) for model, pair in table.items() if len(pair) == 2 and min(pair) >= 0
    }
