"""An example ReAct Sandbox plugin: a read-only tool that follows the Tool protocol."""

from __future__ import annotations


class Weather:
    name = "weather"
    description = "Today's weather for a city."
    input_hint = "city"
    read_only = True  # reads only: the router runs it without asking
    max_input = 100  # longer inputs are refused before run() sees them

    async def run(self, input: str) -> str:
        forecasts = {"paris": "18 °C, clear", "oslo": "4 °C, rain"}
        return forecasts.get(input.strip().lower(), f"No forecast for {input}.")
